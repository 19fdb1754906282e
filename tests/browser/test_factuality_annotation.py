"""The factuality annotation page in real headless Chromium against a live server: an invited annotator logs
in, plays the video, flags sentences, marks spans by dragging and by clicking first and last words, scores
every paragraph and submits; the stored rows are checked. Also: refusal reasons and confirmation, the dialog
after clearing a sentence's last span, draft restore, the screen sizes, and an accessibility smoke test."""

import re

import pytest
from django.core.files import File
from playwright.sync_api import expect

from annotation_site.annotators.services import invite
from annotation_site.corpus import services
from annotation_site.corpus.models import Caption, Dataset, Sentence, System
from annotation_site.factuality import api as factuality_api
from annotation_site.factuality import projects
from annotation_site.factuality.assignment import presented_captions
from annotation_site.factuality.models import (
    Assignment,
    ParagraphJudgment,
    SentenceJudgment,
    SpanJudgment,
    Submission,
)
from tests.browser.conftest import HIDE_TAB

pytestmark = [pytest.mark.browser]

CAPTIONS = {
    "ClipTrans": ["a colourful test card is shown .", "a small square moves across the picture ."],
    "RetrievalBaseline": ["a tv presenter stands in front of a wall ."],
    "DenseCap": ["numbers count up in the corner .", "the screen turns black ."],
}
PASSWORD = "pw-annotator-7"


@pytest.fixture
def fact_project(transactional_db, celery_worker, clip_file, django_user_model):
    """Dataset "fact-demo": two uploaded clips with three systems' captions; project "pilot" (3 annotators per
    video) with the invited annotator "annie"."""
    dataset = Dataset.objects.create(name="fact-demo")
    systems = {name: System.objects.create(dataset=dataset, name=name, position=i) for i, name in enumerate(CAPTIONS)}
    for external_id in ("clip-01", "clip-02"):
        with open(clip_file, "rb") as handle:
            video = services.add_video(dataset, external_id, file=File(handle, name=clip_file.name))
        for position, (system, sentences) in enumerate(CAPTIONS.items()):
            caption = Caption.objects.create(video=video, system=systems[system], position=position)
            for index, text in enumerate(sentences):
                Sentence.objects.create(caption=caption, index=index, text=text)
    django_user_model.objects.create_user("annie", "annie@example.org", PASSWORD)
    project = projects.create_project(projects.ProjectSpec(name="pilot", dataset=dataset))
    projects.add_member(project, invite("annie")[0])
    return project


def log_in(page, live_server, username="annie", password=PASSWORD):
    page.goto(f"{live_server.url}/factuality/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/factuality/")


def start_video(page, live_server):
    page.locator("#my-projects").get_by_role("button", name=re.compile("Start|Continue")).click()
    page.wait_for_url(re.compile(r".*/factuality/assignments/\d+/$"))
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    return int(re.search(r"/assignments/(\d+)/", page.url).group(1))


def paragraph(page, letter):
    return page.locator(f"#paragraph-{letter}")


def sentence(page, letter, number):
    return paragraph(page, letter).locator(".fact-sentence").nth(number - 1)


def token(page, letter, number, index):
    return sentence(page, letter, number).locator(f'.tok[data-t="{index}"]')


def drag(page, start, end):
    """Press the mouse on one word and release it on another (a press and release on one word is a click)."""
    start.scroll_into_view_if_needed()
    a, b = start.bounding_box(), end.bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()


def score(page, letter, value):
    paragraph(page, letter).locator(".fact-likert__option").filter(has=page.locator(f'input[value="{value}"]')).click()


def no_sideways_scroll(page):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    viewport = page.viewport_size["width"]
    assert width <= viewport, f"the page is {width} px wide at a {viewport} px wide window"


def test_an_annotator_completes_a_video(page, live_server, fact_project, artifacts):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    log_in(page, live_server)
    pk = start_video(page, live_server)
    assert page.locator("h1").inner_text().startswith("Video 1")
    assert "of 2" in page.locator("h1").inner_text()
    body = page.locator("main").inner_text()
    assert all(name not in body for name in CAPTIONS)  # system names are never shown
    no_sideways_scroll(page)

    # play the video with our button, then pause with the k shortcut
    page.click('[data-action="toggle"]')
    page.wait_for_function(
        "() => { const v = document.querySelector('video'); return v.currentTime > 0.3 && !v.paused; }"
    )
    page.locator("h1").click()
    page.keyboard.press("k")
    page.wait_for_function("() => document.querySelector('video').paused")

    assignment = Assignment.objects.get(pk=pk)
    presented = presented_captions(assignment)
    letters = {caption.system.name: chr(65 + i) for i, (caption, _) in enumerate(presented)}
    clip, retrieval, dense = letters["ClipTrans"], letters["RetrievalBaseline"], letters["DenseCap"]

    # drag over "tv presenter" (tokens 1-2): the sentence is flagged automatically
    drag(page, token(page, retrieval, 1, 1), token(page, retrieval, 1, 2))
    assert sentence(page, retrieval, 1).locator('[data-action="flag"]').get_attribute("aria-pressed") == "true"
    assert sentence(page, retrieval, 1).locator(".fact-span").inner_text().startswith("tv presenter")
    # click the first word, then the last: "stands in front" (tokens 3-5) is a second span of that sentence
    token(page, retrieval, 1, 3).click()
    assert "tok--start" in token(page, retrieval, 1, 3).get_attribute("class")
    token(page, retrieval, 1, 5).click()
    assert sentence(page, retrieval, 1).locator(".fact-span").count() == 2
    # one word by clicking it twice: "black" in the DenseCap paragraph
    token(page, dense, 2, 3).click()
    token(page, dense, 2, 3).click()
    # a flag with a span dragged backwards: "small square" of ClipTrans sentence 2 (tokens 1-2)
    sentence(page, clip, 2).locator('[data-action="flag"]').click()
    drag(page, token(page, clip, 2, 2), token(page, clip, 2, 1))
    # scores: with the mouse, and with the keyboard shortcut on the current paragraph
    score(page, retrieval, 1)
    score(page, clip, 4)
    token(page, dense, 1, 0).focus()
    page.keyboard.press("3")
    assert paragraph(page, dense).locator('input[value="3"]').is_checked()
    for letter in (clip, retrieval, dense):
        assert "done" in paragraph(page, letter).locator('[data-role="status"]').inner_text()
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Draft saved')")
    page.screenshot(path=str(artifacts / "factuality-annotate.png"), full_page=True)

    page.get_by_role("button", name="Submit and go to the next video").click()
    page.wait_for_url(lambda url, pk=pk: not url.endswith(f"/assignments/{pk}/"))
    assert re.search(r"/factuality/assignments/\d+/$", page.url)  # the second video
    assert "Video 2" in page.locator("h1").inner_text()

    submission = Submission.objects.get(assignment_id=pk)
    assert submission.is_current and submission.video_played is True and submission.time_spent > 0
    assert not submission.confirmed_incomplete
    scores = dict(ParagraphJudgment.objects.filter(submission=submission).values_list("caption__system__name", "score"))
    assert scores == {"ClipTrans": 4, "RetrievalBaseline": 1, "DenseCap": 3}
    flagged = {
        (s.sentence.caption.system.name, s.sentence.index)
        for s in SentenceJudgment.objects.filter(submission=submission, error=True).select_related(
            "sentence__caption__system"
        )
    }
    assert flagged == {("RetrievalBaseline", 0), ("DenseCap", 1), ("ClipTrans", 1)}
    spans = sorted(
        (s.sentence_judgment.sentence.caption.system.name, s.start, s.end)
        for s in SpanJudgment.objects.filter(sentence_judgment__submission=submission).select_related(
            "sentence_judgment__sentence__caption__system"
        )
    )
    assert spans == [("ClipTrans", 1, 3), ("DenseCap", 3, 4), ("RetrievalBaseline", 1, 3), ("RetrievalBaseline", 3, 6)]
    assert SentenceJudgment.objects.filter(submission=submission).count() == 5
    assert not errors, errors


def test_a_refused_submit_shows_its_reasons_until_confirmed(page, live_server, fact_project, artifacts):
    log_in(page, live_server)
    pk = start_video(page, live_server)
    score(page, "A", 5)
    sentence(page, "B", 1).locator('[data-action="flag"]').click()
    page.get_by_role("button", name="Submit and go to the next video").click()
    problems = page.locator("#problems")
    problems.wait_for(state="visible")
    text = problems.inner_text()
    assert "Paragraph B has no score yet." in text and "Paragraph C has no score yet." in text
    assert "Paragraph B, sentence 1 is flagged as erroneous but no words are marked." in text
    assert page.get_by_role("button", name="Submit anyway").is_visible()
    page.screenshot(path=str(artifacts / "factuality-refused.png"))
    assert not Submission.objects.exists()
    # following a reason goes to the paragraph; fixing it updates the list
    problems.get_by_role("link", name="Paragraph C has no score yet.").click()
    score(page, "C", 2)
    page.wait_for_function("() => !document.querySelector('#problems').innerText.includes('Paragraph C has no')")
    # confirming submits anyway, and the submission says so
    page.get_by_role("button", name="Submit anyway").click()
    page.wait_for_url(lambda url, pk=pk: not url.endswith(f"/assignments/{pk}/"))
    submission = Submission.objects.get(assignment_id=pk)
    assert submission.confirmed_incomplete
    assert ParagraphJudgment.objects.filter(submission=submission, score__isnull=True).count() == 1


def test_clearing_the_last_span_asks_and_drafts_survive_a_reload(page, live_server, fact_project):
    log_in(page, live_server)
    pk = start_video(page, live_server)
    drag(page, token(page, "A", 1, 0), token(page, "A", 1, 1))
    chip = sentence(page, "A", 1).locator(".fact-span")
    assert chip.count() == 1
    chip.get_by_role("button").click()  # remove the only span
    dialog = page.locator("#clear-dialog")
    dialog.wait_for(state="visible")
    assert "Is the sentence still erroneous?" in dialog.inner_text()
    dialog.get_by_role("button", name="No, it is factual").click()
    expect(sentence(page, "A", 1).locator('[data-action="flag"]')).to_have_attribute("aria-pressed", "false")
    # keep-flagged path, then a draft that comes back after a reload
    drag(page, token(page, "B", 1, 1), token(page, "B", 1, 1))
    token(page, "B", 1, 2).click()
    token(page, "B", 1, 2).click()
    sentence(page, "B", 1).locator(".fact-span__remove").first.click()
    dialog.wait_for(state="visible")
    dialog.get_by_role("button", name="Yes, keep it flagged").click()
    expect(dialog).to_be_hidden()
    expect(sentence(page, "B", 1).locator('[data-action="flag"]')).to_have_attribute("aria-pressed", "true")
    score(page, "C", 2)
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Draft saved')")
    draft = Assignment.objects.get(pk=pk).draft
    assert draft["answer"]["paragraphs"][2]["score"] == 2
    page.reload()
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    assert page.locator("#save-status").inner_text() == "Draft restored"
    assert paragraph(page, "C").locator('input[value="2"]').is_checked()
    assert sentence(page, "B", 1).locator('[data-action="flag"]').get_attribute("aria-pressed") == "true"
    assert sentence(page, "B", 1).locator(".fact-span").count() == 0


def test_a_score_survives_a_reload_that_overtakes_its_draft_save(page, live_server, fact_project, hold_first_draft):
    """The probe's sequence: pick a score, reload at once, then leave the tab and reload again. The save the old
    page sends on leaving reaches the server only after the reload's GET (held here for 2 s): the reloaded page
    must show the score it kept in the tab, and neither its hidden-tab save nor anything else may put the older
    draft back. And a page that changed nothing since it loaded sends no draft at all."""
    held = hold_first_draft(factuality_api.DraftView)
    log_in(page, live_server)
    pk = start_video(page, live_server)
    score(page, "A", 4)
    page.reload()  # at once: the 1.2 s save has not run, the save sent on leaving is held
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    expect(paragraph(page, "A").locator('input[value="4"]')).to_be_checked()
    assert held.stored.wait(10), "the page sent no draft when it was left"
    assert held.bodies[0]["answer"]["paragraphs"][0]["score"] == 4
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Draft saved')")
    count = len(held.bodies)
    page.evaluate(HIDE_TAB)
    held.wait_for(count + 1)
    assert Assignment.objects.get(pk=pk).draft["answer"]["paragraphs"][0]["score"] == 4
    page.reload()
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    expect(paragraph(page, "A").locator('input[value="4"]')).to_be_checked()
    assert page.locator("#save-status").inner_text() == "Draft restored"
    count = len(held.bodies)
    page.evaluate(HIDE_TAB)
    page.wait_for_timeout(1500)
    assert len(held.bodies) == count, "a page that changed nothing saved a draft"


@pytest.mark.parametrize("width, height", [(1280, 800), (1366, 768), (1024, 768)])
def test_the_annotation_page_fits_laptop_screens(browser, live_server, fact_project, width, height, artifacts):
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        log_in(page, live_server)
        start_video(page, live_server)
        no_sideways_scroll(page)
        video = page.locator("video").bounding_box()
        first = paragraph(page, "A").bounding_box()
        assert video["y"] + video["height"] <= height, "the video does not fit above the fold"
        if width >= 1024:
            assert first["y"] < height / 2, "the first paragraph starts below the middle of the screen"
        page.screenshot(path=str(artifacts / f"factuality-annotate-{width}.png"))
    finally:
        context.close()


def test_the_annotators_lists_work_on_a_phone(browser, live_server, fact_project, artifacts):
    """At 390 px the project list was 408 px wide (a visually hidden column header, absolutely positioned, stuck
    out of the table's scroll box) and its Start / Continue button sat beyond the screen's edge inside the
    table. The list and the project's work page now fit the screen, with each row's action on it."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        log_in(page, live_server)
        no_sideways_scroll(page)
        button = page.locator("#my-projects").get_by_role("button", name=re.compile("Start|Continue"))
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, f"the button is at {box}"
        label = page.evaluate(
            "() => getComputedStyle(document.querySelector('#my-projects td[data-label=Status]'), '::before').content"
        )
        assert label == '"Status: "'  # the column's name beside its value
        page.screenshot(path=str(artifacts / "factuality-home-390.png"))
        start_video(page, live_server)
        page.goto(f"{live_server.url}/factuality/projects/pilot/work/")
        no_sideways_scroll(page)
        link = page.locator("#my-videos a").first.bounding_box()
        assert link["x"] + link["width"] <= 390
        page.screenshot(path=str(artifacts / "factuality-work-390.png"))
    finally:
        context.close()


def test_accessibility_smoke(page, live_server, fact_project):
    log_in(page, live_server)
    start_video(page, live_server)
    unnamed = page.evaluate("""() => {
        const name = (el) => {
            if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
            if (el.getAttribute('aria-labelledby')) return el.getAttribute('aria-labelledby');
            if (el.labels && el.labels.length) return el.labels[0].textContent.trim();
            return el.textContent.trim();
        };
        return Array.from(document.querySelectorAll('main button, main input, main textarea, main select, main [role=group]'))
            .filter((el) => !el.closest('[hidden]') && !name(el)).map((el) => el.outerHTML.slice(0, 120));
    }""")
    assert not unnamed, unnamed
    assert page.locator("video").get_attribute("aria-label")
    assert page.locator(".fact-likert legend").first.inner_text() == "Factuality of paragraph A"
    # Tab order: player controls, then per paragraph its sentences (flag, words) and its scale, then submit
    page.locator("h1").click()
    seen = []
    for _ in range(60):
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate("""() => {
            const el = document.activeElement;
            if (el.matches('[data-action=toggle]')) return 'play';
            if (el.matches('[data-role=seek]')) return 'seek';
            const p = el.closest('.fact-paragraph');
            const s = el.closest('.fact-sentence');
            const where = (p ? p.id.slice(-1) : '') + (s ? Number(s.dataset.sentence) + 1 : '');
            if (el.matches('[data-action=flag]')) return 'flag ' + where;
            if (el.matches('.tok')) return 'words ' + where;
            if (el.matches('input[type=radio]')) return 'scale ' + where;
            if (el.id === 'submit') return 'submit';
            return null;
        }""")
        )
        if seen[-1] == "submit":
            break
    order = [item for item in seen if item]
    expected = ["play", "seek"]
    for letter in "ABC":
        for number in range(1, paragraph(page, letter).locator(".fact-sentence").count() + 1):
            expected += [f"flag {letter}{number}", f"words {letter}{number}"]
        expected.append(f"scale {letter}")
    assert order == expected + ["submit"]
    # the words: arrow keys move, Enter marks the first and last word, Space does not play the video
    page.locator("#paragraph-A .fact-sentence").first.locator(".tok").first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")
    assert page.evaluate("() => document.querySelector('video').paused")
    chip = page.locator("#paragraph-A .fact-sentence").first.locator(".fact-span")
    assert chip.count() == 1
    assert chip.get_by_role("button").get_attribute("aria-label").startswith("Remove marked words")


def test_three_annotators_complete_a_project_and_the_researcher_reads_the_report(
    browser, live_server, fact_project, staff_user, django_user_model, tmp_path, artifacts
):
    """Three invited annotators each judge both videos in their own browser; the researcher then aggregates,
    reads alpha per level on the report page and downloads factuality_annotation.json with the button."""
    import io
    import json

    from django.core.management import call_command

    for name in ("bea", "cai"):
        django_user_model.objects.create_user(name, f"{name}@example.org", PASSWORD)
        projects.add_member(fact_project, invite(name)[0])
    plans = {  # per annotator: system -> (score, flagged sentence number, first token, last token) or None
        "annie": {"ClipTrans": (5, None), "RetrievalBaseline": (1, (1, 1, 2)), "DenseCap": (2, (1, 0, 0))},
        "bea": {"ClipTrans": (4, (2, 1, 2)), "RetrievalBaseline": (1, (1, 1, 2)), "DenseCap": (2, (1, 0, 1))},
        "cai": {"ClipTrans": (5, None), "RetrievalBaseline": (2, (1, 2, 2)), "DenseCap": (3, (2, 3, 3))},
    }
    for name, plan in plans.items():
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = context.new_page()
            log_in(page, live_server, username=name)
            starts = []  # Start is pressed once: each submit's answer names the next page
            page.on("request", lambda r, starts=starts: starts.append(r.url) if r.url.endswith("/start/") else None)
            for _ in range(2):
                if "/assignments/" in page.url:
                    page.wait_for_selector('[data-role="controls"]:not([hidden])')
                    pk = int(re.search(r"/assignments/(\d+)/", page.url).group(1))
                else:
                    pk = start_video(page, live_server)
                presented = presented_captions(Assignment.objects.get(pk=pk))
                letters = {caption.system.name: chr(65 + i) for i, (caption, _) in enumerate(presented)}
                page.click('[data-action="toggle"]')
                for system, (value, flag) in plan.items():
                    if flag:
                        number, first, last = flag
                        if first == last:  # one word: click it twice
                            token(page, letters[system], number, first).click()
                            token(page, letters[system], number, first).click()
                        else:
                            drag(
                                page,
                                token(page, letters[system], number, first),
                                token(page, letters[system], number, last),
                            )
                    score(page, letters[system], value)
                page.get_by_role("button", name="Submit and go to the next video").click()
                page.wait_for_url(lambda url, pk=pk: not url.endswith(f"/assignments/{pk}/"))
            assert page.url.endswith("/factuality/projects/pilot/work/")
            assert "There is no video left for you" in page.locator(".messages").inner_text()
            assert len(starts) == 1, starts
            if name == "cai":
                page.screenshot(path=str(artifacts / "factuality-work.png"), full_page=True)
        finally:
            context.close()
    assert Submission.objects.filter(is_current=True).count() == 6
    assert SpanJudgment.objects.count() == 14

    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    try:
        page = context.new_page()
        log_in(page, live_server, username="researcher", password="pw-researcher-1")
        page.get_by_role("link", name="pilot").click()
        page.wait_for_url(f"{live_server.url}/factuality/projects/pilot/")
        assert page.locator("#progress").inner_text().count("6") >= 1
        page.get_by_role("button", name="Aggregate into a label set").click()
        page.wait_for_url(f"{live_server.url}/factuality/projects/pilot/")
        assert "Aggregated 6 captions" in page.locator(".messages").inner_text()
        no_sideways_scroll(page)
        page.screenshot(path=str(artifacts / "factuality-project.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("link", name="Download factuality_annotation.json").click()
        saved = tmp_path / "download.json"
        download.value.save_as(saved)
        expected = io.StringIO()
        call_command(
            "export_dataset",
            "--format",
            "factvc",
            "--name",
            "fact-demo",
            "--labels",
            "pilot",
            "--out",
            "-",
            stdout=expected,
            stderr=io.StringIO(),
        )
        assert saved.read_text() == expected.getvalue()
        assert json.loads(saved.read_text())["clip-01"]["RetrievalBaseline"]["sentences"] == [
            "a [tv presenter] stands in front of a wall ."
        ]
        page.get_by_role("link", name="Agreement report").click()
        page.wait_for_url(f"{live_server.url}/factuality/projects/pilot/report/")
        rows = page.locator("#alpha tbody tr").all_inner_texts()
        assert [row.split("\t")[:2] for row in rows] == [
            ["Paragraph", "ordinal"],
            ["Paragraph", "interval"],
            ["Sentence", "nominal"],
            ["Word", "nominal"],
        ]
        for row in rows:
            cells = row.split("\t")
            assert re.fullmatch(r"-?\d\.\d{3}", cells[2]) and cells[4] == "3", row
        assert "fewer than 30" in page.locator("#warnings").inner_text()
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.fact-chart img'))"
            ".every((img) => img.complete && img.naturalWidth > 0)"
        )
        no_sideways_scroll(page)
        page.screenshot(path=str(artifacts / "factuality-report.png"), full_page=True)
    finally:
        context.close()
