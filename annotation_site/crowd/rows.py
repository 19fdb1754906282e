"""The reads of a crowd arrival's hot path (the entry's study, Start's participation with its study and
participant) as SQL written once per process and database, and rows turned into model instances as the ORM does
(the database's converters applied, ``Model.from_db``), without compiling a query on every request: on a burst
of arrivals the ORM's compilation of these joins cost more CPU than the database's work (docs/crowd.md,
"Performance"). Every column of each model is read, so the instances behave as the ORM's would."""
from functools import cache

from django.db import connection

from .models import Participant, Participation, PracticeItem, Study


def _layout(model, alias):
    """The select list of every concrete column of ``model`` under ``alias`` and, per column, the expression
    and the converters the ORM would apply to its value."""
    qn = connection.ops.quote_name
    columns, converters = [], []
    for field in model._meta.concrete_fields:
        expression = field.get_col(alias)
        columns.append(f"{alias}.{qn(field.column)}")
        converters.append((expression, connection.ops.get_db_converters(expression)
                           + expression.get_db_converters(connection)))
    return columns, converters


def _instance(model, values, converters):
    values = list(values)
    for index, (expression, functions) in enumerate(converters):
        for function in functions:
            values[index] = function(values[index], expression, connection)
    return model.from_db(connection.alias, None, values)


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
    with connection.cursor() as cursor:
        cursor.execute(sql, [pk])
        row = cursor.fetchone()
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
    with connection.cursor() as cursor:
        cursor.execute(sql, [pk])
        row = cursor.fetchone()
    if row is None:
        return None
    first, second = len(own), len(own) + len(of_study)
    found = _instance(Participation, row[:first], own)
    found.study = _instance(Study, row[first:second], of_study)
    found.participant = _instance(Participant, row[second:-1], of_person)
    found.has_practice = found.study.has_practice = bool(row[-1])
    return found
