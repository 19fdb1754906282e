"""A database that cannot be reached (restarting, connections cut, failing over) answers 503 with Retry-After and
a plain message instead of a 500 with a traceback in the log: the pages' scripts send the same submission again
(same UUID, stored once), a person reloads. Nothing here touches the database, so the answer itself cannot fail
for the same reason (no template that reads the session or the user)."""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse

log = logging.getLogger(__name__)

RETRY_AFTER = 5
MESSAGE = "The database is unavailable for a moment. Nothing you saved is lost: try again in a few seconds."
PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
    'content="width=device-width, initial-scale=1"><title>Try again in a moment</title></head><body>'
    f"<h1>Try again in a moment</h1><p>{MESSAGE}</p></body></html>"
)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        # every text escaped, as Django's own request log does: a line break in the path (%0A) forged a log line
        text = (request.method, request.path, str(exception))
        log.warning(
            "database unavailable during %s %s: %s", *(t.encode("unicode_escape").decode("ascii") for t in text)
        )
        wants_json = request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")
        response = (
            JsonResponse({"error": "database_unavailable", "detail": MESSAGE}, status=503)
            if wants_json
            else HttpResponse(PAGE, status=503, content_type="text/html; charset=utf-8")
        )
        response["Retry-After"] = str(RETRY_AFTER)
        response["Cache-Control"] = "no-store"
        return response
