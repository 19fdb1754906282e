"""Judgment tasks in real headless Chromium against a live server.

- FIFA question quality, end to end: the researcher creates the task from its preset and imports the items on
  the task page; three annotators log in and enter matching pairs (clicks, keyboard, a double-clicked submit,
  a confirmation for an item without pairs); the researcher reads precision, recall and kappa on the report.
- FIFA fact verification on a phone (390 px): a crowd participant arrives through a signed link, watches the
  video, answers yes / no per question with the keyboard and lands on the study's completion address.
- VC-Inspector on a desktop: Likert judgments of an explanation and a comment survive a reload as a draft."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation_site.annotators.services import invite
from annotation_site.judgment_tasks import api as tasks_api
from annotation_site.judgment_tasks import imports, participants, services
from annotation_site.judgment_tasks.models import Submission, Task
from tests.browser.conftest import ANNOTATOR_PASSWORD as PASSWORD
from tests.browser.conftest import HIDE_TAB

pytestmark = [pytest.mark.browser]

ITEMS = [
    {
        "item_id": "qq-1",
        "video_id": "clip-01",
        "tuples": ["a test card is shown", "a square moves", "numbers count up"],
        "questions": ["Is a test card shown?", "Does a square move?", "Is there a dog?"],
    },
    {
        "item_id": "qq-2",
        "video_id": "clip-01",
        "tuples": ["the screen turns black", "a tone plays"],
        "questions": ["Does the screen turn black?", "Is a tone played?"],
    },
]
# What each annotator matches, (tuple, question) 1-based as on the page; ann3 disagrees on item 1.
PLANS = {
    "ann1": {"qq-1": [(1, 1), (2, 2)], "qq-2": [(1, 1), (2, 2)]},
    "ann2": {"qq-1": [(1, 1), (2, 2)], "qq-2": [(1, 1)]},
    "ann3": {"qq-1": [(1, 1), (3, 3)], "qq-2": []},
}


def log_in(page, live_server, username, password, landing="/tasks/"):
    page.goto(f"{live_server.url}{landing}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}{landing}")


def no_sideways_scroll(page):
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_question_quality_end_to_end(browser, live_server, login, clip_dataset, tmp_path, artifacts):
    staff = browser.new_context(viewport={"width": 1280, "height": 800})
    page = login(staff.new_page())
    page.goto(f"{live_server.url}/tasks/new/")
    page.fill("#id_name", "qq")
    page.select_option("#id_dataset", "task-demo")
    page.select_option("#id_preset", "fifa-question-quality")
    page.fill("#id_annotators", "ann1\nann2\nann3")
    page.click("#task-form button[type=submit]")
    page.wait_for_url(f"{live_server.url}/tasks/t/qq/")
    assert "Next: import the items" in page.inner_text("#next-step")
    items = tmp_path / "qq.jsonl"
    items.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    page.set_input_files("#id_items-file", str(items))
    page.click("#items-form button[type=submit]")
    page.wait_for_selector("text=Imported 2 items (10 list elements).")
    staff.close()

    for username, plan in PLANS.items():
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        work = context.new_page()
        log_in(work, live_server, username, PASSWORD)
        work.locator("#my-tasks").get_by_role("link", name="Start or continue").click()
        starts = []  # Start is pressed once: each submit's answer names the next page
        work.on("request", lambda r, starts=starts: starts.append(r.url) if r.url.endswith("/start/") else None)
        work.locator("#start").click()
        for _ in range(2):
            work.wait_for_url(re.compile(r".*/tasks/assignments/\d+/$"))
            work.wait_for_selector("#q-matches .task-row")
            current = work.url
            title = work.inner_text("#list-tuples")
            key = "qq-1" if "a test card is shown" in title else "qq-2"
            pairs = plan[key]
            for t, q in pairs:
                row = work.locator(f'#q-matches .task-row[data-row="{q - 1}"]')
                if username == "ann2":  # keyboard: n moves to the row, the digit toggles the tuple
                    row.locator(".task-chip").first.focus()
                    work.keyboard.press(str(t))
                else:
                    row.locator(f'.task-chip[data-left="{t - 1}"]').click()
                assert row.locator(f'.task-chip[data-left="{t - 1}"]').get_attribute("aria-pressed") == "true"
            status = work.inner_text("#q-matches [data-role=status]")
            assert status == f"{len(pairs)} pair{'' if len(pairs) == 1 else 's'}"
            if username == "ann1" and key == "qq-1":
                work.screenshot(path=str(artifacts / "task-question-quality.png"), full_page=True)
            if not pairs:
                work.click("#submit")
                assert "no pair entered" in work.inner_text("#problems")
                work.click("#confirm-submit")
            else:
                work.dblclick("#submit")  # a double click stores one answer and goes on
            work.wait_for_url(lambda url, current=current: url != current, timeout=15000)
        work.wait_for_url(f"{live_server.url}/tasks/t/qq/work/")
        assert "no item left for you" in work.content()
        assert len(starts) == 1, starts
        context.close()

    task = Task.objects.get(name="qq")
    assert Submission.objects.filter(assignment__task=task).count() == 6
    stored = {
        (s.annotator.user.username, s.assignment.item.key): sorted(map(tuple, s.answers["matches"]))
        for s in Submission.objects.filter(assignment__task=task).select_related("annotator__user", "assignment__item")
    }
    assert stored == {
        (u, k): sorted((t - 1, q - 1) for t, q in pairs) for u, plan in PLANS.items() for k, pairs in plan.items()
    }

    staff = browser.new_context(viewport={"width": 1280, "height": 800})
    page = login(staff.new_page())
    page.goto(f"{live_server.url}/tasks/t/qq/report/")
    table = page.inner_text("#figure-table-0")
    # majority pairs: item 1 (T1,Q1), (T2,Q2); item 2 (T1,Q1): 3 of 5 questions, 3 of 5 tuples matched
    assert "60.00%" in table and "5 (3)" in table
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.task-chart img')).every(i => i.complete && i.naturalWidth > 0)"
    )
    page.screenshot(path=str(artifacts / "task-report.png"), full_page=True)
    staff.close()


@pytest.fixture
def verification_study(clip_dataset, live_server):
    """A one-item study whose completion address is a page of the live server (a stand-in for the platform's:
    nothing here may leave the machine)."""
    task = services.create_task(name="verify", dataset=clip_dataset, preset="fifa-verification")
    imports.import_items(
        task,
        json.dumps(
            {
                "item_id": "v-1",
                "video_id": "clip-01",
                "subset": "T2V",
                "questions": [
                    "Is a test card shown?",
                    "Does a cat appear at the end of the clip, after the countdown finishes?",
                    "Is there a square?",
                ],
            }
        )
        + "\n",
    )
    annotator = participants.admit(task, provider="prolific", external_id="5f00c0ffee")
    return task, participants.entry_url(task, annotator, limit=1, finish_url=f"{live_server.url}/healthz?cc=C1ZX")


def test_a_participant_verifies_facts_on_a_phone(browser, live_server, verification_study, artifacts):
    task, url = verification_study
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    nexts = []  # Next is pressed once: the submit's answer names the end page (the quota of 1 is reached)
    page.on("request", lambda r: nexts.append(r.url) if r.url.endswith("/next/") else None)
    page.goto(f"{live_server.url}{url}")
    assert no_sideways_scroll(page)
    page.click("#start")
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    assert no_sideways_scroll(page)
    page.click('#player [data-action="toggle"]')
    page.wait_for_function("() => document.querySelector('video').currentTime > 0.2")
    rows = page.locator("#q-answer .task-row")
    assert rows.count() == 3
    rows.nth(0).locator("label", has_text="Yes").tap()
    rows.nth(1).locator("label", has_text="No").tap()
    rows.nth(2).locator('input[type="radio"]').first.focus()
    page.keyboard.press("1")  # the first option of the current row: yes
    assert page.inner_text("#q-answer [data-role=status]") == "3 of 3 answered"
    for selector in ("#q-answer", "#submit", "#player"):
        box = page.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 391, selector
    page.screenshot(path=str(artifacts / "task-verification-phone.png"), full_page=True)
    page.locator("#submit").tap()
    page.wait_for_url(f"{live_server.url}/healthz?cc=C1ZX")
    assert len(nexts) == 1, nexts
    [stored] = Submission.objects.filter(assignment__task=task)
    assert stored.answers == {"answer": ["yes", "no", "yes"]} and stored.video_played
    assert stored.annotator.kind == "crowd" and stored.annotator.external_id == "5f00c0ffee"
    context.close()


def test_vc_inspector_judgments_survive_a_reload(page, live_server, clip_dataset):
    task = services.create_task(name="vci", dataset=clip_dataset, preset="vc-inspector")
    imports.import_items(
        task,
        json.dumps(
            {
                "video_id": "clip-01",
                "model": "vci-7b",
                "caption": "a man walks a dog in a park .",
                "score": "2",
                "explanation": "The caption names a man and a dog; the video shows a test card.",
            }
        )
        + "\n",
    )
    services.add_member(task, invite("ann1")[0])
    log_in(page, live_server, "ann1", PASSWORD)
    page.goto(f"{live_server.url}/tasks/t/vci/work/")
    page.click("#start")
    page.wait_for_url(re.compile(r".*/tasks/assignments/\d+/$"))
    assert "a test card" in page.inner_text("#field-explanation") and "vci-7b" not in page.content()
    page.locator("#q-correct").click(position={"x": 5, "y": 5})
    page.keyboard.press("4")
    page.locator('#q-names_errors label:has-text("5")').first.click()
    page.fill("#text-comment", "It misses nothing.")
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Draft saved')")
    page.reload()
    page.wait_for_selector("#save-status:has-text('Draft restored')")
    assert page.locator('#q-correct input[value="4"]').is_checked()
    assert page.locator('#q-names_errors input[value="5"]').is_checked()
    assert page.input_value("#text-comment") == "It misses nothing."
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{live_server.url}/tasks/t/vci/work/")
    [stored] = Submission.objects.filter(assignment__task=task)
    assert stored.answers == {"correct": 4, "names_errors": 5, "comment": "It misses nothing."}


def test_answers_survive_a_reload_that_overtakes_their_draft_save(page, live_server, clip_dataset, hold_first_draft):
    """The probe's sequence on a judgment task: answer, reload at once, leave the tab, reload again. The save the
    old page sent on leaving reaches the server after the reload's GET (held here for 2 s): the answers the tab
    kept are shown, saved again, and never overwritten by the draft the reload rendered; a page that changed
    nothing since it loaded sends no draft."""
    task = services.create_task(name="race", dataset=clip_dataset, preset="vc-inspector")
    imports.import_items(
        task,
        json.dumps({"video_id": "clip-01", "model": "m", "caption": "a test card .", "score": "2", "explanation": "x"})
        + "\n",
    )
    services.add_member(task, invite("ann1")[0])
    held = hold_first_draft(tasks_api.DraftView)
    log_in(page, live_server, "ann1", PASSWORD)
    page.goto(f"{live_server.url}/tasks/t/race/work/")
    page.click("#start")
    page.wait_for_url(re.compile(r".*/tasks/assignments/\d+/$"))
    page.locator('#q-correct input[value="4"]').check(force=True)
    page.fill("#text-comment", "my comment")
    page.reload()  # at once: the 1.2 s save has not run, the save sent on leaving is held
    expect(page.locator('#q-correct input[value="4"]')).to_be_checked()
    assert page.input_value("#text-comment") == "my comment"
    assert held.stored.wait(10), "the page sent no draft when it was left"
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Draft saved')")
    count = len(held.bodies)
    page.evaluate(HIDE_TAB)
    held.wait_for(count + 1)
    [assignment] = task.assignments.all()
    assert assignment.draft["answer"] == {"correct": 4, "names_errors": None, "comment": "my comment"}
    page.reload()
    page.wait_for_selector("#save-status:has-text('Draft restored')")
    expect(page.locator('#q-correct input[value="4"]')).to_be_checked()
    assert page.input_value("#text-comment") == "my comment"
    count = len(held.bodies)
    page.evaluate(HIDE_TAB)
    page.wait_for_timeout(1500)
    assert len(held.bodies) == count, "a page that changed nothing saved a draft"
