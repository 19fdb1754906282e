"""Results computed from data that keeps changing, stored so that an older computation never overwrites a newer
one (a lost update).

A result (a worker's quality control, say) is computed by reading its inputs, then written. Two computations of the
same row that overlap — a campaign-wide job that reads at T1 and writes at T4, and a one-worker task after a
finished HIT that reads at T2 and writes at T3 — would otherwise leave the job's older result, read before the
worker's last judgments, in place. Each computation takes ``database_now()`` *before* it reads and stores it with
the row; ``upsert_newest`` replaces a stored row only with one stamped as late or later.

Why this is enough: a change that matters (a judgment that completes a HIT) is followed by a computation stamped
after its commit, which reads it; no computation stamped earlier can replace that one's row, and any stamped later
reads after it too.

The stamp comes from the database server's clock on PostgreSQL (``clock_timestamp()``, the real time, not the
transaction's start), so processes on machines whose clocks differ slightly still order correctly; SQLite
installations run on one machine and use its clock. A wall clock is not monotonic: if the server's clock is set
back (an NTP step, rare: NTP slews small differences), computations in the next moments lose to the rows stamped
before the step until the clock has caught up; the next computation after that wins again. Whatever else writes
a stored result must stamp it too (``now_expression()``), or a computation that read earlier replaces it.
"""

from django.db import connection, models
from django.utils import timezone


def database_now():
    """The current time on the database server's clock (PostgreSQL, one query), else this machine's."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT clock_timestamp()")
            return cursor.fetchone()[0]
    return timezone.now()


def now_expression():
    """``database_now()`` as an expression for an UPDATE, so that a write that changes a stored result outside a
    computation (a verdict marked in progress) stamps it without a query of its own."""
    if connection.vendor == "postgresql":
        return models.Func(function="clock_timestamp", output_field=models.DateTimeField())
    return models.Value(timezone.now(), output_field=models.DateTimeField())


def upsert_newest(model, objects, *, unique_fields, update_fields, stamp_field):
    """Insert ``objects`` (unsaved instances of ``model``, every field but the key), or update ``update_fields`` of
    the row of the same ``unique_fields`` when the stored row's ``stamp_field`` is not later than the new one's; a
    row stored from a later computation is left as it is. One ``INSERT ... ON CONFLICT ... DO UPDATE ... WHERE``
    per batch of rows (PostgreSQL and SQLite). ``update_fields`` must include ``stamp_field``."""
    if stamp_field not in update_fields:
        raise ValueError(f"{stamp_field!r} must be among the updated fields")
    meta = model._meta
    qn = connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if not f.primary_key]  # a new row is written whole
    table = qn(meta.db_table)
    stamp = qn(meta.get_field(stamp_field).column)
    updates = ", ".join(f"{qn(c)} = excluded.{qn(c)}" for c in (meta.get_field(n).column for n in update_fields))
    conflict = ", ".join(qn(meta.get_field(n).column) for n in unique_fields)
    head = f"INSERT INTO {table} ({', '.join(qn(f.column) for f in fields)}) VALUES "
    tail = f" ON CONFLICT ({conflict}) DO UPDATE SET {updates} WHERE {table}.{stamp} <= excluded.{stamp}"
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    batch_size = max(1, connection.ops.bulk_batch_size(fields, objects))  # (SQLite: 999 parameters a statement)
    with connection.cursor() as cursor:
        for start in range(0, len(objects), batch_size):
            batch = objects[start : start + batch_size]
            values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in batch for f in fields]
            cursor.execute(head + ", ".join([row] * len(batch)) + tail, values)
