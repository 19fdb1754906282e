"""SQLite on the embedded default: write-ahead logging, switched on once per database file.

WAL is a property of the file and persists, so it is set when a connection finds the file in another mode
(the first ``migrate``), never as an ``init_command`` on every connection: converting a file to WAL needs an
exclusive lock, and several connections asking for the conversion at the same moment can wait on each other
until their busy timeout ends in "database is locked".

Even once per connection, SQLite answers "database is locked" at once, without waiting out the busy timeout,
when connections opened together on a file still in rollback mode race for the conversion (0.7 % of runs of
six threads on a fresh file, tests/deployment/test_sqlite_wal.py). So the switch is retried, after a short
pause, until the connection's busy timeout has passed; each try first looks whether another connection has
switched the file already.
"""

import random
import time

from django.db import OperationalError
from django.db.backends.signals import connection_created

DEFAULT_TIMEOUT = 5.0  # sqlite3's own default busy timeout, when the settings give none


def use_wal(sender, connection, **kwargs):
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        return
    deadline = time.monotonic() + float(connection.settings_dict.get("OPTIONS", {}).get("timeout", DEFAULT_TIMEOUT))
    while True:
        try:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA journal_mode")
                if cursor.fetchone()[0].lower() == "wal":
                    return
                cursor.execute("PRAGMA journal_mode=WAL")
                if cursor.fetchone()[0].lower() == "wal":
                    return
        except OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        else:  # the switch did not take (another connection held the file): try again like a lock
            if time.monotonic() > deadline:
                raise OperationalError(f"could not switch {connection.settings_dict['NAME']} to WAL")
        time.sleep(random.uniform(0.005, 0.05))


def connect():
    connection_created.connect(use_wal, dispatch_uid="captioneval-sqlite-wal")
