"""Planner statistics after a bulk load (issue #11, "Load").

PostgreSQL plans a query from statistics of each table (rows, distinct values) that autovacuum refreshes in the
background, about once a minute at best. A bulk load, such as a dataset import, a campaign's plan, a project's
videos or a task's items, can turn a table autovacuum last saw empty into one of thousands of rows; until the
statistics catch up, the planner takes sequential scans, and every web connection keeps them in its cached plans
(``annotation_site.prepared_queries``). That is the minute in which a study launched right after its campaign
was made brings its participants. Measured with the load benchmark, tables emptied and analysed before the
work was made: PostgreSQL's CPU per submission went from 2.4 to 17 ms (7.5 ms with server-side preparing off);
analysing the bulk-loaded tables once they are written brought it back to 2.4 ms (docs/reliability.md).

``refresh_after_bulk_load(Model, ...)`` analyses the tables of the given models once the transaction that wrote
them commits (the statistics then describe committed rows, and a rolled-back load changes nothing), as
PostgreSQL's documentation advises after loading data. ANALYZE reads a sample of each table (at most 30,000
rows per table at the default statistics target), a fraction of a second for the largest loads here. It never
waits: a table that autovacuum (or another ANALYZE) is working on is skipped (``SKIP_LOCKED``), and an error is
logged, not raised, since the load itself has committed and the statistics only speed up what follows. Other
databases: nothing (SQLite plans without gathered statistics unless told to).
"""

from django.db import DEFAULT_DB_ALIAS, connections, transaction


def refresh_after_bulk_load(*models, using=DEFAULT_DB_ALIAS):
    """Analyse the tables of ``models`` once the current transaction commits (at once outside one)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    tables = sorted({model._meta.db_table for model in models})

    def analyse():
        # in a transaction of its own (a savepoint when the caller's block is still open, as in tests), so that
        # a failure leaves the connection usable
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute("ANALYZE (SKIP_LOCKED) " + ", ".join(connection.ops.quote_name(t) for t in tables))

    transaction.on_commit(analyse, using=using, robust=True)
