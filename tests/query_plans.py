"""What PostgreSQL read to answer a query: ``rows_read(queryset, table)`` runs it under ``EXPLAIN (ANALYZE,
FORMAT JSON)`` and adds up the rows every plan node scanning ``table`` returned or filtered out (times its
loops), so a test can say that a read stays bounded however large the table is (docs/reliability.md)."""

from django.db import connection, transaction

from annotation_site.prepared_queries import _numbered


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def plan_of(queryset, *, generic=False):
    """The plan tree PostgreSQL ran for ``queryset`` (inside a savepoint: a locking read leaves no lock).
    ``generic``: the plan of the query prepared with its values as parameters, as the platform's prepared
    statements run once PostgreSQL settles on a generic plan (``annotation_site/prepared_queries.py``)."""
    with transaction.atomic(), connection.cursor() as cursor:
        sql, params = queryset.query.get_compiler(connection=connection).as_sql()
        if not generic:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
            [[document]] = cursor.fetchall()
            return document[0]["Plan"]
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute("PREPARE captioneval_plan_probe AS " + _numbered(sql))
        try:
            arguments = ", ".join(["%s"] * len(params))
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE captioneval_plan_probe({arguments})", params)
            [[document]] = cursor.fetchall()
        finally:
            cursor.execute("DEALLOCATE captioneval_plan_probe")
        return document[0]["Plan"]


def rows_read(queryset, table, *, generic=False):
    """Rows of ``table`` the plan's scans of it went through, and the names of those scans
    (``[(node type, index name or None)]``)."""
    read, scans = 0, []
    for node in _nodes(plan_of(queryset, generic=generic)):
        if node.get("Relation Name") == table:
            loops = node.get("Actual Loops", 1)
            read += (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
            scans.append((node["Node Type"], node.get("Index Name")))
    return read, scans


def sqlite_plan(queryset):
    """SQLite's EXPLAIN QUERY PLAN of ``queryset``: its lines' texts."""
    with transaction.atomic(), connection.cursor() as cursor:
        sql, params = queryset.query.get_compiler(connection=connection).as_sql()
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return [row[-1] for row in cursor.fetchall()]


def assert_reads_bounded(reads, table, bounds):
    """Each queryset of ``reads`` ({name: queryset}) reads at most ``bounds[name]`` rows of ``table`` and never
    scans it whole, on PostgreSQL both as planned for its values and as a prepared statement's generic plan runs
    it (the table analysed first). On SQLite, which plans these without statistics: no plan scans the table."""
    if connection.vendor != "postgresql":
        for queryset in reads.values():
            assert not [line for line in sqlite_plan(queryset) if line.startswith(f"SCAN {table}")]
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    for generic in (False, True):  # as sent, and as a prepared statement's generic plan runs it
        for name, queryset in reads.items():
            read, scans = rows_read(queryset, table, generic=generic)
            assert read <= bounds[name], (name, generic, read, scans)
            assert ("Seq Scan", None) not in scans, (name, generic, scans)
