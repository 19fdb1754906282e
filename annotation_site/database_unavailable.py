"""A database that cannot be reached (restarting, connections cut, failing over) answers 503 with Retry-After and
a plain message instead of a 500 with a traceback in the log: the pages' scripts send the same submission again
(same UUID, stored once), a person reloads. Nothing here touches the database, so the answer itself cannot fail
for the same reason (no template that reads the session or the user).

Only an error of the database's state is such an outage. The drivers raise ``OperationalError`` for some faults
of the statement too, which no retry mends and which must reach the log as the server errors they are: SQLite's
generic ``SQLITE_ERROR`` ("too many SQL variables", "no such table", a syntax error) and its other codes but
those of a busy, locked, full or unreachable database; PostgreSQL's class 54, "program limit exceeded" ("cannot
pass more than 100 arguments to a function", an index row too large). Those answer 500 and are logged with their
traceback, as any other error (before 2026-11-28 they answered "try again in a few seconds", and the log said
"database unavailable")."""

import logging
import sqlite3

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


# SQLite's primary result codes (the low byte of ``sqlite_errorcode``) of a database that is busy, locked, out of
# memory or space, or cannot be opened or read for now
SQLITE_UNAVAILABLE = frozenset(
    (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
    )
)
POSTGRESQL_STATEMENT_FAULTS = ("54",)  # SQLSTATE classes: program limit exceeded


def unavailable(exception):
    """Whether a database error Django raised (``OperationalError`` / ``InterfaceError``) says the database is
    unavailable for now, not that the statement cannot run: by the driver's error (``__cause__``). An error
    without a driver's cause (raised by Django itself, a lost connection) counts as an outage."""
    if isinstance(exception, InterfaceError):
        return True
    cause = exception.__cause__
    if isinstance(cause, sqlite3.Error) and getattr(cause, "sqlite_errorcode", None) is not None:
        return cause.sqlite_errorcode & 0xFF in SQLITE_UNAVAILABLE
    code = getattr(cause, "pgcode", None)  # psycopg2: None for a connection that failed or was cut
    return not (isinstance(code, str) and code.startswith(POSTGRESQL_STATEMENT_FAULTS))


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)) or not unavailable(exception):
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
