"""Django's PostgreSQL backend, with a cheaper connection health check (issue #11, "Load").

With ``CONN_HEALTH_CHECKS`` Django sends ``SELECT 1`` before the first query of every request on a reused
connection, so that a request after a database restart gets a fresh connection instead of an error: one round
trip to PostgreSQL per request, about a tenth of a gunicorn thread's time under the mixed load (py-spy,
docs/reliability.md). Between requests a connection is idle, and PostgreSQL sends nothing on an idle connection
unless the session ends (a restart, ``pg_terminate_backend``, an idle timeout: an error message, then the end of
the stream) or it has something unasked to report (a notification, a changed server parameter). So the check
first polls the socket without waiting: nothing to read means the connection is as the last statement left it,
and it is kept without a round trip; anything to read, or a closed connection, and Django's ``SELECT 1`` decides.
A connection dropped without a word (no FIN reaching this host) is caught by neither check before its first
query's timeout.
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed:
            return False
        try:
            readable, _, _ = select.select([connection], [], [], 0)
        except (OSError, ValueError):  # the descriptor is gone
            return False
        if not readable:
            return True
        return super().is_usable()
