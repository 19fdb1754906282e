"""Rate limits on the pages and endpoints that strangers can reach (issue #11, "Abuse").

Login is throttled by django-axes (failed attempts per username and address: ``AXES_*`` settings below in
``settings.py``). Everything else is throttled here, in one middleware that looks the view up by its URL name in
:data:`RULES`, so a view never has to remember it and a new entry point is covered by adding one line:

- ``account``: the login, password-reset and invitation pages, per address (and per token where there is one);
- ``entry``: crowd entry links, per-participant links and the DA join link, per address and per token;
- ``submit``: judgment submissions and draft saves, per assignment (token or id), per account and per address.

Each key kind has its own limit, ``CAPTIONEVAL_THROTTLE_<SCOPE>_<KIND>`` = ``"COUNT/SECONDS"`` (defaults in
:data:`DEFAULT_LIMITS`): an address may stand for a whole lab behind one NAT, so its limits are the loosest; a
study's shared entry link is counted per address only (a study launch brings hundreds of people through one
token in a minute), a per-participant link per token as well. Counts live in Django's cache (fixed windows). Set
``CACHE_URL`` (e.g. ``redis://127.0.0.1:6379/1``) in production so every web process shares them; the default
local-memory cache counts per process. Over the limit a request is answered 429 with a ``Retry-After`` header
and a message saying when to try again (JSON for API paths, a page otherwise), before the view runs.
"""

import hashlib
import time

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import DatabaseError
from django.http import JsonResponse
from django.shortcuts import render

DEFAULT_LIMITS = {
    ("account", "ip"): "30/600",
    ("account", "token"): "10/600",
    ("account", "user"): "10/600",
    ("entry", "ip"): "120/60",
    ("entry", "token"): "30/60",
    ("submit", "ip"): "1200/60",
    ("submit", "token"): "120/60",
    ("submit", "pk"): "120/60",
    ("submit", "user"): "240/60",
}

# url name -> (scope, methods counted or None for all, which keys: "ip", "token", "pk", "user")
RULES = {
    "login": ("account", {"POST"}, ("ip",)),
    "password_reset": ("account", {"POST"}, ("ip",)),
    "password_reset_confirm": ("account", None, ("ip", "token")),
    "password_change": ("account", {"POST"}, ("ip", "user")),
    "annotator-invitation": ("account", None, ("ip", "token")),
    "crowd-entry": ("entry", None, ("ip",)),  # one token shared by a whole study
    "crowd-participant-link": ("entry", None, ("ip", "token")),
    "da-join": ("entry", None, ("ip", "token")),
    "crowd-start": ("entry", {"POST"}, ("ip", "token")),
    "api-da-judgments": ("submit", {"POST"}, ("ip", "token")),
    "api-factuality-submit": ("submit", {"POST"}, ("ip", "pk", "user")),
    "api-factuality-draft": ("submit", {"PUT", "POST"}, ("ip", "pk", "user")),
    "api-factuality-token-submit": ("submit", {"POST"}, ("ip", "token")),
    "api-factuality-token-draft": ("submit", {"PUT", "POST"}, ("ip", "token")),
    "api-tasks-submit": ("submit", {"POST"}, ("ip", "pk", "user")),
    "api-tasks-draft": ("submit", {"PUT", "POST"}, ("ip", "pk", "user")),
}


def limit_of(scope, kind):
    text = (
        getattr(settings, f"CAPTIONEVAL_THROTTLE_{scope.upper()}_{kind.upper()}", None) or DEFAULT_LIMITS[(scope, kind)]
    )
    count, seconds = str(text).split("/")
    return int(count), int(seconds)


def client_ip(request):
    """The address the request came from (``REMOTE_ADDR``: behind a proxy, gunicorn's ``forwarded_allow_ips``
    and the proxy's ``X-Forwarded-For`` handling decide what it is)."""
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _digest(token):
    """A token of the URL as a cache key part: its digest, of fixed length and characters whatever the URL held
    (a token may hold spaces or control characters, and be as long as the request line)."""
    return hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _keys(request, kinds, kwargs):
    keys = []
    for kind in kinds:
        if kind == "ip":
            keys.append((kind, client_ip(request)))
        elif kind == "token" and kwargs.get("token"):
            keys.append((kind, _digest(kwargs["token"])))
        elif kind == "pk" and kwargs.get("pk") is not None:
            keys.append((kind, kwargs["pk"]))
        elif kind == "user" and getattr(request, "user", None) is not None:
            try:
                signed_in = request.user.is_authenticated  # loads the session and the user: database queries
            except DatabaseError:
                # the database is unreachable: count by the other keys and let the view fail, so that
                # annotation_site.database_unavailable answers 503 (an error here would bypass it as a 500)
                continue
            if signed_in:
                keys.append((kind, request.user.pk))
    return keys


def count(scope, kind, key, now=None):
    """Count one request of ``key`` (of ``kind``) in ``scope``; returns seconds to wait when over the limit,
    else 0."""
    return count_all(scope, [(kind, key)], now)


def count_all(scope, keys, now=None):
    """Count one request under each ``(kind, key)`` of ``keys`` in ``scope`` (fixed windows, one per kind's
    limit); returns the longest wait any of them is over its limit by, in seconds, else 0."""
    now = time.time() if now is None else now
    windows = []
    for kind, key in keys:
        limit, window = limit_of(scope, kind)
        bucket = int(now // window)
        windows.append((f"throttle:{scope}:{kind}:{key}:{bucket}", window + 1, limit, (bucket + 1) * window))
    used = _increment([(cache_key, timeout) for cache_key, timeout, _, _ in windows])
    waits = [max(1, int(ends - now)) for (_, _, limit, ends), n in zip(windows, used) if n > limit]
    return max(waits, default=0)


# One round trip for all of a request's counters, atomic (a Lua script runs alone on the server): each counter
# is created with its expiry if it is new (SET NX EX) and incremented; the new counts come back in key order.
_COUNT_SCRIPT = """
local counts = {}
for i, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'NX', 'EX', ARGV[i])
  counts[i] = redis.call('INCR', key)
end
return counts
"""


def _increment(entries):
    """Add one to each ``(cache key, timeout)`` counter, creating it with that timeout; returns the new counts.

    On Redis (``CACHE_URL=redis://...``, what production uses) all of them in one round trip: a script that
    runs ``SET key 0 NX EX timeout`` then ``INCR key`` for each, atomic, so no counter is lost or left without
    expiry. Django's cache API would take three round trips per counter (its ``add``, then ``incr``, which
    first asks whether the key exists): 1.3-1.4 ms of CPU per DA submission (docs/reliability.md). Other caches
    (the embedded default, local memory) go through that API."""
    if not entries:
        return []
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        script = _count_script(backend)
        keys = [backend.make_and_validate_key(cache_key) for cache_key, _ in entries]
        return script(keys=keys, args=[timeout for _, timeout in entries])
    counts = []
    for cache_key, timeout in entries:
        if cache.add(cache_key, 1, timeout=timeout):
            counts.append(1)
            continue
        try:
            counts.append(cache.incr(cache_key))
        except ValueError:  # expired between add and incr
            cache.add(cache_key, 1, timeout=timeout)
            counts.append(1)
    return counts


def _count_script(backend):
    """The counting script, bound to a redis-py client of the backend's first (write) server, made once per
    backend object (one per thread). Django's ``RedisCache`` makes a new client object on every call of its
    ``get_client`` (about 90 us of CPU: it copies redis-py's table of reply parsers), and a pipeline copies it
    again; the script is sent by its SHA1 (EVALSHA), and redis-py loads it again by itself when the server has
    forgotten it (a restart). ``_cache`` and ``get_client`` are the backend's, Django 4.0+ (the throttle tests
    run against a real Redis, so a change there fails them)."""
    script = backend.__dict__.get("_captioneval_count_script")
    if script is None:
        script = backend._cache.get_client(None, write=True).register_script(_COUNT_SCRIPT)
        backend.__dict__["_captioneval_count_script"] = script
    return script


WHAT = {"account": "sign-in and invitation attempts", "entry": "visits to this link", "submit": "submissions"}


def refused(request, scope, wait):
    message = (
        f"Too many {WHAT[scope]} from here in a short time. Please wait {wait} seconds and try again; "
        "nothing you did before was lost."
    )
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message, "retry_after": wait}, status=429)
    else:
        response = render(request, "throttled.html", {"message": message, "wait": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


class ThrottleMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = getattr(request, "resolver_match", None)
        rule = RULES.get(match.url_name) if match is not None else None
        if rule is None:
            return None
        scope, methods, kinds = rule
        if methods is not None and request.method not in methods:
            return None
        wait = count_all(scope, _keys(request, kinds, view_kwargs))
        return refused(request, scope, wait) if wait else None
