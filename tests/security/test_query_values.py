"""Hostile and boundary values in the query string of every page and API read by GET (issue #11, "Prove it" 3:
every input path answers a clear error, never a 5xx; the JSON bodies and the forms have their own boundary
tests, ``test_boundary_values.py`` and ``test_form_boundary_values.py``).

Which parameters a view reads is not listed by hand: each route (the permission matrix's list, as every persona
of the crawl of ``test_forms_fuzz.py``, the participant's steps as well, and the admin's lists as staff, whose
search alone is tried: ``ADMIN_OWN``) is first opened without a query, with
``request.GET`` replaced by a dictionary that notes every name looked up in it (``get``, ``[]``, ``getlist``,
``in``). So a view that starts reading ``?page=`` or ``?format=`` is tried from then on, with nothing to add
here. Then each name a view read is sent, one at a time, with each of ``query_values()``: one past the
database's integer ranges, numbers no column holds, digits of other scripts, text past the longest column,
markup and paths, bytes that are not UTF-8 and a lone surrogate, NUL, the name given twice. The crowd's entry
pages are also opened as participants reach them, with the query their platform adds (``entries_with_their_query``:
the link study's participant id; MTurk's assignmentId, hitId, workerId and turkSubmitTo), and each of those names
is replaced in turn with the others kept: alone, a value reaches only the page's refusal of an incomplete query.

The rules: no answer is a server error, and an answer that refuses (4xx) leaves the database unchanged. Each
request runs in its own rolled-back transaction, logged in inside it.
"""

from urllib.parse import parse_qsl, quote, urlencode

import pytest
from django.core.handlers.wsgi import WSGIRequest, get_bytes_from_wsgi
from django.db import transaction
from django.http import QueryDict
from django.urls import reverse

from .test_boundary_values import integer_bounds, text_lengths
from .test_forms_fuzz import login, pages_beyond_the_routes, personas
from .test_importers_fuzz import table_counts
from .test_permission_matrix import routes
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

READ = set()  # names looked up in the query of the request being noted
# Of the admin's lists (opened as staff), the one parameter that reaches the project's own configuration: the
# search over each model's ``search_fields``. The others (page, facets, pop-up, ...) are Django's own code; all of
# them, tried once (about 7,500 requests, 3-5 minutes), held on both databases on 2026-11-27.
ADMIN_OWN = {"q"}


class NotingQueryDict(QueryDict):
    """``request.GET`` that notes each name a view looks up (copies too: ``copy()`` keeps the class)."""

    def __getitem__(self, key):
        READ.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        READ.add(key)
        return super().get(key, default)

    def getlist(self, key, default=None):
        READ.add(key)
        return super().getlist(key, default)

    def __contains__(self, key):
        READ.add(key)
        return super().__contains__(key)


class NotedGET:
    """In place of ``WSGIRequest.GET`` (a cached property): the query as a ``NotingQueryDict``, kept on the
    request as Django's own is."""

    def __get__(self, request, owner=None):
        if request is None:
            return self
        query = NotingQueryDict(get_bytes_from_wsgi(request.environ, "QUERY_STRING", ""), encoding=request._encoding)
        request.__dict__["GET"] = query
        return query


def query_values():
    """Each value tried in a parameter, as it is written in the query string (percent-encoded)."""
    numbers = [str(n) for n in integer_bounds()] + ["1e308", "9" * 400, "1e20", "NaN", "-inf", "0x1f", "1.5"]
    texts = [
        "",
        " ",
        "x" * (max(text_lengths()) + 1),
        "\u0663",  # ARABIC-INDIC DIGIT THREE
        "\uff11",  # FULLWIDTH DIGIT ONE
        "\u200b",
        "\u202e",
        "<script>alert(1)</script>\"'",
        "../../../etc/passwd",
        '=HYPERLINK("http://x")',
        "\x00",
    ]
    return [quote(value, safe="") for value in numbers + texts] + ["%FF", "%ED%A0%80"]  # not UTF-8, a lone surrogate


def visits(world):
    """(persona, path) of every route each persona opens in the forms' crawl, the participants' steps and, as
    staff, the admin's lists."""
    paths = [
        reverse(name, kwargs=world.kwargs(name, params))
        for name, _, params in routes()
        if not name.startswith("admin:") and not name.endswith("logout")
    ]
    extra = [(persona, path) for persona, path, *data in pages_beyond_the_routes(world) if not data]
    admin = [
        ("staff", reverse(name, kwargs=world.kwargs(name, params)))
        for name, _, params in routes()
        if name.startswith("admin:") and name.endswith("_changelist")
    ]
    every = [(persona, path) for persona in ("staff", "annotator", "anonymous") for path in paths]
    return every + extra + admin + entries_with_their_query(world)


def entries_with_their_query(world):
    """The crowd's entry pages with the query a participant's platform adds: the world's link study with a
    participant id, and an MTurk study's HIT page as MTurk opens it (found this way: a hitId or assignmentId
    longer than its column was a database error on PostgreSQL)."""
    from annotation_site.crowd import links
    from annotation_site.crowd.models import Study

    link = Study.objects.get(name="perm-study")
    mturk = world.mturk_study("query-mturk")
    hit_page = {
        "assignmentId": "3AQUERY",
        "hitId": "3HQUERY",
        "workerId": "AQUERY",
        "turkSubmitTo": "https://www.mturk.com",
    }
    return [
        (
            "anonymous",
            f"{reverse('crowd-entry', args=[links.entry_token(link)])}?{urlencode({link.id_parameter: 'perm-q'})}",
        ),
        ("anonymous", f"{reverse('crowd-entry', args=[links.entry_token(mturk)])}?{urlencode(hit_page)}"),
    ]


def with_value(path, name, value):
    """``path`` with ``name`` set to ``value`` (as written in a query string; None: the name twice), the rest of
    its query kept."""
    base, _, given = path.partition("?")
    kept = [
        f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in parse_qsl(given, keep_blank_values=True) if k != name
    ]
    tried = f"{quote(name)}=1&{quote(name)}=2" if value is None else f"{quote(name)}={value}"
    return f"{base}?{'&'.join([*kept, tried])}", tried


def test_no_query_value_makes_a_page_or_the_api_fail(settings, monkeypatch):
    without_rate_limits(settings)
    world = World()
    clients = personas(world)
    monkeypatch.setattr(WSGIRequest, "GET", NotedGET())
    pages = visits(world)  # (the participants' steps are made here)
    rows = table_counts()  # every request's transaction is rolled back, so this stays the state before each

    def get(persona, path):
        client, user = clients[persona]
        with transaction.atomic():
            login(client, user)
            READ.clear()
            response = client.get(path)
            changed = response.status_code >= 400 and table_counts() != rows
            transaction.set_rollback(True)
        return response, set(READ), changed

    reads = {}  # (persona, path): the names its view looked up
    for persona, path in pages:
        response, names, _ = get(persona, path)
        names = {name for name in names if isinstance(name, str)}  # a lookup of None is no parameter
        if path.startswith("/admin/"):
            names &= ADMIN_OWN
        if response.status_code < 400 and names:
            reads[(persona, path)] = names
    found = set().union(*reads.values())
    # the noting reached the views' own parameters: pages, API filters, downloads, the participant's steps
    assert {"page", "format", "labels", "median_ties", "anonymise", "step", "preset", "q"} <= found, sorted(found)
    assert {"participant_id", "assignmentId", "hitId", "workerId", "turkSubmitTo"} <= found, sorted(
        found
    )  # the entries

    failures, tried = [], 0
    for (persona, path), names in sorted(reads.items()):
        for name in sorted(names):
            for value in [*query_values(), None]:
                full, query = with_value(path, name, value)
                tried += 1
                response, _, changed = get(persona, full)
                shown = query if len(query) < 60 else f"{query[:40]}... ({len(query)} characters)"
                if response.status_code >= 500:
                    failures.append(f"{response.status_code}: {persona} GET {path.partition('?')[0]}?{shown}")
                elif changed:
                    failures.append(
                        f"refused ({response.status_code}), database changed: {persona} {path.partition('?')[0]}?{shown}"
                    )
    assert tried > 2000, tried
    assert not failures, f"{len(failures)} of {tried} requests:\n" + "\n".join(failures)
