"""Hostile and boundary values in the request headers of every page and API read by GET, and every route posted
each kind of malformed body (issue #11, "Prove it" 3; the query string has ``test_query_values.py``, the fields of
forms and JSON bodies their own boundary tests).

Which headers are read is not listed by hand: each route is first opened (as in ``test_query_values.py``: every
persona, the participants' steps, the admin's lists as staff, the crowd's entries with their platform's query)
with the request's environ replaced by a dictionary that notes every ``HTTP_*`` name looked up in it, and
``request.headers`` noting each name looked up there, by the middleware, Django, the REST framework or the view.
On 2026-11-27 that was ``Host``, ``Cookie`` and ``User-Agent`` on every page and ``Accept`` on the API's (its
content negotiation); a header a view starts reading is tried from then on. A header that every page reads is
tried on one page of each kind per persona (the first of each first path segment), any other header on each page
that reads it. Each is sent, one at a time, with each of ``header_values()``: text past what servers accept in
one line, bytes that are not UTF-8 (a WSGI server hands headers over as Latin-1 text), markup, numbers past every
range, malformed lists, ranges and quality values, control characters.

The bodies (``bodies()``) are posted as staff to every route of the resolver: multipart without a boundary or cut
off, charsets that do not exist, bytes that are not UTF-8, no type or one of 8,000 characters. That found no
server error but three refusals that changed the database: a researcher who is no member asking for a project's
next video or a task's next item got an annotator record with the 403, and a participant pressing Start in a full
DA study a worker record with the 409 (fixed, with tests of their own).

A POST's headers are found the same way, on every route posted by staff, an annotator, a task participant and
someone anonymous with CSRF enforced over HTTPS behind a proxy, as in production: on 2026-11-27 that added
``Origin``, ``X-CSRFToken`` and ``X-Forwarded-Proto`` (Django's CSRF check and scheme), ``Authorization`` (the REST
framework's authentication), ``X-Participant-Token`` (task participants) and the Prolific webhook's
``X-Prolific-Request-Signature`` / ``-Timestamp``: 2,660 requests, no server error.

The rules: no answer is a server error, and an answer that refuses (4xx) leaves the database unchanged. Each
request runs in its own rolled-back transaction, logged in inside it.
"""

import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.db import transaction
from django.http.request import HttpHeaders
from django.test import Client
from django.urls import reverse

from .test_forms_fuzz import login, personas
from .test_importers_fuzz import table_counts
from .test_permission_matrix import routes
from .test_query_values import visits
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

READ = set()  # the HTTP_* names looked up in the environ of the request being noted


class NotingEnviron(dict):
    """A request's environ (``request.META``) that notes each header name looked up."""

    def _note(self, key):
        if isinstance(key, str) and key.startswith("HTTP_"):
            READ.add(key)

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._note(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)


def noting_headers(original):
    """In place of ``HttpHeaders.__getitem__`` (``request.headers``, which ``get`` and ``in`` go through too)."""

    def __getitem__(headers, key):
        READ.add("HTTP_" + key.upper().replace("-", "_"))
        return original(headers, key)

    return __getitem__


def header_values():
    """Each value tried in a header, as a WSGI server hands it over (text of Latin-1 characters)."""
    return [
        "",
        " ",
        "\t",
        "x" * 8000,  # gunicorn's limit for one header line is 8190 bytes
        "\xff\xfe",  # not UTF-8
        "Ã©tÃ©",  # UTF-8 read as Latin-1
        "\x7f\x01",
        "\x00",
        "<script>alert(1)</script>\"'",
        "../../../etc/passwd",
        '=HYPERLINK("http://x")',
        "-1",
        "9" * 400,
        "NaN",
        ",,,",
        ";;==",
        "*/*;q=NaN, text/html;q=1e400",
        "bytes=99999999999999999999-, -0, 5-1",
        "gzip;q=-1, *;q=2",
    ]


def test_no_header_value_makes_a_page_or_the_api_fail(settings, monkeypatch):
    without_rate_limits(settings)
    world = World()
    clients = personas(world)
    original = WSGIRequest.__init__
    monkeypatch.setattr(WSGIRequest, "__init__", lambda request, environ: original(request, NotingEnviron(environ)))
    monkeypatch.setattr(HttpHeaders, "__getitem__", noting_headers(HttpHeaders.__getitem__))
    pages = visits(world)
    rows = table_counts()  # every request's transaction is rolled back, so this stays the state before each

    def get(persona, path, headers=None):
        client, user = clients[persona]
        with transaction.atomic():
            login(client, user)
            READ.clear()
            response = client.get(path, **(headers or {}))
            changed = response.status_code >= 400 and table_counts() != rows
            transaction.set_rollback(True)
        return response, set(READ), changed

    reads = {}  # (persona, path): the headers read on the way to its answer
    for persona, path in pages:
        response, names, _ = get(persona, path)
        if response.status_code < 400:
            reads[(persona, path)] = names
    everywhere = set.intersection(*reads.values())
    found = set().union(*reads.values())
    # the noting reached the middleware's headers and the views' and libraries' own
    assert {"HTTP_HOST", "HTTP_COOKIE"} <= everywhere, sorted(everywhere)
    assert {"HTTP_ACCEPT"} <= found, sorted(found)

    kinds = {}
    for persona, path in sorted(reads):
        kinds.setdefault((persona, path.strip("/").split("/")[0]), path)
    plan = []
    for (persona, path), names in sorted(reads.items()):
        tried = names - everywhere
        if kinds.get((persona, path.strip("/").split("/")[0])) == path:
            tried |= everywhere
        plan += [(persona, path, name) for name in sorted(tried)]

    try_every_value(plan, get, "GET")


def try_every_value(plan, send, method):
    """Each ``(persona, path, header)`` of ``plan`` sent with each of ``header_values()`` through ``send`` (which
    answers ``(response, headers read, whether a refusal changed the database)``): no server error, and no
    refusal that changed the database."""
    failures = []
    for persona, path, name in plan:
        for value in header_values():
            response, _, changed = send(persona, path, {name: value})
            shown = value if len(value) < 40 else f"{value[:20]}... ({len(value)} characters)"
            if response.status_code >= 500:
                failures.append(f"{response.status_code}: {persona} {method} {path} with {name}={shown!r}")
            elif changed:
                failures.append(f"refused ({response.status_code}), database changed: {persona} {method} {path} {name}")
    tried = len(plan) * len(header_values())
    assert tried > 1500, tried
    assert not failures, f"{len(failures)} of {tried} requests:\n" + "\n".join(failures)


def bodies():
    """(Content-Type, body) pairs a client may send with a POST: a multipart body without a boundary, with an
    empty or non-ASCII one, cut off inside a part; charsets that do not exist or that Python cannot decode a form
    with; bytes that are not UTF-8 as JSON; no type at all, and a type of 8,000 characters."""
    part = b'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\npilot'
    return [
        ("multipart/form-data", b"name=pilot"),
        ("multipart/form-data; boundary=", b"--\r\n"),
        ("multipart/form-data; boundary=\xff", b"--\xff\r\n"),
        ("multipart/form-data; boundary=b", part),
        ('multipart/form-data; boundary=b; charset="', part + b"\r\n--b--\r\n"),
        ("application/x-www-form-urlencoded; charset=no-such-charset", b"name=pilot"),
        ("application/x-www-form-urlencoded; charset=utf-16", b"name=pilot"),
        ("application/x-www-form-urlencoded", b"name=%ff%fe&%ff=1"),
        ("application/json; charset=utf-7", b'{"name": "pilot"}'),
        ("application/json", b"\xff\xfe{"),
        ("text/plain; charset=\xff", b"name=pilot"),
        ("", b"name=pilot"),
        ("x" * 8000, b"name=pilot"),
    ]


def test_no_request_body_type_makes_a_route_fail(settings):
    """Every route of the resolver (but the admin's and log-out), as staff, posted each of ``bodies()``: the
    middleware reads every POST's form fields (the NUL check), the REST framework parses by the type, the
    views read their forms."""
    without_rate_limits(settings)
    settings.PROLIFIC_WEBHOOK_SECRET = "a-secret-for-the-signature-check"  # (else the webhook answers 503)
    world = World()
    client = Client(raise_request_exception=False)
    rows = table_counts()
    failures, tried = [], 0
    for name, _, params in routes():
        if name.startswith("admin:") or name.endswith("logout"):
            continue
        path = reverse(name, kwargs=world.kwargs(name, params))
        for content_type, body in bodies():
            tried += 1
            with transaction.atomic():
                login(client, world.users["staff"])
                response = client.generic("POST", path, body, content_type=content_type)
                changed = response.status_code >= 400 and table_counts() != rows
                transaction.set_rollback(True)
            shown = content_type if len(content_type) < 60 else f"{content_type[:20]}... ({len(content_type)})"
            if response.status_code >= 500:
                failures.append(f"{response.status_code}: POST {path} ({name}) as {shown!r}: {body[:30]!r}")
            elif changed:
                failures.append(f"refused ({response.status_code}), database changed: POST {path} as {shown!r}")
    assert tried > 1500, tried
    assert not failures, f"{len(failures)} of {tried} requests:\n" + "\n".join(failures)


CSRF_SECRET = "k" * 32  # a CSRF cookie Django accepts (CSRF_SECRET_LENGTH characters), sent back as the token


def test_no_header_value_makes_a_post_fail(settings, monkeypatch):
    """The headers of a POST, found the way the GET test finds them: every route (but the admin's and log-out)
    posted an empty form by staff, an annotator, a task participant (its signed token in X-Participant-Token) and
    someone anonymous, as production receives it: CSRF enforced, over HTTPS behind the proxy production trusts
    (``X-Forwarded-Proto``), so Django's CSRF check reads ``Origin`` and ``Referer``, and the Prolific webhook
    its signature headers. Routes that a persona's request reaches with the same set of headers read are one
    group; on the first route of each group each header of its set is then sent with each of
    ``header_values()``, the other headers valid (a matching CSRF cookie and token, the site's own origin)."""
    without_rate_limits(settings)
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.PROLIFIC_WEBHOOK_SECRET = "a-secret-for-the-signature-check"  # (else the webhook answers 503)
    world = World()
    valid = {
        "HTTP_HOST": "testserver",
        "HTTP_X_FORWARDED_PROTO": "https",
        "HTTP_ORIGIN": "https://testserver",
        "HTTP_REFERER": "https://testserver/",
        "HTTP_X_CSRFTOKEN": CSRF_SECRET,
    }
    personas = {
        "staff": (world.users["staff"], {}),
        "annotator": (world.users["annotator"], {}),
        "participant": (None, {"HTTP_X_PARTICIPANT_TOKEN": world.ids["task_token"]}),
        "anonymous": (None, {}),
    }
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    original = WSGIRequest.__init__
    monkeypatch.setattr(WSGIRequest, "__init__", lambda request, environ: original(request, NotingEnviron(environ)))
    monkeypatch.setattr(HttpHeaders, "__getitem__", noting_headers(HttpHeaders.__getitem__))
    rows = table_counts()

    def post(persona, path, replaced=None):
        user, own = personas[persona]
        with transaction.atomic():
            login(client, user)
            client.cookies["csrftoken"] = CSRF_SECRET
            READ.clear()
            response = client.post(path, {}, **{**valid, **own, **(replaced or {})})
            changed = response.status_code >= 400 and table_counts() != rows
            transaction.set_rollback(True)
        return response, set(READ), changed

    failures, reads = [], {}
    for name, _, params in routes():
        if name.startswith("admin:") or name.endswith("logout"):
            continue
        path = reverse(name, kwargs=world.kwargs(name, params))
        for persona in personas:
            response, names, changed = post(persona, path)
            reads[(persona, path)] = names
            if response.status_code >= 500 or changed:
                failures.append(f"{response.status_code} (database changed: {changed}): {persona} POST {path}")
    assert not failures, "with valid headers:\n" + "\n".join(failures)
    everywhere = set.intersection(*reads.values())
    found = set().union(*reads.values())
    # the noting reached Django's CSRF check, the proxy's scheme, the participant token and the webhook's signature
    assert {"HTTP_HOST", "HTTP_COOKIE"} <= everywhere, sorted(everywhere)
    noted = {"ORIGIN", "X_CSRFTOKEN", "X_FORWARDED_PROTO", "X_PARTICIPANT_TOKEN", "X_PROLIFIC_REQUEST_SIGNATURE"}
    assert {f"HTTP_{name}" for name in noted} <= found, sorted(found)

    # The routes that a persona's request reaches with the same headers read handle those headers alike (the
    # middleware, the CSRF check, the authentication's): the first of each such group is tried, with each of
    # them but the body's own (the body test's).
    groups = {}
    for (persona, path), names in sorted(reads.items()):
        groups.setdefault((persona, frozenset(names)), path)
    plan = [
        (persona, path, name)
        for (persona, names), path in sorted(groups.items(), key=lambda group: (group[0][0], group[1]))
        for name in sorted(names - {"HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"})
    ]
    try_every_value(plan, post, "POST")
