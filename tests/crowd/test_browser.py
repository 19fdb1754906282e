"""Crowd work in real headless Chromium, on a phone-sized screen (390 x 844) where participants often are:

- a Prolific participant arrives with PROLIFIC_PID / STUDY_ID / SESSION_ID (checked against the fake Prolific
  server), consents, does a practice item (feedback, not stored), rates a HIT and lands on Prolific's completion
  URL with the study's code (the request to app.prolific.com is intercepted: nothing leaves the machine);
- an MTurk preview shows the task with disabled inputs; an accepted assignment ends in a POST to
  turkSubmitTo/mturk/externalSubmit (intercepted and checked);
- an expired and a reused per-participant link are refused with a clear page.
No page may scroll sideways at 390 px."""

from datetime import timedelta
from decimal import Decimal
from urllib.parse import parse_qs

import pytest
from django.utils import timezone

from annotation_site.crowd import admission, links
from annotation_site.crowd.models import Participation, PracticeItem
from assessment.models import HIT, Assignment, Judgment
from tests.clips import clip_campaign

from .conftest import study_of

pytestmark = [pytest.mark.browser]
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def campaign(transactional_db, tmp_path):
    return clip_campaign("crowd-browser", tmp_path, workers_per_hit=1)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    yield page
    context.close()


def no_sideways_scroll(page):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} is {width} px wide"


def rate_hit(page):
    """Rate every item of the rating page as a participant does: play the video, move the slider, submit."""
    total = int(page.locator("[data-role=progress-bar]").get_attribute("max"))
    for n in range(total):
        page.wait_for_function(
            f"() => document.querySelector('[data-role=progress]').textContent === 'Item {n + 1} of {total}'",
            timeout=15_000,
        )
        no_sideways_scroll(page)
        page.wait_for_selector("video.da-video", timeout=15_000)
        page.evaluate("() => document.querySelector('video.da-video').play()")
        page.locator("[data-role=slider]").fill(str(20 + 5 * n))
        page.wait_for_function("() => !document.querySelector('[data-role=submit]').disabled", timeout=15_000)
        page.locator("[data-role=submit]").click()


def test_a_prolific_participant_from_arrival_to_the_completion_url(
    phone, live_server, campaign, fake_prolific, settings
):
    settings.PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete"
    external = fake_prolific.add_study(total_available_places=campaign.hits.count())
    study = study_of(
        "da",
        campaign,
        "browser-prolific",
        provider="prolific",
        external_id=external,
        completion_code="CBROWSE7",
        reward=Decimal("1.00"),
        title="Rate how well captions describe short videos",
        consent_text="We record your ratings for research on video captions.\n\nYou can stop at any time.",
    )
    PracticeItem.objects.create(
        study=study,
        text="colour bars fill the picture .",
        accept_min=70,
        accept_max=100,
        feedback="The caption describes the test card well: a high score fits.",
    )
    pid = "5f" + "9" * 22
    session = fake_prolific.add_submission(external, pid)
    landed = []

    def prolific(route):
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific: study completed</h1>")

    phone.route("https://app.prolific.com/**", prolific)
    phone.goto(
        f"{live_server.url}/crowd/s/{links.entry_token(study)}/?PROLIFIC_PID={pid}&STUDY_ID={external}"
        f"&SESSION_ID={session}"
    )
    assert "We record your ratings" in phone.locator("[data-role=consent-text]").inner_text()
    no_sideways_scroll(phone)
    phone.get_by_role("button", name="I agree and want to take part").click()

    phone.wait_for_selector("[data-role=practice]")
    no_sideways_scroll(phone)
    phone.locator("[data-role=practice-value]").fill("20")
    phone.locator("[data-role=check]").click()
    feedback = phone.locator("[data-role=feedback]")
    assert "Not quite." in feedback.inner_text() and "between 70 and 100" in feedback.inner_text()
    phone.locator("[data-role=continue]").click()

    phone.wait_for_selector("[data-role=start]")
    assert Participation.objects.get().status == "admitted"  # nothing reserved before Start
    no_sideways_scroll(phone)
    phone.locator("[data-role=start]").click()
    phone.wait_for_selector("[data-da-rating]")
    # Start (a POST) answered the rating page, which shows its own address: a reload is a GET of the same HIT
    phone.wait_for_url("**/da/a/*/", timeout=10_000)
    first_item = phone.locator("[data-role=caption]").inner_text()
    phone.reload()
    phone.wait_for_selector("[data-da-rating]")
    assert phone.locator("[data-role=caption]").inner_text() == first_item
    assert Assignment.objects.count() == 1
    rate_hit(phone)

    phone.wait_for_url("https://app.prolific.com/**", timeout=15_000)
    assert landed == ["https://app.prolific.com/submissions/complete?cc=CBROWSE7"]
    participation = Participation.objects.get()
    assert participation.status == "completed" and participation.external_submission_id == session
    assignment = Assignment.objects.get(pk=int(participation.work_key))
    assert Judgment.objects.filter(assignment=assignment).count() == assignment.hit.n_items  # practice not stored
    assert fake_prolific.log("GET", f"/submissions/{session}/")


def test_mturk_preview_then_an_accepted_assignment_posts_to_external_submit(phone, live_server, campaign):
    study = study_of(
        "da",
        campaign,
        "browser-mturk",
        provider="mturk",
        end_mode="submit",
        title="Rate captions",
        instructions="Watch each clip, then rate the sentence.",
    )
    hit = HIT.objects.filter(campaign=campaign).order_by("number").last()
    entry = f"{live_server.url}/crowd/s/{links.entry_token(study)}/?unit={hit.pk}"
    phone.goto(f"{entry}&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3PREVIEWHIT")
    inputs = phone.locator("[data-role=preview-inputs]")
    assert inputs.is_visible() and phone.locator("[data-role=preview-inputs] input").is_disabled()
    assert phone.locator("[data-role=preview-inputs] button").is_disabled()
    assert "Preview" in phone.locator("[data-role=preview]").inner_text()
    assert not Participation.objects.exists() and not Assignment.objects.exists()  # a preview reserves nothing
    no_sideways_scroll(phone)

    posted = []

    def mturk(route):
        posted.append((route.request.method, route.request.url, route.request.post_data))
        route.fulfill(status=200, content_type="text/html", body="<h1>HIT submitted</h1>")

    phone.route("https://workersandbox.mturk.com/**", mturk)
    phone.goto(
        f"{entry}&assignmentId=3ASSIGNMENTBROWSER&hitId=3PREVIEWHIT&workerId=A1BROWSERWORKER"
        "&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com"
    )
    phone.locator("[data-role=start]").click()
    phone.wait_for_selector("[data-da-rating]")
    rate_hit(phone)
    phone.wait_for_selector("[data-role=submit-form]", timeout=15_000)
    no_sideways_scroll(phone)
    phone.locator("[data-role=submit-form] [data-role=submit]").click()
    phone.wait_for_url("https://workersandbox.mturk.com/**", timeout=15_000)
    participation = Participation.objects.get()
    assert participation.unit_key == str(hit.pk) and participation.status == "completed"
    code = links.completion_code(study.pk, participation.work_key, "mturk:A1BROWSERWORKER")
    assert len(posted) == 1
    method, url, body = posted[0]
    assert (method, url) == ("POST", "https://workersandbox.mturk.com/mturk/externalSubmit")
    assert parse_qs(body) == {"assignmentId": ["3ASSIGNMENTBROWSER"], "completion_code": [code]}


def test_expired_and_reused_links_are_refused_with_a_clear_page(phone, live_server, campaign):
    study = study_of("da", campaign, "browser-links")
    ((_, expired),) = admission.create_participant_links(
        study, ["late"], expires_at=timezone.now() - timedelta(hours=1)
    )
    phone.goto(f"{live_server.url}/crowd/p/{expired}/")
    assert phone.locator("h1").inner_text() == "This link has expired"
    assert "ask the researcher" in phone.locator("[data-refusal=expired]").inner_text()
    no_sideways_scroll(phone)

    ((_, used),) = admission.create_participant_links(study, ["early"], expires_at=timezone.now() + timedelta(days=1))
    phone.goto(f"{live_server.url}/crowd/p/{used}/")
    phone.locator("[data-role=start]").click()
    phone.wait_for_selector("[data-da-rating]")
    rate_hit(phone)
    phone.wait_for_selector("[data-role=code]", timeout=15_000)
    phone.goto(f"{live_server.url}/crowd/p/{used}/")  # the same link again
    assert phone.locator("h1").inner_text() == "You have already done this"
    assert "This link has been used" in phone.locator("[data-refusal=done]").inner_text()
