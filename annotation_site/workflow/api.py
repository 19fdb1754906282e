"""The researcher endpoints every protocol's REST API shares, written once (DRF): the body of a refused change,
the invitations of a created unit, inviting a list of user names, the progress of a unit, and the answer to an
invalid file. Each protocol's ``api.py`` keeps its serializers and its own endpoints and calls these."""
from django.core.exceptions import ValidationError
from rest_framework.response import Response


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


def with_progress(body, progress):
    """A unit's detail body with its progress counts and one row per annotator."""
    body["progress"] = {k: v for k, v in progress.items() if k != "annotators"}
    body["annotators"] = [{"annotator": row["annotator"].name, "assigned": row["assigned"],
                           "submitted": row["submitted"], "median_seconds": row["median_seconds"]}
                          for row in progress["annotators"]]
    return body


def format_problems(exc):
    """400 for a file with problems (a FormatError): nothing was imported, every problem listed."""
    return Response({"detail": "invalid file, nothing was imported", "problems": [str(p) for p in exc.problems]},
                    status=400)
