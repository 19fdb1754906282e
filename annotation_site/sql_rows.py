"""Rows of hand-written SQL as model instances, as the ORM makes them: for the few reads of a hot path (a crowd
arrival) whose SQL is written once per process instead of compiled by the ORM on every request. ``layout``
gives a model's select list under a table alias and the converters the ORM would apply to each column;
``instance`` applies them and builds the instance with ``Model.from_db``. Every concrete column is read, so the
instances behave as the ORM's would (no deferred fields)."""
from django.db import connection


def layout(model, alias):
    """(select list, converters): every concrete column of ``model`` as ``alias.column`` and, per column, the
    expression and the functions the ORM applies to the database's value."""
    qn = connection.ops.quote_name
    columns, converters = [], []
    for field in model._meta.concrete_fields:
        expression = field.get_col(alias)
        columns.append(f"{alias}.{qn(field.column)}")
        converters.append((expression, connection.ops.get_db_converters(expression)
                           + expression.get_db_converters(connection)))
    return columns, converters


def instance(model, values, converters):
    """The ``model`` instance of a row's ``values`` (in ``layout`` order), as loaded from the database."""
    values = list(values)
    for index, (expression, functions) in enumerate(converters):
        for function in functions:
            values[index] = function(values[index], expression, connection)
    return model.from_db(connection.alias, None, values)


def fetch_one(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()
