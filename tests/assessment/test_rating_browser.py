"""A worker rates a short HIT in real headless Chromium: the slider starts unset, "Submit" stays disabled until
the video has played and the slider has moved, the next item appears without a page reload (progress
advances), keyboard control works, a double click stores one judgment, and the stored rows are checked."""

import pytest

from assessment import services, workers
from assessment.models import Item, Judgment, QCResult
from tests.clips import clip_campaign
from tests.conftest import wait_until

pytestmark = [pytest.mark.browser]


@pytest.fixture
def rating_campaign(transactional_db, celery_worker, tmp_path):
    return clip_campaign("da-browser", tmp_path)


def enabled(page):
    return page.evaluate("() => !document.querySelector('[data-role=submit]').disabled")


def play(page):
    page.evaluate("() => document.querySelector('video.da-video').play()")


def test_a_worker_rates_a_short_hit(page, live_server, rating_campaign):
    assignment = services.assign(rating_campaign, workers.worker_by_external_id("browser-worker"))
    items = list(Item.objects.filter(hit=assignment.hit).order_by("position"))
    page.goto(f"{live_server.url}/da/a/{services.assignment_token(assignment)}/")
    page.evaluate("() => { window.loadedOnce = 'yes'; }")  # gone if the page ever reloads
    progress = page.locator("[data-role=progress]")
    slider = page.locator("[data-role=slider]")
    assert progress.inner_text() == "Item 1 of 10"
    assert page.locator(".da-statement").inner_text() == "The text adequately describes what took place in the video."
    assert page.locator("[data-role=caption]").inner_text() == items[0].text
    assert "is-unset" in slider.get_attribute("class") and page.locator("[data-role=value]").inner_text().strip() == ""
    assert not enabled(page)

    scores = {}
    for n, item in enumerate(items):
        assert progress.inner_text() == f"Item {n + 1} of 10"
        assert page.locator("[data-role=caption]").inner_text() == item.text
        assert not enabled(page)
        if n % 2 == 0:  # slider first: still disabled until the video has played
            slider.fill(str(10 * n + 5))
            page.wait_for_timeout(150)
            assert not enabled(page)
            play(page)
            page.wait_for_function("() => !document.querySelector('[data-role=submit]').disabled", timeout=15_000)
        else:  # video first: still disabled until the slider moves; then the keyboard
            play(page)
            page.wait_for_function("() => document.querySelector('[data-role=play-hint]').hidden", timeout=15_000)
            assert not enabled(page)
            slider.focus()
            for _ in range(3):
                page.keyboard.press("ArrowRight")  # from the unset middle: 51, 52, 53
            assert slider.input_value() == "53"
            assert enabled(page)
        scores[item.pk] = int(slider.input_value())
        if n == 3:
            page.locator("[data-role=submit]").dblclick()  # a double click stores once
        elif n % 2:
            page.keyboard.press("Enter")
        else:
            page.locator("[data-role=submit]").click()
        if n + 1 < len(items):
            page.wait_for_function(
                f"() => document.querySelector('[data-role=progress]').textContent === 'Item {n + 2} of 10'",
                timeout=10_000,
            )
            assert "is-unset" in slider.get_attribute("class")

    page.wait_for_selector("[data-role=done]:not([hidden])", timeout=10_000)
    assert page.locator("[data-role=code]").inner_text() == services.completion_code(assignment)
    assert page.evaluate("() => window.loadedOnce") == "yes"  # every item came without a reload
    stored = list(Judgment.objects.filter(assignment=assignment).order_by("item__position"))
    assert [j.item_id for j in stored] == [i.pk for i in items]
    assert {j.item_id: j.score for j in stored} == scores
    assert all(j.played and j.watched_seconds > 0.5 and j.seconds > 0 for j in stored)
    assignment.refresh_from_db()
    assert assignment.completed_at is not None
    wait_until(
        lambda: QCResult.objects.filter(campaign=rating_campaign, worker=assignment.worker).exists(),
        timeout=60,
        what="the QC task after the completed HIT",
    )
