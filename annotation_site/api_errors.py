"""The one error shape of the REST APIs (factuality, DA, metrics and the rest of /api/).

Every 4xx answer is a JSON object with at least

    {"error": "<machine-readable code>", "detail": "<one readable sentence>"}

``error`` is ``invalid`` (400, validation), ``not_authenticated`` / ``authentication_failed`` (401),
``permission_denied`` (403), ``not_found`` (404), ``conflict`` (409) or an endpoint's own more precise code (the DA
worker API's ``already_judged``, ``out_of_order``...). Validation errors carry the per-field messages under
``fields`` (``{"name": ["This field is required."]}``). Endpoints add their own keys beside these (``problems``
of an import, ``state`` of an assignment, ``suggestions`` of a refused campaign layout); the keys clients read
before this shape existed stay where they were (a validation error still has its field names at the top level
as well).

Two pieces make it hold everywhere: ``error_handler`` (DRF's EXCEPTION_HANDLER) shapes raised exceptions (among
them an uploaded file refused whole, ``uploads.UploadRefused``, and a file with problems, ``problems.FormatError``:
400 with every problem under ``problems`` and nothing imported, so an import endpoint just lets them rise), and
``ErrorShapeJSONRenderer`` (the default renderer) completes bodies that views return themselves, so no endpoint
can answer an error in another shape. ``ErrorSerializer`` documents it in the OpenAPI schema
(``annotation_site.api_schema``). A project-level helper below every app, like ``links.py`` and ``problems.py``.
"""

from typing import Any

from rest_framework import exceptions, serializers, status
from rest_framework.exceptions import APIException
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from .problems import FormatError
from .uploads import UploadRefused

CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


class Conflict(APIException):
    """409: the request is valid but the state of the data refuses it (a name taken, human work in the way)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "the request conflicts with the current state of the data"
    default_code = "conflict"


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer of the API (docs: annotation_site/api_errors.py)."""

    error = serializers.CharField(
        help_text="Machine-readable code: invalid, not_authenticated, permission_denied, "
        "not_found, conflict, throttled, or an endpoint's own."
    )
    detail = serializers.CharField(help_text="One readable sentence saying what went wrong.")
    # a declared field named "fields" (DRF pops declared fields off the class; Serializer.fields stays intact)
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation errors: the messages of each field.",
    )


def _text(value):
    """One readable string from DRF's nested error details (strings, lists, dicts)."""
    if isinstance(value, dict):
        return "; ".join(
            f"{key}: {_text(item)}" if key != "non_field_errors" else _text(item) for key, item in value.items()
        )
    if isinstance(value, (list, tuple)):
        return " ".join(_text(item) for item in value)
    return str(value)


def _default_code(status_code):
    return CODES.get(status_code, "error" if status_code < 500 else "server_error")


def shape(status_code, data):
    """``data`` (whatever a view or DRF made) in the error shape: ``error`` and ``detail`` filled in, every other
    key kept. Bodies already in the shape come back unchanged."""
    if not isinstance(data, dict):
        return {"error": _default_code(status_code), "detail": _text(data), "fields": {"non_field_errors": data}}
    body = dict(data)
    if not isinstance(body.get("error"), str):
        body["error"] = _default_code(status_code)
    detail = body.get("detail")
    if isinstance(detail, dict):  # a view put serializer errors under "detail"
        body.setdefault("fields", detail)
        body["detail"] = _text(detail)
    elif isinstance(detail, (list, tuple)):
        body["detail"] = _text(detail)
    elif detail is None:
        rest = {k: v for k, v in data.items() if k != "error"}
        problems = rest.get("problems")
        if problems:
            first = problems[0].get("message", problems[0]) if isinstance(problems[0], dict) else problems[0]
            body["detail"] = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}: {first}"
        else:
            body["detail"] = _text(rest) or "the request was refused"
    else:
        body["detail"] = str(detail)
    return body


def refused_file(exc):
    """The 400 body of a file refused whole (UploadRefused) or with problems (FormatError): nothing was imported."""
    if isinstance(exc, UploadRefused):
        return exc.as_json()
    return {"detail": "invalid file, nothing was imported", "problems": [str(p) for p in exc.problems]}


def error_handler(exc, context):
    """DRF's exception handler, answering in the one error shape (see the module docstring)."""
    if isinstance(exc, (UploadRefused, FormatError)):
        set_rollback()
        return Response(shape(400, refused_file(exc)), status=400)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        body: dict[str, Any] = {key: value for key, value in fields.items() if key not in ("error", "detail", "fields")}
        body.update(error="invalid", detail=_text(fields), fields=fields)
    else:
        detail = getattr(exc, "detail", response.data)
        code = (
            getattr(detail, "code", None) or getattr(exc, "default_code", None) or _default_code(response.status_code)
        )
        body = {"error": code, "detail": _text(detail)}
    response.data = body
    return response


class ErrorShapeJSONRenderer(JSONRenderer):
    """JSON, with every 4xx body completed to the error shape (views that build their error Response)."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and 400 <= response.status_code < 500 and data is not None:
            data = shape(response.status_code, data)
        return super().render(data, accepted_media_type, renderer_context)
