"""The researcher endpoints every protocol's REST API shares, written once (DRF): the body of a refused change,
the invitations of a created unit, inviting a list of user names, the progress of a unit, and the answer to an
invalid file. Each protocol's ``api.py`` keeps its serializers and its own endpoints and calls these."""

from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView


def validation_errors(exc):
    """The body of a refused change: the ValidationError's fields, or ``{"detail": [messages]}``."""
    return exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}


def invitation_links(request, invited):
    """``{username: one-time link}`` of the invitations that need one (new or never activated accounts)."""
    return {i.annotator.user.get_username(): request.build_absolute_uri(i.link_path) for i in invited if i.needs_link}


def invite_usernames(request, invite):
    """``POST {"usernames": [...]}``: ``invite(username)`` each; ``{"invited": {username: link or None}}``, or
    400 (the list is not a non-empty list of names, or an invitation was refused)."""
    names = request.data.get("usernames")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return Response({"usernames": "a non-empty list of user names"}, status=400)
    result = {}
    try:
        for username in names:
            invited = invite(username)
            result[username] = request.build_absolute_uri(invited.link_path) if invited.needs_link else None
    except ValidationError as exc:
        return Response(validation_errors(exc), status=400)
    return Response({"invited": result})


def create_and_invite(request, usernames, *, create, invite, serialize):
    """``POST`` of a new unit: ``create()`` it, ``invite(unit, username)`` each of ``usernames``; 201 with the
    unit (``serialize(unit)``) and ``invitations`` (the one-time links to send), or 400 with the refused fields."""
    try:
        unit = create()
        invited = [invite(unit, name) for name in usernames]
    except ValidationError as exc:
        return Response(validation_errors(exc), status=400)
    body = serialize(unit)
    body["invitations"] = invitation_links(request, invited)
    return Response(body, status=201)


class InviteView(APIView):
    # POST {"usernames": [...]} to a unit: subclasses say how to find the unit and invite one user name. (No
    # docstring: the schema would show it as the endpoint's description.)

    def unit(self, name):
        raise NotImplementedError

    def invite(self, unit, username):
        raise NotImplementedError

    @extend_schema(
        request={
            "application/json": {
                "type": "object",
                "properties": {"usernames": {"type": "array", "items": {"type": "string"}}},
            }
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request, name):
        unit = self.unit(name)
        return invite_usernames(request, lambda username: self.invite(unit, username))


def apply_changes(unit, values, *, update, set_status, body):
    """A PATCH of a unit: ``update(**values)`` (what the serializer validated, but ``status``), then the status;
    ``body()`` on success, 400 with the refused fields otherwise."""
    status_value = values.pop("status", None)
    try:
        update(**values)
        if status_value:
            set_status(unit, status_value)
    except ValidationError as exc:
        return Response(validation_errors(exc), status=400)
    return Response(body())


def with_progress(body, progress):
    """A unit's detail body with its progress counts and one row per annotator."""
    body["progress"] = {k: v for k, v in progress.items() if k != "annotators"}
    body["annotators"] = [
        {
            "annotator": row["annotator"].name,
            "assigned": row["assigned"],
            "submitted": row["submitted"],
            "median_seconds": row["median_seconds"],
        }
        for row in progress["annotators"]
    ]
    return body


def format_problems(exc):
    """400 for a file with problems (a FormatError): nothing was imported, every problem listed."""
    return Response(
        {"detail": "invalid file, nothing was imported", "problems": [str(p) for p in exc.problems]}, status=400
    )
