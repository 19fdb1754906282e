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
"""

import uuid

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models.query import get_related_populators

_ATTRIBUTE = "_captioneval_prepared"
_KIND = {int: "whole number", str: "string", uuid.UUID: "UUID"}


class Prepared:
    def __init__(self, build, **sentinels):
        """``build(**values)``: the queryset for ``values`` (keyword arguments named like ``sentinels``)."""
        if len(set(sentinels.values())) != len(sentinels):
            raise ValueError("each sentinel must be distinct")
        if any(type(value) not in (int, str, uuid.UUID) for value in sentinels.values()):
            raise ValueError("sentinels (and values) are whole numbers, strings or UUIDs")
        self.build = build
        self.sentinels = sentinels

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
