"""Rate limits (issue #11, "Abuse"): login by django-axes, the other pages strangers reach and submissions by the
throttle middleware; a clear 429 with Retry-After, and the rule table stays in step with the URLs."""

import os
import threading
import uuid
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.urls import URLResolver, get_resolver

from annotation_site import throttling
from tests.conftest import redis_answers, require

pytestmark = pytest.mark.django_db

# Redis database of these tests' counters: CACHE_URL when it names Redis, else the loopback server's db 13. Each
# test gets a key prefix of its own, so nothing is flushed and concurrent runs do not count each other's requests.
REDIS_CACHE = os.environ.get("CACHE_URL", "") if os.environ.get("CACHE_URL", "").startswith("redis") else ""
REDIS_CACHE = REDIS_CACHE or "redis://127.0.0.1:6379/13"


@pytest.fixture(autouse=True)
def _clock_at_window_start(monkeypatch):
    """The counters use fixed windows (60 and 600 seconds) of the real clock: a test whose requests straddle a
    window's end sees its count restart and the 429 it expects never comes (requests taking 0.1 s have about one
    chance in 600 of straddling a 60-second window's end). The throttle's clock runs as the real one does, shifted
    so that each test starts one second into an hour, hence into every 60- and 600-second window."""
    import time

    now = time.time()
    shift = now - (now // 3600 * 3600 + 1)
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: time.time() - shift))


@pytest.fixture(autouse=True, params=["local memory", "redis"])
def counter_cache(request, settings):
    """Every test here runs on the embedded default cache and on Redis, what production uses (CACHE_URL)."""
    if request.param == "redis":
        require(redis_answers(REDIS_CACHE), f"Redis at {REDIS_CACHE}")
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": REDIS_CACHE,
                "KEY_PREFIX": f"throttle-test-{uuid.uuid4().hex}",
            }
        }
    return request.param


def test_forty_wrong_passwords_then_the_right_one_is_refused(client, monkeypatch):
    """The probe of issue #11: 40 wrong passwords in 13 s, then the right one logged in."""
    get_user_model().objects.create_user("victim", password="the-right-password-42")
    answers = [client.post("/accounts/login/", {"username": "victim", "password": f"guess-{n}"}) for n in range(40)]
    statuses = [a.status_code for a in answers]
    assert statuses[:4] == [200] * 4  # the form again, with its error
    assert set(statuses[5:]) == {429}
    assert b"Sign-in paused" in answers[10].content  # django-axes: this username from this address
    assert b"Too many sign-in" in answers[35].content  # and, past 30 attempts, the address itself
    right = client.post("/accounts/login/", {"username": "victim", "password": "the-right-password-42"})
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session
    # An hour later the address's windows have passed (its counts are keyed by window, so nothing is flushed:
    # a FLUSHDB would empty the counts of a test running beside this one); django-axes, which keeps its own
    # records, still refuses the right password for this username.
    clock = throttling.time.time
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: clock() + 3600))
    right = client.post("/accounts/login/", {"username": "victim", "password": "the-right-password-42"})
    assert right.status_code == 429 and b"even the right" in right.content
    assert "_auth_user_id" not in client.session


def test_a_link_token_of_any_characters_is_counted_under_a_key_every_cache_takes(client):
    """The token of a link is part of its counter's cache key: spaces, control characters and hundreds of
    characters there made a key memcached refuses (Django's CacheKeyWarning, an error in the tests), and two
    tokens alike in their first 200 characters shared a counter."""
    from django.urls import reverse

    for token in ("a b\x01c", "t" * 300, "t" * 300 + "u"):
        assert client.get(reverse("crowd-participant-link", kwargs={"token": token})).status_code < 500
    keys = {throttling._keys(None, ("token",), {"token": token})[0][1] for token in ("t" * 300, "t" * 300 + "u")}
    assert len(keys) == 2


def test_a_few_mistakes_do_not_lock_anyone_out(client):
    get_user_model().objects.create_user("careless", password="the-right-password-42")
    for n in range(3):
        assert client.post("/accounts/login/", {"username": "careless", "password": f"typo-{n}"}).status_code == 200
    right = client.post("/accounts/login/", {"username": "careless", "password": "the-right-password-42"})
    assert right.status_code == 302 and "_auth_user_id" in client.session


def test_invitation_page_is_throttled_per_address(client, settings):
    settings.CAPTIONEVAL_THROTTLE_ACCOUNT_IP = "5/600"
    statuses = [client.get(f"/factuality/invitations/MQ/guess-{n}/").status_code for n in range(8)]
    assert statuses[:5] == [200] * 5 or all(s != 429 for s in statuses[:5])
    assert statuses[5:] == [429] * 3
    refused = client.get("/factuality/invitations/MQ/another/")
    assert int(refused["Retry-After"]) > 0
    assert b"Too many sign-in and invitation attempts" in refused.content and b"Please wait" in refused.content


def test_da_submissions_are_throttled_per_assignment_with_a_json_429(client, settings):
    from assessment import services, workers
    from assessment.models import Item, Judgment
    from tests.assessment.conftest import make_dataset, small_campaign

    settings.CAPTIONEVAL_THROTTLE_SUBMIT_TOKEN = "3/60"
    campaign = small_campaign(make_dataset("throttle", n_videos=12), "throttle")
    assignment = services.assign(campaign, workers.worker_by_external_id("hammer"))
    url = f"/api/da/assignments/{services.assignment_token(assignment)}/judgments/"
    items = list(Item.objects.filter(hit=assignment.hit).order_by("position"))
    statuses = []
    for item in items[:5]:
        response = client.post(
            url,
            {"item": item.pk, "score": 50, "client_uuid": str(uuid.uuid4()), "played": True},
            content_type="application/json",
        )
        statuses.append(response.status_code)
    assert statuses == [201, 201, 201, 429, 429]
    body = response.json()
    assert body["retry_after"] > 0 and body["detail"].startswith("Too many submissions")
    assert Judgment.objects.count() == 3  # refused before the view ran


def test_per_participant_links_are_throttled_per_token(client, settings):
    settings.CAPTIONEVAL_THROTTLE_ENTRY_TOKEN = "2/60"
    statuses = [client.get("/crowd/p/some-token/").status_code for _ in range(4)]
    assert statuses[2:] == [429, 429] and 429 not in statuses[:2]
    assert client.get("/crowd/p/other-token/").status_code != 429  # another token is counted apart


def test_the_window_resets():
    assert throttling.count("account", "ip", "203.0.113.9", now=1000.0) == 0
    for _ in range(29):
        throttling.count("account", "ip", "203.0.113.9", now=1001.0)
    assert throttling.count("account", "ip", "203.0.113.9", now=1002.0) > 0
    assert throttling.count("account", "ip", "203.0.113.9", now=1200.0) == 0  # the next 600-second window


def test_counters_expire_with_their_window(counter_cache):
    from django.core.cache import cache

    throttling.count("submit", "token", "tok-1", now=1000.0)
    key = "throttle:submit:token:tok-1:16"  # 120/60: window 16 holds t = 960 ... 1019
    assert cache.get(key) == 1
    if counter_cache == "redis":
        from django.core.cache import caches

        backend = caches["default"]
        ttl = backend._cache.get_client(None).ttl(backend.make_and_validate_key(key))
        assert 0 < ttl <= 61


@pytest.mark.parametrize("counter_cache", ["redis"], indirect=True)  # only Redis has round trips
def test_one_round_trip_to_redis_per_request_whatever_the_number_of_keys(counter_cache, monkeypatch):
    """A factuality submission is counted under three keys (address, assignment, account): on Redis that is one
    MULTI / EXEC, not an add and an incr (itself two commands) per key."""
    import redis.connection

    sent = []
    real = redis.connection.Connection.send_packed_command

    def counting(self, command, *args, **kwargs):
        sent.append(command)
        return real(self, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counting)
    throttling.count("submit", "ip", "192.0.2.1")  # opens the connection (its handshake is not the count's)
    keys = [("ip", "198.51.100.7"), ("pk", 17), ("user", 4)]
    for _ in range(3):  # the first request creates the counters, the others find them
        sent.clear()
        assert throttling.count_all("submit", keys) == 0
        assert len(sent) == 1


@pytest.mark.parametrize("counter_cache", ["redis"], indirect=True)
def test_counting_makes_no_redis_client_or_pipeline_per_request(counter_cache, monkeypatch):
    """Django's RedisCache makes a new redis-py client object on each ``get_client`` and a pipeline copies its
    reply-parser table again (about 0.2 ms of CPU per request together): the counters are sent through one
    client made once per backend object."""
    import redis.client

    made = []
    real_init = redis.client.Redis.__init__
    real_pipeline = redis.client.Redis.pipeline

    def counting_init(self, *args, **kwargs):
        made.append("client")
        real_init(self, *args, **kwargs)

    def counting_pipeline(self, *args, **kwargs):
        made.append("pipeline")
        return real_pipeline(self, *args, **kwargs)

    monkeypatch.setattr(redis.client.Redis, "__init__", counting_init)
    monkeypatch.setattr(redis.client.Redis, "pipeline", counting_pipeline)
    throttling.count("submit", "ip", "192.0.2.2")  # the first request of this backend object makes its client
    made.clear()
    for _ in range(3):
        assert throttling.count_all("submit", [("ip", "198.51.100.8"), ("pk", 18), ("user", 5)]) == 0
    assert made == []


@pytest.mark.parametrize("counter_cache", ["redis"], indirect=True)
def test_counting_goes_on_after_redis_forgets_its_scripts(counter_cache):
    """A Redis restart (or SCRIPT FLUSH) forgets the counting script: the next request loads it again by
    itself, and the counts go on. The server is not flushed here (SCRIPT FLUSH empties the scripts of every
    database, a test run's beside this one included): the script's SHA1 is made one the server never saw, which
    is what the client meets after a restart (EVALSHA answered NOSCRIPT)."""
    import hashlib

    from django.core.cache import caches

    assert throttling.count_all("submit", [("token", "flushed")], now=5000.0) == 0
    script = throttling._count_script(caches["default"])
    known = script.sha
    script.sha = hashlib.sha1(b"a script this server never loaded").hexdigest()
    throttling.count_all("submit", [("token", "flushed")], now=5000.0)
    assert script.sha == known  # loaded again
    assert caches["default"].get("throttle:submit:token:flushed:83") == 2  # 120/60: window 83 holds t = 4980 ...


def test_concurrent_requests_are_each_counted_once(counter_cache, settings):
    settings.CAPTIONEVAL_THROTTLE_SUBMIT_TOKEN = "25/60"
    waits = []
    barrier = threading.Barrier(8)

    def hammer():
        barrier.wait()
        for _ in range(5):
            waits.append(throttling.count("submit", "token", "shared", now=3000.0))

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(waits) == 40 and sum(1 for wait in waits if wait) == 15  # 40 requests, 25 allowed


def test_every_rule_names_a_url_and_every_stranger_facing_url_has_a_rule():
    names = set()

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
            else:
                names.add(pattern.name)

    walk(get_resolver().url_patterns)
    assert set(throttling.RULES) <= names
    must = {
        "login",
        "password_reset",
        "password_reset_confirm",
        "annotator-invitation",
        "crowd-entry",
        "crowd-participant-link",
        "da-join",
        "api-da-judgments",
        "api-factuality-submit",
        "api-factuality-token-submit",
        "api-factuality-draft",
        "api-factuality-token-draft",
        "api-tasks-submit",
        "api-tasks-draft",
    }
    assert must <= set(throttling.RULES)
