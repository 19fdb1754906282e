"""Django's database sessions, with the read of a request's session compiled once per database connection.

Every request of a signed-in annotator reads its session row first (``django.contrib.sessions.backends.db``);
Django builds and compiles that SELECT anew each time. Here it is a ``Prepared`` query (issue #11, "Load"):
the same row, the same table, the same expiry rule (a session whose ``expire_date`` has passed is none), so
switching ``SESSION_ENGINE`` to this store or back keeps everyone signed in.
"""

import re

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from .prepared_queries import Prepared

_BY_KEY = Prepared(
    lambda session_key: Session.objects.filter(session_key=session_key)[:1],
    session_key="captioneval-sessions-by-key-sentinel",
)


# what Django's keys are made of (``get_random_string(32, VALID_KEY_CHARS)``), within the column's 40 characters
_KEY = re.compile(r"[a-z0-9]{8,40}\Z")


class SessionStore(DatabaseSessionStore):
    def _validate_session_key(self, key):
        """Only a key Django could have made is looked up: a cookie is the client's to write, and one holding a
        NUL character (``"\\000"`` in a quoted cookie value decodes to it) made every page a 500 on PostgreSQL,
        whose text cannot hold it. Any other key is a new, empty session, as an unknown key is."""
        return isinstance(key, str) and _KEY.match(key) is not None

    def _get_session_from_db(self):
        key = self.session_key
        found = _BY_KEY.run(session_key=key) if isinstance(key, str) else []
        if found and found[0].expire_date > timezone.now():
            return found[0]
        self._session_key = None  # as Django's store: an unknown or expired key is dropped
        return None
