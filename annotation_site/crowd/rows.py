"""The crowd arrival's hot path in as few statements as it can be, without compiling a query on every request:
on a burst of arrivals the ORM's compilation of these joins cost more CPU than the database's work
(docs/crowd.md, "Performance"). The reads (the entry's study and participant, Start's participation with its
study and participant) are querysets compiled once per connection (``annotation_site.prepared_queries``); a
newcomer is created by one hand-written statement on PostgreSQL (a data-modifying WITH, which the ORM cannot
write), whose rows become instances as the ORM makes them; Start's two updates are written by hand."""

from functools import cache

from django.db import connection
from django.db.models import Exists, OuterRef

from annotation_site.prepared_queries import Prepared

from .models import Participant, Participation, PracticeItem, Study


def _has_practice(study_ref):
    return Exists(PracticeItem.objects.filter(study_id=OuterRef(study_ref)))


_STUDY = Prepared(
    lambda pk: Study.objects.filter(pk=pk).annotate(has_practice=_has_practice("pk")).order_by()[:1], pk=-914_270_031
)
_PARTICIPATION = Prepared(
    lambda pk: (
        Participation.objects.filter(pk=pk)
        .select_related("study", "participant")
        .annotate(has_practice=_has_practice("study_id"))
        .order_by()[:1]
    ),
    pk=-914_270_032,
)
_PARTICIPANT = Prepared(
    lambda namespace, platform_id: Participant.objects.filter(namespace=namespace, platform_id=platform_id).order_by()[
        :1
    ],
    namespace="prepared-sentinel:participant-namespace",
    platform_id="prepared-sentinel:participant-platform-id",
)


def study(pk):
    """The Study ``pk`` knowing whether it has practice items (``has_practice``), or None: one query."""
    found = _STUDY.run(pk=pk)
    return found[0] if found else None


def participation(pk):
    """The Participation ``pk`` with its study and participant, the study knowing whether it has practice items
    (``has_practice``, also on the participation), or None: one query."""
    found = _PARTICIPATION.run(pk=pk)
    if not found:
        return None
    found[0].study.has_practice = found[0].has_practice
    return found[0]


def participant(namespace, platform_id):
    """The Participant of (namespace, platform_id) or None: one query."""
    found = _PARTICIPANT.run(namespace=namespace, platform_id=platform_id)
    return found[0] if found else None


def _layout(model, alias):
    """(select list, converters): every concrete column of ``model`` as ``alias.column`` and, per column, the
    expression and the functions the ORM applies to the database's value."""
    qn = connection.ops.quote_name
    columns, converters = [], []
    for field in model._meta.concrete_fields:
        expression = field.get_col(alias)
        columns.append(f"{alias}.{qn(field.column)}")
        converters.append(
            (expression, connection.ops.get_db_converters(expression) + expression.get_db_converters(connection))
        )
    return columns, converters


def _instance(model, values, converters):
    """The ``model`` instance of a row's ``values`` (in ``_layout`` order), as loaded from the database."""
    values = list(values)
    for index, (expression, functions) in enumerate(converters):
        for function in functions:
            values[index] = function(values[index], expression, connection)
    return model.from_db(connection.alias, None, values)


def _fetch_one(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def newcomers_in_one_statement():
    """PostgreSQL creates a newcomer and their participation in one statement (``create_newcomer``); other
    databases (no data-modifying WITH) in a transaction of two inserts."""
    return connection.vendor == "postgresql"


def _insert_values(obj):
    """(columns, values) of every concrete column of a new instance but its primary key, prepared for the
    database as ``save`` prepares them (``auto_now_add`` fields set)."""
    columns, values = [], []
    for field in obj._meta.concrete_fields:
        if field.primary_key:
            continue
        value = field.pre_save(obj, add=True)
        columns.append(connection.ops.quote_name(field.column))
        values.append(field.get_db_prep_save(value, connection))
    return columns, values


@cache
def _newcomer_sql(vendor, person_columns, own_columns):
    qn = connection.ops.quote_name
    person_select, person_converters = _layout(Participant, "person")
    own_select, own_converters = _layout(Participation, "made")
    returning_person = ", ".join(qn(f.column) for f in Participant._meta.concrete_fields)
    returning_own = ", ".join(qn(f.column) for f in Participation._meta.concrete_fields)
    own_columns = [c for c in own_columns if c != qn("participant_id")]
    sql = (
        f"WITH person AS (INSERT INTO {qn(Participant._meta.db_table)} ({', '.join(person_columns)}) "
        f"VALUES ({', '.join(['%s'] * len(person_columns))}) ON CONFLICT ({qn('namespace')}, {qn('platform_id')}) "
        f"DO NOTHING RETURNING {returning_person}), "
        f"made AS (INSERT INTO {qn(Participation._meta.db_table)} ({qn('participant_id')}, {', '.join(own_columns)}) "
        f"SELECT person.id, {', '.join(['%s'] * len(own_columns))} FROM person RETURNING {returning_own}) "
        f"SELECT {', '.join(own_select + person_select)} FROM made JOIN person ON person.id = made.participant_id"
    )
    return sql, own_converters, person_converters


def create_newcomer(study, namespace, platform_id, fields):
    """A new participant and their participation in ``study`` (``fields``: its admission fields), made in one
    statement (PostgreSQL): the Participation with its study and participant, or None when a participant of
    that id exists already (then nothing was written). IntegrityError when the participation clashes with
    another (say a submission id already used in the study)."""
    from django.db import transaction
    from django.utils import timezone

    person = Participant(namespace=namespace, platform_id=platform_id)
    own = Participation(study=study, last_seen_at=timezone.now(), **fields)
    person_columns, person_values = _insert_values(person)
    own_columns, own_values = _insert_values(own)
    keep = [i for i, c in enumerate(own_columns) if c != connection.ops.quote_name("participant_id")]
    sql, own_converters, person_converters = _newcomer_sql(connection.vendor, tuple(person_columns), tuple(own_columns))
    params = person_values + [own_values[i] for i in keep]
    if connection.in_atomic_block:  # a savepoint, so that an IntegrityError leaves the caller's transaction usable
        with transaction.atomic():
            row = _fetch_one(sql, params)
    else:  # autocommit: the statement is its own transaction
        row = _fetch_one(sql, params)
    if row is None:
        return None
    made = _instance(Participation, row[: len(own_converters)], own_converters)
    made.study = study
    made.participant = _instance(Participant, row[len(own_converters) :], person_converters)
    return made


def _execute(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def take_place(study):
    """Count one more place taken in ``study``, within its cap when it has one (``places``); False when full.
    One UPDATE written by hand (every Start runs it)."""
    qn = connection.ops.quote_name
    sql = f"UPDATE {qn(Study._meta.db_table)} SET {qn('places_taken')} = {qn('places_taken')} + 1 WHERE id = %s"
    params = [study.pk]
    if study.places:
        sql += f" AND {qn('places_taken')} < %s"
        params.append(study.places)
    return _execute(sql, params) > 0


def mark_working(participation, work, now):
    """The participation (still admitted) now holds ``work``; False when it was not admitted any more (a
    concurrent Start). One UPDATE written by hand."""
    qn = connection.ops.quote_name
    when = connection.ops.adapt_datetimefield_value(now)
    return (
        _execute(
            f"UPDATE {qn(Participation._meta.db_table)} SET {qn('status')} = %s, {qn('work_key')} = %s, "
            f"{qn('unit_key')} = %s, {qn('unit_label')} = %s, {qn('started_at')} = %s, {qn('last_seen_at')} = %s "
            f"WHERE id = %s AND {qn('status')} = %s",
            [
                Participation.Status.WORKING,
                work.key,
                work.unit_key,
                work.unit_label,
                when,
                when,
                participation.pk,
                Participation.Status.ADMITTED,
            ],
        )
        > 0
    )
