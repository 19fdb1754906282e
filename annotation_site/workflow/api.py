"""The endpoints every protocol's REST API shares, written once (DRF): the body of a refused change, the
invitations of a created unit, inviting a list of user names, the progress of a unit, the answer to an invalid
file, and a participant's draft / submit of an assignment. Each protocol's ``api.py`` keeps its serializers and
its own endpoints and calls these."""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .answers import AnswerInvalid, NeedsConfirmation, SubmissionConflict, draft_version

logger = logging.getLogger(__name__)


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


def create_and_invite(request, form, datasets, *, create, invite, serialize):
    """``POST`` of a new unit: ``form`` (the protocol's create serializer) validates the body (DRF's 400), the
    ``dataset`` it names is looked up in ``datasets`` (404), ``create(dataset, values)`` makes the unit from the
    other values and ``invite(unit, username)`` invites each of its ``annotators``; 201 with the unit
    (``serialize(unit)``) and ``invitations`` (the one-time links to send), or 400 with the refused fields."""
    data = form(data=request.data)
    data.is_valid(raise_exception=True)
    values = dict(data.validated_data)
    dataset = get_object_or_404(datasets, name=values.pop("dataset"))
    usernames = values.pop("annotators")
    try:
        with transaction.atomic():  # a refused user name leaves no unit and no account behind
            unit = create(dataset, values)
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
    """A PATCH of a unit: ``update(**values)`` (what the serializer validated, but ``status``), then the status,
    in one transaction; ``body()`` on success, 400 with the refused fields otherwise, and nothing changed."""
    status_value = values.pop("status", None)
    try:
        with transaction.atomic():  # a refused status or field undoes the changes made before it
            update(**values)
            if status_value:
                set_status(unit, status_value)
    except ValidationError as exc:
        unit.refresh_from_db()
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


@dataclass(frozen=True)
class AnswerService:
    """What a protocol's draft / submit endpoints call: ``save_draft(assignment, data)`` (the time it was
    saved), ``submit(assignment, data, **fields)`` (a result with ``submission`` and ``created``; ``data`` is
    the request's body, ``fields`` the ones every protocol takes), ``closed`` (its unit-closed exception: 409)
    and ``stale`` (its stale-draft exception, when it has one: 409 with ``stale``)."""

    save_draft: Callable
    submit: Callable
    closed: type[Exception]
    stale: type[Exception] | None = None


def _problems(exc):
    return [p.as_dict() for p in exc.problems]


def draft_response(service, assignment, data):
    """``PUT`` of a draft: 200 ``{"saved_at"}`` (the draft's version, ``answers.draft_version``), 409 ``{"detail"}`` when the unit is closed (with ``"stale"``
    when the protocol refuses stale drafts), 400 ``{"problems"}`` when it is not a draft."""
    refused = (service.closed,) if service.stale is None else (service.closed, service.stale)
    try:
        saved = service.save_draft(assignment, data)
    except refused as exc:
        body = {"detail": str(exc)}
        if service.stale is not None:
            body["stale"] = isinstance(exc, service.stale)
        return Response(body, status=409)
    except AnswerInvalid as exc:
        return Response({"problems": _problems(exc)}, status=400)
    return Response({"saved_at": draft_version(saved)})


def next_after_submit(next_page):
    """The page after a stored submission, or None: ``next_page()`` hands out the annotator's next assignment
    the way the page's next form would (the start / next view's own function: their open assignment again,
    else a newly claimed unit) and names the page to open. Called once the submission's transaction has
    committed (requests are not atomic), so nothing it does can undo the stored answer; any error is logged and
    answered with None: the page then posts its next form as it did before answers carried ``next``."""
    try:
        return next_page()
    except Exception:
        logger.exception("handing out the next assignment after a submit failed; the page will ask again")
        return None


def submit_response(service, assignment, data, *, next_page=None):
    """``POST`` of an answer: 201 (stored) or 200 (a retry of a stored one) with the submission, 400 with the
    problems, 409 (needs confirmation, the unit is closed, or the UUID belongs to another assignment).

    When the body asks for it (``"next": true``, sent by the annotation pages whose next form hands out the
    next assignment) and the endpoint can (``next_page``: a callable naming the page after this one, handing
    out its assignment), a stored answer also carries ``next``, the path of the page to open: one round trip
    instead of submit, hand-out and page (``next_after_submit``). Without it, or when the hand-out fails, the
    answer has no ``next`` and the page posts its next form. A retry answers the same ``next`` (the hand-out
    returns the open assignment it made)."""
    data = data if isinstance(data, dict) else {}
    try:
        result = service.submit(
            assignment,
            data,
            client_uuid=data.get("submission_uuid"),
            confirm=bool(data.get("confirm")),
            time_spent=data.get("time_spent", 0),
            video_played=data.get("video_played"),
        )
    except AnswerInvalid as exc:
        return Response({"detail": "the answer is not valid", "problems": _problems(exc)}, status=400)
    except NeedsConfirmation as exc:
        return Response(
            {"detail": "please confirm", "needs_confirmation": True, "problems": _problems(exc)}, status=409
        )
    except (service.closed, SubmissionConflict) as exc:
        return Response({"detail": str(exc)}, status=409)
    submission = result.submission
    body = {
        "submission_uuid": str(submission.client_uuid),
        "stored_at": submission.created_at.isoformat(),
        "current": submission.is_current,
        "confirmed_incomplete": submission.confirmed_incomplete,
        "created": result.created,
    }
    if next_page is not None and data.get("next") is True:
        following = next_after_submit(next_page)
        if following:
            body["next"] = following
    return Response(body, status=201 if result.created else 200)


class SubmitRequestSerializer(serializers.Serializer):
    # What the schema says of a submit's body (the protocol's service reads and checks it).
    submission_uuid = serializers.UUIDField(help_text="Made by the client once per answer: a retry stores nothing new.")
    answer = serializers.JSONField(help_text="The protocol's answer (docs/factuality.md, docs/tasks.md).")
    confirm = serializers.BooleanField(required=False, help_text="Submit an answer with only soft problems anyway.")
    time_spent = serializers.FloatField(required=False, help_text="Seconds on the page.")
    video_played = serializers.BooleanField(required=False)
    next = serializers.BooleanField(
        required=False,
        help_text="Hand out the next assignment once the answer is stored and answer its page in ``next`` (what "
        "the page's next form would do; the crowd signed-link factuality endpoint ignores it).",
    )


class SubmittedSerializer(serializers.Serializer):
    # A stored answer (201) or the stored one a retry names (200).
    submission_uuid = serializers.UUIDField()
    stored_at = serializers.DateTimeField()
    current = serializers.BooleanField(help_text="Whether this answer is the assignment's current one.")
    confirmed_incomplete = serializers.BooleanField()
    created = serializers.BooleanField(help_text="False for a retry of a stored answer.")
    next = serializers.CharField(
        required=False,
        help_text="With ``next: true``: the path of the page to open next (the next assignment's annotation page, "
        "or the page saying nothing is left / the participant's end). Absent when the hand-out was not asked "
        "for or failed: then post to the start / next address as before.",
    )


draft_schema = extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
submit_schema = extend_schema(
    request=SubmitRequestSerializer,
    responses={201: SubmittedSerializer, 200: SubmittedSerializer, 400: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT},
)


class _ParticipantEndpoint(APIView):
    # A participant's endpoint on one assignment: subclasses set ``answers`` (an AnswerService) and say how to
    # find the assignment (``assignment(request, pk)``). (No docstrings here: the schema would show them.)

    answers: AnswerService

    def assignment(self, request, pk):
        raise NotImplementedError


class DraftView(_ParticipantEndpoint):
    # PUT a participant's draft of an assignment.

    @draft_schema
    def put(self, request, pk):
        return draft_response(self.answers, self.assignment(request, pk), request.data)


class SubmitView(_ParticipantEndpoint):
    # POST a participant's answer to an assignment. Subclasses whose page hands out the next assignment after a
    # submit say how in ``next_page(request, assignment)`` (the path of the next page; None: no hand-out here).

    next_page = None

    @submit_schema
    def post(self, request, pk):
        assignment = self.assignment(request, pk)
        following = None if self.next_page is None else (lambda: self.next_page(request, assignment))
        return submit_response(self.answers, assignment, request.data, next_page=following)
