"""Who may do what, over every URL the platform serves (issue #11, "Prove it" 4).

The URLs come from Django's URL resolver, so a view added later cannot be forgotten: every named route must be
given an access rule in ``RULES`` below or this test fails naming it. Each route is then requested (GET and an
empty POST) by every persona against a small but complete world (the demo dataset with its factuality project
and DA campaign, a judgment task, a crowd study, a metric report), and the answer is checked against the rule:

- a persona the rule refuses gets 401, 403, 404, 405 or a redirect to a login page, never a 2xx and never a 400
  (a 400 means the view got as far as validating the input, i.e. past its permission check);
- a persona the rule admits is not refused that way;
- nobody ever gets a 5xx.

Routes reached through signed tokens are requested with a valid token (the holder may use it, whoever they are)
and with a tampered one (everyone is refused).
"""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from .world import ABSENT, POSTS, QUERIES, World, without_rate_limits

pytestmark = [pytest.mark.django_db]

STAFF, PUBLIC, LOGGED_IN, MEMBER, OWNER, TOKEN, SIGNED = (
    "staff",
    "public",
    "logged-in",
    "member",
    "owner",
    "token",
    "signed",
)

# Every named route and who may use it. Admin routes are ruled by prefix (all staff-only but the admin's own
# login/logout pages).
RULES = {
    # Django's account pages
    "login": PUBLIC,
    "logout": PUBLIC,
    "password_reset": PUBLIC,
    "password_reset_done": PUBLIC,
    "password_reset_confirm": PUBLIC,
    "password_reset_complete": PUBLIC,
    "password_change": LOGGED_IN,
    "password_change_done": LOGGED_IN,
    "healthz": PUBLIC,
    "annotator-invitation": SIGNED,
    # the REST API root, schema and docs
    "api-root": STAFF,
    "api-schema": STAFF,
    "api-docs": STAFF,
    # corpus and interchange
    "home": LOGGED_IN,
    "dataset-import": STAFF,
    "dataset-detail": STAFF,
    "dataset-export": STAFF,
    "video-add": STAFF,
    "dataset-process-videos": STAFF,
    "video-detail": STAFF,
    "api-dataset-import": STAFF,
    "api-dataset-export": STAFF,
    "dataset-list": STAFF,
    "video-list": STAFF,
    "job-list": STAFF,
    "job-detail": STAFF,
    # factuality
    "factuality-home": LOGGED_IN,
    "factuality-project-create": STAFF,
    "factuality-project": MEMBER,
    "factuality-settings": STAFF,
    # a project's or task's address is shared with everyone: staff get its management page, members are sent on
    # to their work page, anybody else is refused there
    "factuality-status": STAFF,
    "factuality-invite": STAFF,
    "factuality-reissue": STAFF,
    "factuality-aggregate": STAFF,
    "factuality-report": STAFF,
    "factuality-chart": STAFF,
    "factuality-export-factvc": STAFF,
    "factuality-export-raw": STAFF,
    "factuality-import-raw": STAFF,
    "factuality-work": MEMBER,
    "factuality-start": MEMBER,
    "factuality-instructions": MEMBER,
    "factuality-annotate": OWNER,
    "factuality-annotate-token": TOKEN,
    "factuality-annotate-token-instructions": TOKEN,
    "api-factuality-projects": STAFF,
    "api-factuality-project": STAFF,
    "api-factuality-invite": STAFF,
    "api-factuality-reissue": STAFF,
    "api-factuality-aggregate": STAFF,
    "api-factuality-agreement": STAFF,
    "api-factuality-labels": STAFF,
    "api-factuality-export": STAFF,
    "api-factuality-next": MEMBER,
    "api-factuality-draft": OWNER,
    "api-factuality-submit": OWNER,
    "api-factuality-token-draft": TOKEN,
    "api-factuality-token-submit": TOKEN,
    # Direct Assessment
    "da-campaigns": STAFF,
    "da-campaign-create": STAFF,
    "da-campaign": STAFF,
    "da-campaign-qc": STAFF,
    "da-campaign-assign": STAFF,
    "da-campaign-report": STAFF,
    "da-campaign-captions": STAFF,
    "da-campaign-judgments": STAFF,
    "da-judgments-import": STAFF,
    "da-replication": STAFF,
    "da-rate": LOGGED_IN,
    "da-rate-token": TOKEN,
    "da-join": TOKEN,
    "api-da-replication": STAFF,
    "api-da-campaign-judgments": STAFF,
    "api-da-campaign-list": STAFF,
    "api-da-campaign-detail": STAFF,
    "api-da-campaign-assignments": STAFF,
    "api-da-campaign-captions": STAFF,
    "api-da-campaign-qc": STAFF,
    "api-da-campaign-results": STAFF,
    "api-da-assignment": TOKEN,
    "api-da-judgments": TOKEN,
    # configurable judgment tasks
    "tasks-home": LOGGED_IN,
    "tasks-create": STAFF,
    "tasks-detail": MEMBER,
    "tasks-settings": STAFF,
    "tasks-invite": STAFF,
    "tasks-participant-link": STAFF,
    "tasks-status": STAFF,
    "tasks-import": STAFF,
    "tasks-report": STAFF,
    "tasks-chart": STAFF,
    "tasks-download": STAFF,
    "tasks-work": MEMBER,
    "tasks-start": MEMBER,
    "tasks-instructions": MEMBER,
    "tasks-annotate": OWNER,
    "tasks-participant": TOKEN,
    "tasks-participant-next": TOKEN,
    "tasks-participant-done": TOKEN,
    "tasks-participant-item": TOKEN,
    "api-tasks": STAFF,
    "api-tasks-presets": STAFF,
    "api-tasks-detail": STAFF,
    "api-tasks-invite": STAFF,
    "api-tasks-participants": STAFF,
    "api-tasks-items": STAFF,
    "api-tasks-model-answers": STAFF,
    "api-tasks-report": STAFF,
    "api-tasks-labels": STAFF,
    "api-tasks-answers": STAFF,
    "api-tasks-next": MEMBER,
    "api-tasks-draft": OWNER,
    "api-tasks-submit": OWNER,
    # metrics
    "metrics-index": STAFF,
    "metrics-dataset": STAFF,
    "metrics-compute": STAFF,
    "metrics-import": STAFF,
    "metrics-pairs-import": STAFF,
    "metrics-delete": STAFF,
    "metrics-campaign": STAFF,
    "metrics-report": STAFF,
    "metrics-report-csv": STAFF,
    "metrics-report-json": STAFF,
    "metrics-report-figure": STAFF,
    "api-metrics-list": STAFF,
    "api-metrics-detail": STAFF,
    "api-metrics-scores": STAFF,
    "api-metrics-compute": STAFF,
    "api-metrics-import": STAFF,
    "api-metrics-pairs": STAFF,
    "api-metrics-correlate": STAFF,
    "metrics-report-api-list": STAFF,
    "metrics-report-api-detail": STAFF,
    # crowd work
    "crowd-entry": TOKEN,
    "crowd-participant-link": TOKEN,
    "crowd-participant": TOKEN,
    "crowd-consent": TOKEN,
    "crowd-practice": TOKEN,
    "crowd-start": TOKEN,
    "crowd-finish": TOKEN,
    "crowd-webhook-prolific": SIGNED,
    "crowd-studies": STAFF,
    "crowd-study-create": STAFF,
    "crowd-study": STAFF,
    "crowd-mturk-file": STAFF,
    "crowd-study-action": STAFF,
    "crowd-study-links": STAFF,
    "crowd-mturk-batch": STAFF,
    "crowd-payments": STAFF,
    "crowd-ledger-csv": STAFF,
    "crowd-worker": STAFF,
    "api-crowd-studies": STAFF,
    "api-crowd-study": STAFF,
    "api-crowd-study-action": STAFF,
    "api-crowd-payments": STAFF,
    "api-crowd-resolve": STAFF,
    "api-crowd-verify-code": STAFF,
}
ADMIN_PUBLIC = {"admin:login", "admin:logout"}

PERSONAS = ("anonymous", "annotator", "other_annotator", "account", "staff")


def routes():
    """(qualified name, regex of the full path, parameter names) of every named route."""
    found = []

    def walk(patterns, prefix, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                inner = namespace
                if entry.namespace:
                    inner = f"{namespace}:{entry.namespace}" if namespace else entry.namespace
                walk(entry.url_patterns, prefix + _regex(entry.pattern), inner)
            elif isinstance(entry, URLPattern) and entry.name:
                name = f"{namespace}:{entry.name}" if namespace else entry.name
                regex = prefix + _regex(entry.pattern)
                if "format" in re.compile(regex.replace("^", "")).groupindex:
                    continue  # DRF's ".json" suffix twins of routes listed anyway
                found.append((name, regex, tuple(re.compile(regex.replace("^", "")).groupindex)))

    walk(get_resolver().url_patterns, "", "")
    return found


def _regex(pattern):
    return pattern.regex.pattern.lstrip("^").rstrip("$").replace("\\Z", "")


def rule_for(name):
    if name.startswith("admin:"):
        return PUBLIC if name in ADMIN_PUBLIC else STAFF
    return RULES.get(name)


def test_every_route_has_an_access_rule():
    missing = sorted({name for name, _, _ in routes() if rule_for(name) is None})
    assert not missing, f"routes with no rule in RULES (say who may use them): {missing}"
    stale = sorted(set(RULES) - {name for name, _, _ in routes()})
    assert not stale, f"rules for routes that no longer exist: {stale}"


# --- the requests ---------------------------------------------------------------------------------------------

LOGIN_PAGES = ("/accounts/login/", "/admin/login/")


def outcome(response):
    """ "error", "refused" (401/403/404/405, or redirected to a login page) or "admitted" (anything else).
    Redirects are followed, so a page that sends a visitor on to another one is judged by where they land."""
    if response.status_code >= 500:
        return "error"
    if any(location.startswith(LOGIN_PAGES) for location, _ in response.redirect_chain):
        return "refused"
    if response.status_code in (401, 403, 404, 405):
        return "refused"
    return "admitted"


def tampered(token):
    """The same token with the first character of its signature changed (the last one may carry only padding
    bits, which base64 decoding ignores)."""
    head, _, signature = token.rpartition(":")
    return f"{head}:{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"


def expectation(rule, persona):
    """True: admitted (by one of GET, POST, PUT), False: refused (all), None: only "no server error" is checked."""
    if rule == STAFF:
        return persona == "staff"
    if rule == LOGGED_IN:
        return persona != "anonymous"
    if rule in (MEMBER, OWNER):
        return {"annotator": True, "staff": None}.get(persona, False)
    return None  # PUBLIC, SIGNED, TOKEN (checked with valid and tampered tokens below)


def client_for(persona, world, client):
    client.raise_request_exception = False  # a server error is one finding among others, reported with its URL
    if persona != "anonymous":
        client.force_login(world.users[persona])
    return client


def request_both(client, path, name=""):
    """GET, a POST (empty unless POSTS says) and an empty JSON PUT (draft endpoints take PUT only)."""
    path += QUERIES.get(name, "")
    return [
        client.get(path, follow=True),
        client.post(path, data=POSTS.get(name, {}), follow=True),
        client.put(path, data="{}", content_type="application/json", follow=True),
    ]


def check_persona(persona, world, client):
    """What ``persona`` got that its rules do not allow, one line each."""
    from django.urls import reverse

    client = client_for(persona, world, client)
    problems = []
    for name, _, params in routes():
        if name.startswith("admin:") and persona not in ("anonymous", "account"):
            continue  # the admin lets in staff accounts only: the two personas without one stand for the others
        rule = rule_for(name)
        path = reverse(name, kwargs=world.kwargs(name, params))
        results = [outcome(r) for r in request_both(client, path, name)]
        if name.endswith("logout"):
            client = client_for(persona, world, client)
        responses = ",".join(results)
        if "error" in results:
            problems.append(f"{name} {path}: server error ({responses})")
            continue
        expected = expectation(rule, persona)
        if expected and name in ABSENT:
            continue  # answered 404 for an object the world doesn't have
        if expected is True and "admitted" not in results:
            problems.append(f"{name} {path}: {persona} should be admitted ({rule}) but got {responses}")
        if expected is False and set(results) != {"refused"}:
            problems.append(f"{name} {path}: {persona} should be refused ({rule}) but got {responses}")
    return problems


def test_each_persona_reaches_exactly_what_its_rules_allow(settings, django_user_model):
    """One world, every persona in turn with a client of its own; staff last, whose requests change things."""
    from django.test import Client

    without_rate_limits(settings)
    settings.PROLIFIC_WEBHOOK_SECRET = "perm-check-secret"  # configured, so that signatures are really checked
    world = World()
    problems = []
    for persona in PERSONAS:
        problems += check_persona(persona, world, Client())
    assert not problems, "\n".join(problems)


def test_signed_links_work_for_whoever_holds_them_and_not_when_tampered_with(client):
    from django.urls import reverse

    world = World()
    client.raise_request_exception = False
    problems = []
    for name, _, params in routes():
        if rule_for(name) != TOKEN:
            continue
        kwargs = world.kwargs(name, params)
        valid = reverse(name, kwargs=kwargs)
        forged = reverse(name, kwargs=dict(kwargs, token=tampered(kwargs["token"])))
        good = [outcome(r) for r in request_both(client, valid, name)]
        # a forged token may also be answered "400 this link does not work": it is refused before anything else
        bad = [outcome(r) if r.status_code != 400 else "refused" for r in request_both(client, forged, name)]
        if "error" in good or "admitted" not in good:
            problems.append(f"{name}: a valid link gives {good}")
        if set(bad) != {"refused"}:
            problems.append(f"{name}: a tampered link gives {bad}")
    assert not problems, "\n".join(problems)
