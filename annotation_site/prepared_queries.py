"""Querysets compiled to SQL once per database connection and run again with other values (issue #11, "Load").

Compiling a queryset with joins and subqueries to SQL costs Django more CPU than PostgreSQL spends answering it
(about a third of a Direct Assessment submission's CPU went to compiling two SELECTs). A :class:`Prepared`
query is written as an ordinary queryset of its values, so its meaning stays the ORM's; it is compiled the first
time a connection runs it, with sentinel values that mark where each value goes in the SQL's parameters, and
every later run only swaps the values in, executes the SQL and makes the model instances (with their
``select_related`` objects and annotations) exactly as the queryset would have, with the backend's converters.

    ITEMS = Prepared(lambda hit_id: Item.objects.filter(hit_id=hit_id).select_related("caption")[:2],
                     hit_id=-914_270_001)
    items = ITEMS.run(hit_id=7)          # a list of Item, like list(the queryset)

The compiled SQL lives on the connection object (one per thread), so threads never share a compiler. Values
are whole numbers (ids) or strings compared with exact lookups (names, platform ids): both go into the
parameters as they are; or UUIDs compared with exact lookups on a UUIDField, which go in as the backend's
compiled parameter had them (a UUID on PostgreSQL, its 32 hex digits on SQLite). Other types (dates) would need
the field's conversion for the backend, and lookups such as ``iexact`` or ``contains`` rewrite their value.
Sentinels must be values no query would use (large negative ids, strings that name the query), each distinct
and appearing in the compiled parameters; ``run`` refuses a query whose sentinel went missing from the SQL, and
a value of another type than its sentinel.

On PostgreSQL the compiled SQL is also prepared on the server, once per database session (``PREPARE``; then
``EXECUTE name(values)``): psycopg2 has every statement parsed, analysed and planned again, which was about a
quarter of a millisecond of PostgreSQL's CPU per statement under load. The ``PREPARE`` goes through the driver's
own cursor, like the connection's set-up statements, so it is not among the statements Django logs and counts;
the ``EXECUTE`` is (``sent_sql`` gives the SQL it runs, for tests that read the logged statements). A query the
server cannot prepare (a value whose type it cannot infer) runs as plain SQL. ``DATABASE_PREPARED_STATEMENTS=false``
turns server-side preparing off (a connection pooler in transaction mode, such as PgBouncer's, would send an
``EXECUTE`` to a session that never saw its ``PREPARE``).
"""

import itertools
import re
import uuid

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models.query import get_related_populators

_ATTRIBUTE = "_captioneval_prepared"
_SESSION = "_captioneval_prepared_session"  # (the driver's connection, {statement name: prepared or not})
_KIND = {int: "whole number", str: "string", uuid.UUID: "UUID"}
_NAMES = itertools.count(1)
_PLACEHOLDER = re.compile(r"%[s%]")
_PREPARED_SQL = {}  # statement name -> the SQL it was prepared with (sent_sql)


def _numbered(sql):
    """Django's ``%s`` placeholders as PostgreSQL's ``$1, $2, ...`` (and ``%%`` as ``%``)."""
    numbers = itertools.count(1)
    return _PLACEHOLDER.sub(lambda match: "%" if match.group() == "%%" else f"${next(numbers)}", sql)


def _prepared_on_server(connection, name, sql):
    """Whether ``name`` is prepared (as ``sql``) in the session of ``connection``'s current driver connection,
    preparing it the first time. Inside a transaction the ``PREPARE`` is wrapped in a savepoint, so a refusal
    leaves the transaction usable; a prepared statement outlives a rollback (it belongs to the session)."""
    import psycopg2

    raw = connection.connection
    session = connection.__dict__.get(_SESSION)
    if session is None or session[0] is not raw:  # a new connection (first use, or after a reconnect)
        session = (raw, {})
        connection.__dict__[_SESSION] = session
    known = session[1]
    prepared = known.get(name)
    if prepared is None:
        text = _numbered(sql)
        with connection.wrap_database_errors, raw.cursor() as cursor:
            savepoint = not raw.autocommit
            if savepoint:
                cursor.execute("SAVEPOINT captioneval_prepare")
            try:
                cursor.execute(f"PREPARE {name} AS {text}")
                prepared = True
            except (psycopg2.ProgrammingError, psycopg2.NotSupportedError):  # e.g. a value of unknown type
                prepared = False
                if savepoint:
                    cursor.execute("ROLLBACK TO SAVEPOINT captioneval_prepare")
            if savepoint:
                cursor.execute("RELEASE SAVEPOINT captioneval_prepare")
        known[name] = prepared
        if prepared:
            _PREPARED_SQL[name] = text
    return prepared


def sent_sql(sql):
    """The SQL a logged statement ran: for ``EXECUTE name(...)`` of a prepared query, the SQL it was prepared
    with (placeholders ``$1, $2, ...``); any other statement as it is."""
    match = re.match(r"EXECUTE (captioneval_q\d+)\b", sql)
    return _PREPARED_SQL[match.group(1)] if match else sql


class Prepared:
    def __init__(self, build, **sentinels):
        """``build(**values)``: the queryset for ``values`` (keyword arguments named like ``sentinels``)."""
        if len(set(sentinels.values())) != len(sentinels):
            raise ValueError("each sentinel must be distinct")
        if any(type(value) not in (int, str, uuid.UUID) for value in sentinels.values()):
            raise ValueError("sentinels (and values) are whole numbers, strings or UUIDs")
        self.build = build
        self.sentinels = sentinels
        self.name = f"captioneval_q{next(_NAMES)}"

    def _compiled(self, using):
        connection = connections[using]
        cache = connection.__dict__.setdefault(_ATTRIBUTE, {})
        entry = cache.get(self)
        if entry is None:
            queryset = self.build(**self.sentinels)
            compiler = queryset.query.get_compiler(connection=connection)
            sql, params = compiler.as_sql()
            slots = []
            for name, value in self.sentinels.items():
                hexed = False
                where = [i for i, param in enumerate(params) if type(param) is type(value) and param == value]
                if not where and type(value) is uuid.UUID:  # a backend without a UUID type: 32 hex digits
                    where = [i for i, param in enumerate(params) if type(param) is str and param == value.hex]
                    hexed = True
                if not where:
                    raise ValueError(f"the sentinel of {name!r} is not among the query's parameters")
                slots.append((name, where, hexed))
            select, klass_info = compiler.select, compiler.klass_info
            fields = klass_info["select_fields"]
            start, end = fields[0], fields[-1] + 1
            init_list = [column[0].target.attname for column in select[start:end]]
            converters = compiler.get_converters([column[0] for column in select[0 : compiler.col_count]])
            entry = (
                sql,
                list(params),
                slots,
                compiler,
                klass_info["model"],
                start,
                end,
                init_list,
                dict(compiler.annotation_col_map or {}),
                converters,
                klass_info,
                select,
            )
            cache[self] = entry
        return connection, entry

    def run(self, using=DEFAULT_DB_ALIAS, **values):
        """The model instances the queryset of ``values`` gives, in its order (a list)."""
        (
            connection,
            (sql, params, slots, compiler, model, start, end, init_list, annotations, converters, klass_info, select),
        ) = self._compiled(using)
        params = list(params)
        for name, where, hexed in slots:
            value = values[name]
            expected = type(self.sentinels[name])
            if type(value) is not expected:
                raise TypeError(f"{name} must be a {_KIND[expected]}, not {type(value).__name__}")
            if hexed:
                value = value.hex
            for i in where:
                params[i] = value
        with connection.cursor() as cursor:
            if (
                connection.vendor == "postgresql"
                and settings.CAPTIONEVAL_PREPARED_STATEMENTS
                and _prepared_on_server(connection, self.name, sql)
            ):
                cursor.execute(
                    f"EXECUTE {self.name}({', '.join(['%s'] * len(params))})" if params else f"EXECUTE {self.name}",
                    params,
                )
            else:
                cursor.execute(sql, params)
            rows = cursor.fetchall()
        if not rows:
            return []
        if converters:
            rows = compiler.apply_converters(rows, converters)
        # populators hold per-call state only in what they build: made per call, cheap next to the query
        populators = get_related_populators(klass_info, select, using)
        out = []
        for row in rows:
            obj = model.from_db(using, init_list, row[start:end])
            for populator in populators:
                populator.populate(row, obj)
            for attribute, position in annotations.items():
                setattr(obj, attribute, row[position])
            out.append(obj)
        return out
