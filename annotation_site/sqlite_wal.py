"""SQLite on the embedded default: write-ahead logging, switched on once per database file.

WAL is a property of the file and persists, so it is set when a connection finds the file in another mode
(the first ``migrate``), never as an ``init_command`` on every connection: converting a file to WAL needs an
exclusive lock, and several connections asking for the conversion at the same moment can wait on each other
until their busy timeout ends in "database is locked".
"""

from django.db.backends.signals import connection_created


def use_wal(sender, connection, **kwargs):
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        if cursor.fetchone()[0].lower() != "wal":
            cursor.execute("PRAGMA journal_mode=WAL")


def connect():
    connection_created.connect(use_wal, dispatch_uid="captioneval-sqlite-wal")
