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
