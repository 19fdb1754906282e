"""The API's pagination: REST framework's ``?limit=&offset=``, with a largest page.

REST framework's ``LimitOffsetPagination`` takes any ``limit`` by default, and sends it to the database as the
query's LIMIT: ``?limit=99999999999999999999`` was a 500 on PostgreSQL on every list endpoint (bigint out of
range), and a large one reads a whole table into one answer. ``limit`` is now capped at ``MAX_LIMIT`` (a larger one
gives a page of that size, with its ``next`` link, as REST framework does with a cap). ``offset`` needs no cap:
REST framework answers an empty page beyond the last row without a query.
"""

from rest_framework import pagination

MAX_LIMIT = 10_000


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    max_limit = MAX_LIMIT
