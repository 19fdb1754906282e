"""The reads of a crowd arrival's hot path (the entry's study, Start's participation with its study and
participant) as SQL written once per process and database (``annotation_site.sql_rows``), without compiling a
query on every request: on a burst of arrivals the ORM's compilation of these joins cost more CPU than the
database's work (docs/crowd.md, "Performance")."""
from functools import cache

from django.db import connection

from annotation_site.sql_rows import fetch_one
from annotation_site.sql_rows import instance as _instance
from annotation_site.sql_rows import layout as _layout

from .models import Participant, Participation, PracticeItem, Study


@cache
def _study_sql(vendor):
    qn = connection.ops.quote_name
    columns, converters = _layout(Study, "s")
    sql = (f"SELECT {', '.join(columns)}, EXISTS (SELECT 1 FROM {qn(PracticeItem._meta.db_table)} x "
           f"WHERE x.study_id = s.id) FROM {qn(Study._meta.db_table)} s WHERE s.id = %s")
    return sql, converters


def study(pk):
    """The Study ``pk`` knowing whether it has practice items (``has_practice``), or None: one query."""
    sql, converters = _study_sql(connection.vendor)
    row = fetch_one(sql, [pk])
    if row is None:
        return None
    found = _instance(Study, row[:-1], converters)
    found.has_practice = bool(row[-1])
    return found


@cache
def _participation_sql(vendor):
    qn = connection.ops.quote_name
    own, own_converters = _layout(Participation, "p")
    study_columns, study_converters = _layout(Study, "s")
    person, person_converters = _layout(Participant, "t")
    sql = (f"SELECT {', '.join(own + study_columns + person)}, EXISTS (SELECT 1 FROM "
           f"{qn(PracticeItem._meta.db_table)} x WHERE x.study_id = s.id) FROM {qn(Participation._meta.db_table)} p "
           f"JOIN {qn(Study._meta.db_table)} s ON s.id = p.study_id "
           f"JOIN {qn(Participant._meta.db_table)} t ON t.id = p.participant_id WHERE p.id = %s")
    return sql, own_converters, study_converters, person_converters


def participation(pk):
    """The Participation ``pk`` with its study and participant, the study knowing whether it has practice items
    (``has_practice``, also on the participation), or None: one query."""
    sql, own, of_study, of_person = _participation_sql(connection.vendor)
    row = fetch_one(sql, [pk])
    if row is None:
        return None
    first, second = len(own), len(own) + len(of_study)
    found = _instance(Participation, row[:first], own)
    found.study = _instance(Study, row[first:second], of_study)
    found.participant = _instance(Participant, row[second:-1], of_person)
    found.has_practice = found.study.has_practice = bool(row[-1])
    return found


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
    sql = (f"WITH person AS (INSERT INTO {qn(Participant._meta.db_table)} ({', '.join(person_columns)}) "
           f"VALUES ({', '.join(['%s'] * len(person_columns))}) ON CONFLICT ({qn('namespace')}, {qn('platform_id')}) "
           f"DO NOTHING RETURNING {returning_person}), "
           f"made AS (INSERT INTO {qn(Participation._meta.db_table)} ({qn('participant_id')}, {', '.join(own_columns)}) "
           f"SELECT person.id, {', '.join(['%s'] * len(own_columns))} FROM person RETURNING {returning_own}) "
           f"SELECT {', '.join(own_select + person_select)} FROM made JOIN person ON person.id = made.participant_id")
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
    sql, own_converters, person_converters = _newcomer_sql(connection.vendor, tuple(person_columns),
                                                           tuple(own_columns))
    params = person_values + [own_values[i] for i in keep]
    if connection.in_atomic_block:  # a savepoint, so that an IntegrityError leaves the caller's transaction usable
        with transaction.atomic():
            row = fetch_one(sql, params)
    else:  # autocommit: the statement is its own transaction
        row = fetch_one(sql, params)
    if row is None:
        return None
    made = _instance(Participation, row[:len(own_converters)], own_converters)
    made.study = study
    made.participant = _instance(Participant, row[len(own_converters):], person_converters)
    return made


def _execute(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def take_place(study):
    """Count one more place taken in ``study``, within its cap when it has one (``places``); False when full.
    One UPDATE written by hand (every Start runs it)."""
    qn = connection.ops.quote_name
    sql = (f"UPDATE {qn(Study._meta.db_table)} SET {qn('places_taken')} = {qn('places_taken')} + 1 "
           f"WHERE id = %s")
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
    return _execute(
        f"UPDATE {qn(Participation._meta.db_table)} SET {qn('status')} = %s, {qn('work_key')} = %s, "
        f"{qn('unit_key')} = %s, {qn('unit_label')} = %s, {qn('started_at')} = %s, {qn('last_seen_at')} = %s "
        f"WHERE id = %s AND {qn('status')} = %s",
        [Participation.Status.WORKING, work.key, work.unit_key, work.unit_label, when, when,
         participation.pk, Participation.Status.ADMITTED]) > 0


@cache
def _participant_sql(vendor):
    qn = connection.ops.quote_name
    columns, converters = _layout(Participant, "t")
    return (f"SELECT {', '.join(columns)} FROM {qn(Participant._meta.db_table)} t "
            f"WHERE t.{qn('namespace')} = %s AND t.{qn('platform_id')} = %s"), converters


def participant(namespace, platform_id):
    """The Participant of (namespace, platform_id) or None: one query."""
    sql, converters = _participant_sql(connection.vendor)
    row = fetch_one(sql, [namespace, platform_id])
    return None if row is None else _instance(Participant, row, converters)
