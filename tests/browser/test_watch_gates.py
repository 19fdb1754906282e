"""Watch gates and submission in real headless Chromium (issue #9, items 3 and 4), against the live server that
serves media with Range requests (so seeking works as in production):

- DA: "played" is playback time, not the position reached: seeking to the end, or playing only the last moment,
  leaves the slider locked; the campaign's gate (share of the clip, capped) unlocks it; the stored
  watched_seconds is the real time played.
- Factuality: the real time played is stored; a video that was never played asks for confirmation first.
- Factuality: a double click on "Submit and go to the next video" never lands on "Save draft and leave", no
  draft PUT follows the submit, and the work page shows the video as done.
"""

import re
import time

import pytest

from annotation_site.annotators.services import invite
from annotation_site.factuality import projects
from annotation_site.factuality.models import Assignment as FactAssignment
from annotation_site.factuality.models import Submission
from assessment import campaigns, services, workers
from assessment.models import Judgment
from tests.clips import clip_dataset
from tests.conftest import wait_until

pytestmark = [pytest.mark.browser]
PASSWORD = "pw-watcher-3"


def _dataset(name, clip_file, n_videos, systems, human=None):
    dataset, rows = clip_dataset(name, clip_file, n_videos, systems, human)
    # probing runs in the Celery worker when a broker is configured: the durations are needed below
    wait_until(
        lambda: not dataset.videos.filter(duration__isnull=True).exists(), timeout=90, what="the videos' durations"
    )
    return dataset, rows


@pytest.fixture
def watch_campaign(transactional_db, celery_worker, clip_file):
    """A campaign over the 12 s clip whose gate asks for 90 % of the clip, capped at 1.5 s."""
    dataset, systems = _dataset("da-watch", clip_file, 3, ["Alpha", "Beta", "human"], human="human")
    return campaigns.create_campaign(
        name="da-watch",
        dataset=dataset,
        systems=[systems["Alpha"], systems["Beta"]],
        human_system=systems["human"],
        hit_size=8,
        pairs_per_hit=2,
        repeats_per_hit=1,
        min_control_distance=2,
        qc_test="paired_t",
        qc_min_pairs=2,
        watch_max_seconds=1.5,
        seed=1,
    )


def _video(page, script):
    return page.evaluate(f"() => {{ const v = document.querySelector('video.da-video'); {script} }}")


def _seek(page, seconds):
    page.evaluate(
        "(t) => new Promise((done) => { const v = document.querySelector('video.da-video');"
        " v.addEventListener('seeked', () => done(), {once: true}); v.currentTime = t; })",
        seconds,
    )


def _locked(page):
    return page.evaluate("() => document.querySelector('[data-role=submit]').disabled")


def test_da_seeking_to_the_end_does_not_unlock_the_slider(page, live_server, watch_campaign):
    assignment = services.assign(watch_campaign, workers.worker_by_external_id("seeker"))
    page.goto(f"{live_server.url}/da/a/{services.assignment_token(assignment)}/")
    page.locator("[data-role=slider]").fill("40")
    page.wait_for_function("() => document.querySelector('video.da-video').readyState >= 1")
    state = page.evaluate("() => JSON.parse(document.getElementById('da-state').textContent)")
    assert state["item"]["watch_seconds"] == 1.5 and state["watch"] == {"fraction": 0.9, "max_seconds": 1.5}

    duration = _video(page, "return v.duration;")
    assert duration == pytest.approx(12, abs=0.2)
    _seek(page, duration)  # drag the position to the end
    page.wait_for_timeout(300)
    assert _locked(page)
    _seek(page, duration - 0.4)  # and play only the last moment: the clip ends
    _video(page, "v.play();")
    page.wait_for_function("() => document.querySelector('video.da-video').ended", timeout=10_000)
    page.wait_for_timeout(300)
    assert _locked(page), "seeking to the end unlocked the slider"
    assert page.evaluate("() => window.daRating.watchedSeconds()") < 0.6
    assert "Keep watching" in page.locator("[data-role=hint]").inner_text()

    # real playback unlocks it: 1.5 s from the middle of the clip
    _seek(page, 5.0)
    started = time.monotonic()
    _video(page, "v.play();")
    page.wait_for_function("() => !document.querySelector('[data-role=submit]').disabled", timeout=15_000)
    assert time.monotonic() - started >= 1.0
    _video(page, "v.pause();")
    page.locator("[data-role=submit]").click()
    page.wait_for_function("() => document.querySelector('[data-role=progress]').textContent.startsWith('Item 2')")
    judgment = Judgment.objects.get(assignment=assignment)
    assert judgment.played and 1.5 <= judgment.watched_seconds <= 4.0  # the real time played, not 12 s


@pytest.fixture
def fact_project(transactional_db, celery_worker, clip_file, django_user_model):
    dataset, _ = _dataset("fact-watch", clip_file, 2, ["Alpha", "Beta"])
    django_user_model.objects.create_user("wendy", "wendy@example.org", PASSWORD)
    project = projects.create_project(projects.ProjectSpec(name="watch", dataset=dataset))
    projects.add_member(project, invite("wendy")[0])
    return project


def _open_first_video(page, live_server):
    page.goto(f"{live_server.url}/accounts/login/?next=/factuality/projects/watch/")
    page.fill("#id_username", "wendy")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.get_by_role("button", name=re.compile("Start|Continue")).click()
    page.wait_for_url(re.compile(r".*/factuality/assignments/\d+/$"))
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    return int(re.search(r"/assignments/(\d+)/", page.url).group(1))


def _score_everything(page):
    for article in page.locator(".fact-paragraph").all():
        article.locator(".fact-likert__option").filter(has=page.locator('input[value="4"]')).click()


def _play(page, seconds):
    """Play from the start for ``seconds`` (by the clip's clock), then pause."""
    page.click('#player [data-action="toggle"]')
    page.wait_for_function(f"() => document.querySelector('#player video').currentTime >= {seconds}", timeout=15_000)
    page.evaluate("() => document.querySelector('#player video').pause()")


def test_factuality_asks_before_submitting_an_unplayed_video_and_stores_the_time_played(
    page, live_server, fact_project
):
    pk = _open_first_video(page, live_server)
    _score_everything(page)
    page.click("#submit")
    problems = page.locator("#problems")
    problems.wait_for(state="visible")
    assert "You have not played the video" in problems.inner_text()
    assert page.locator("#confirm-submit").is_visible()
    assert not Submission.objects.exists()

    # seeking does not count as playing
    page.evaluate(
        "() => new Promise((done) => { const v = document.querySelector('#player video');"
        " v.addEventListener('seeked', () => done(), {once: true}); v.currentTime = v.duration; })"
    )
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.captionEvalAnnotation.videoPlayed()") is False

    _play(page, 1.0)
    page.click("#submit")
    page.wait_for_url(re.compile(r".*/factuality/assignments/\d+/$"))
    page.wait_for_function(f"() => !location.pathname.endsWith('/{pk}/')", timeout=10_000)
    submission = Submission.objects.get(assignment_id=pk)
    assert submission.video_played is True and not submission.confirmed_incomplete
    assert 0.8 <= submission.watched_seconds <= 3.0  # about the second played, not the 12 s clip


def test_factuality_double_click_submits_once_and_goes_to_the_next_video(page, live_server, fact_project):
    pk = _open_first_video(page, live_server)
    requests = []
    page.on("request", lambda r: requests.append((r.method, r.url)) if "/api/factuality/" in r.url else None)
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)
    _play(page, 0.5)
    _score_everything(page)
    page.wait_for_timeout(100)
    page.locator("#submit").dblclick()
    page.wait_for_function(f"() => !location.pathname.endsWith('/assignments/{pk}/')", timeout=15_000)
    page.wait_for_load_state("load")
    page.wait_for_timeout(1500)  # time for any late autosave of the first page to arrive
    assert re.search(r"/factuality/assignments/\d+/$", page.url), page.url  # the next video, not the work page
    assert not any(url.endswith("/projects/watch/work/") for url in navigations), navigations
    submits = [i for i, (method, url) in enumerate(requests) if method == "POST" and url.endswith(f"/{pk}/submit/")]
    assert submits, requests
    late_drafts = [r for r in requests[submits[0] :] if r[0] == "PUT" and r[1].endswith(f"/{pk}/draft/")]
    assert not late_drafts, requests
    assert Submission.objects.filter(assignment_id=pk).count() == 1
    assignment = FactAssignment.objects.get(pk=pk)
    assert assignment.status == "submitted" and assignment.draft is None

    page.goto(f"{live_server.url}/factuality/projects/watch/")
    first_row = page.locator("#my-videos tbody tr").first
    assert first_row.locator("[data-status]").get_attribute("data-status") == "submitted"
    assert "done" in first_row.inner_text()
