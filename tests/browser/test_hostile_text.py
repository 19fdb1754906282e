"""Text that people and imports supply (system names, captions, references, worker ids, annotator names, task
item fields) carrying a script and attribute-breaking quotes renders inert on every page, chart and admin view,
checked in Chromium (issue #11, "Prove it" 4).

Every route of the URL resolver is opened by GET in a real browser: as staff for the researcher's pages and the
admin, anonymously with the world's signed tokens for participants' pages. The payloads set ``window.__xss`` if
they ever run (an inline script, an ``onerror`` handler, a broken-out attribute); any dialog counts too.
"""

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from tests.security.test_permission_matrix import TOKEN, routes, rule_for
from tests.security.world import World, without_rate_limits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# No spaces, so that it stays one token of a sentence: a script element, then quotes breaking out of an
# attribute into an element whose handler runs on load.
PAYLOAD = "<script>window.__xss=1</script>\"'><svg/onload=window.__xss=1>"


def make_hostile(world):
    """Put the payload into every kind of text the pages show."""
    from annotation_site.annotators.models import Annotator
    from annotation_site.corpus.models import Caption, Reference, Sentence, System
    from annotation_site.judgment_tasks.models import Item
    from assessment.models import Worker

    for n, system in enumerate(System.objects.filter(dataset=world.dataset, is_human=False).order_by("pk")):
        System.objects.filter(pk=system.pk).update(name=f"S{n}{PAYLOAD}"[:100])
    sentences = list(Sentence.objects.filter(caption__video__dataset=world.dataset))
    for sentence in sentences:  # the last word becomes the payload: token count (and so every span) unchanged
        sentence.tokens = sentence.tokens[:-1] + [PAYLOAD]
        sentence.text = " ".join(sentence.tokens)
    Sentence.objects.bulk_update(sentences, ["tokens", "text"])
    Caption.objects.filter(video__dataset=world.dataset).update(prompt=f"describe {PAYLOAD}")
    Reference.objects.filter(video__dataset=world.dataset).update(text=f"a reference {PAYLOAD}")
    for worker in Worker.objects.order_by("pk")[:3]:
        Worker.objects.filter(pk=worker.pk).update(external_id=f"w{worker.pk}{PAYLOAD}"[:200])
    Annotator.objects.update(display_name=PAYLOAD[:100])
    Item.objects.update(fields={"text": f"an item {PAYLOAD}"})


def visit(page, url, found):
    page.goto(url, wait_until="load", timeout=30_000)
    if page.evaluate("() => window.__xss") is not None:
        found.append(url)


def renders(client, path):
    """Whether a GET of ``path`` answers a page or a figure (not a download, a redirect or an error)."""
    response = client.get(path)
    kind = response.get("Content-Type", "")
    return (
        response.status_code == 200
        and "attachment" not in response.get("Content-Disposition", "")
        and kind.startswith(("text/html", "image/svg+xml"))
    )


def test_hostile_text_never_runs_on_any_page(live_server, browser, settings):
    without_rate_limits(settings)
    world = World()
    make_hostile(world)
    client = Client()
    client.force_login(world.users["staff"])
    session = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    clients = {"staff": client, "anonymous": Client()}

    staff = browser.new_context()
    staff.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    anonymous = browser.new_context()
    found, dialogs, seen = [], [], 0
    for context in (staff, anonymous):
        context.on("page", lambda p: p.on("dialog", lambda d: (dialogs.append(p.url), d.dismiss())))
    pages = {"staff": staff.new_page(), "anonymous": anonymous.new_page()}
    for page in pages.values():
        page.on("dialog", lambda d, page=page: (dialogs.append(page.url), d.dismiss()))
    try:
        for name, _, params in routes():
            rule = rule_for(name)
            if name.endswith("logout") or (name.startswith("admin:") and "delete" in name):
                continue
            path = reverse(name, kwargs=world.kwargs(name, params))
            who = "anonymous" if rule == TOKEN else "staff"
            if renders(clients[who], path):
                visit(pages[who], live_server.url + path, found)
                seen += 1
    finally:
        staff.close()
        anonymous.close()
    assert seen > 100, seen  # pages and figures (downloads, redirects and POST-only routes aside)
    assert not found, f"the payload ran on: {found}"
    assert not dialogs, f"dialogs opened on: {dialogs}"
