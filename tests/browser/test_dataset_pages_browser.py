"""The dataset pages in real headless Chromium (Debian's /usr/bin/chromium through Playwright), against a live
server: logging in, clicking through to a video, and checking in the browser that the video really plays,
seeks and changes speed with our controls and shortcuts; and that the import page lists a bad file's problems."""

import re

import pytest

from annotation_site.corpus.models import Dataset, Video

pytestmark = [pytest.mark.browser]

VIEWPORT_WIDTH = 1280


def video_state(page):
    return page.evaluate("""() => {
        const v = document.querySelector('video');
        return {currentTime: v.currentTime, paused: v.paused, error: v.error && v.error.code,
                playbackRate: v.playbackRate, duration: v.duration, readyState: v.readyState, src: v.currentSrc};
    }""")


def wait_until(page, expression, timeout=10_000):
    """Wait for a JavaScript expression on the page's <video> (named v) to become true."""
    page.wait_for_function(
        f"() => {{ const v = document.querySelector('video'); return {expression}; }}", timeout=timeout
    )


def assert_no_horizontal_scroll(page):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= VIEWPORT_WIDTH, f"the page is {width} px wide: it scrolls sideways at {VIEWPORT_WIDTH} px"


def test_video_plays_seeks_and_changes_speed(page, live_server, video_dataset, login, artifacts):
    video = Video.objects.get(dataset=video_dataset, external_id="clip-01")
    assert video.kind == "file"
    console_errors = []
    page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    media_statuses = []
    page.on("response", lambda r: "/media/videos/" in r.url and media_statuses.append(r.status))

    login(page)
    assert page.locator("header .brand").inner_text() == "CaptionEval"
    page.get_by_role("link", name="player-demo").click()
    page.wait_for_url(re.compile(r".*/datasets/player-demo/$"))
    assert page.locator("h1").inner_text() == "player-demo"
    row = page.locator("#videos tbody tr").first
    assert "clip-01" in row.inner_text()
    if video.status == Video.Status.READY:  # processed (eager tasks): the thumbnail is served and loads
        page.wait_for_function(
            "() => { const i = document.querySelector('#videos img.thumb'); "
            "return i && i.complete && i.naturalWidth > 0; }"
        )
    assert_no_horizontal_scroll(page)

    page.get_by_role("link", name="clip-01").click()
    page.wait_for_url(re.compile(r".*/datasets/player-demo/videos/clip-01/.*"))
    # our controls replaced the browser's once the module ran
    page.wait_for_selector('[data-role="controls"]:not([hidden])')
    assert page.evaluate("() => document.querySelector('video').controls") is False
    wait_until(page, "v.readyState >= 1 && isFinite(v.duration)")
    state = video_state(page)
    assert state["error"] is None and abs(state["duration"] - 12.0) < 0.2
    assert state["paused"] and state["currentTime"] == 0

    # play with our button: the video really advances
    page.click('[data-action="toggle"]')
    wait_until(page, "v.currentTime > 0.3 && !v.paused")
    page.wait_for_timeout(500)
    state = video_state(page)
    assert state["currentTime"] > 0.3 and not state["paused"] and state["error"] is None
    assert page.locator('[data-action="toggle"]').inner_text() == "Pause"
    assert re.match(r"0:0\d\.\d / 0:12\.0", page.locator('[data-role="time"]').inner_text())

    # keyboard: k pauses, l jumps forward 5 s, j back 5 s, . and , step one frame (1/25 s)
    page.locator("body").press("k")
    wait_until(page, "v.paused")
    paused_at = video_state(page)["currentTime"]
    page.keyboard.press("l")
    wait_until(page, f"Math.abs(v.currentTime - {paused_at + 5}) < 0.05 && !v.seeking")
    page.keyboard.press("j")
    wait_until(page, f"Math.abs(v.currentTime - {paused_at}) < 0.05 && !v.seeking")
    page.keyboard.press(".")
    wait_until(page, f"Math.abs(v.currentTime - {paused_at + 0.04}) < 0.005")
    page.keyboard.press(",")
    page.keyboard.press(",")
    wait_until(page, f"Math.abs(v.currentTime - {paused_at - 0.04}) < 0.005")
    assert video_state(page)["paused"]

    # clicking three quarters along the seek bar goes to about 9 s of 12
    seek = page.locator('[data-role="seek"]')
    box = seek.bounding_box()
    seek.click(position={"x": box["width"] * 0.75, "y": box["height"] / 2})
    wait_until(page, "Math.abs(v.currentTime - 9) < 0.6")

    # speed: our buttons and the [ ] shortcuts set playbackRate
    page.get_by_role("button", name="1.5×").click()
    assert video_state(page)["playbackRate"] == 1.5
    assert page.get_by_role("button", name="1.5×").get_attribute("aria-pressed") == "true"
    page.locator("body").press("]")
    assert video_state(page)["playbackRate"] == 2
    page.keyboard.press("[")
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert video_state(page)["playbackRate"] == 1
    page.keyboard.press("[")
    assert video_state(page)["playbackRate"] == 0.75

    # space plays again (page focus, not a button)
    page.locator("h1").click()
    page.keyboard.press(" ")
    wait_until(page, "!v.paused")
    page.keyboard.press(" ")
    wait_until(page, "v.paused")

    # a sentence time is a seek link: it jumps there and plays
    page.locator('.caption[data-system="RetrievalBaseline"] a.seek').click()
    wait_until(page, "!v.paused && v.currentTime >= 2 && v.currentTime < 3")
    wait_until(
        page,
        "document.querySelector('.caption[data-system=\"RetrievalBaseline\"] .sentence').classList"
        ".contains('is-current')",
    )
    page.click('[data-action="toggle"]')
    wait_until(page, "v.paused")

    # labels shown: the error span is highlighted inside the erroneous sentence
    mark = page.locator('.caption[data-system="RetrievalBaseline"] .sentence--error mark.error-span')
    assert mark.inner_text() == "tv presenter"
    assert video_state(page)["error"] is None
    # the file came through the media middleware with byte ranges (what lets the browser seek)
    assert media_statuses and set(media_statuses) <= {200, 206} and 206 in media_statuses
    assert not console_errors, console_errors

    page.evaluate("() => window.scrollTo(0, 0)")
    assert_no_horizontal_scroll(page)
    page.screenshot(path=str(artifacts / "video-page.png"))
    page.screenshot(path=str(artifacts / "video-page-full.png"), full_page=True)


def test_home_and_dataset_pages_fit_the_screen(page, live_server, video_dataset, login, artifacts):
    page.goto(f"{live_server.url}/accounts/login/")
    assert_no_horizontal_scroll(page)
    page.screenshot(path=str(artifacts / "login-page.png"))
    login(page)
    assert page.locator("#datasets tbody tr").count() == 1
    assert_no_horizontal_scroll(page)
    page.screenshot(path=str(artifacts / "home-page.png"))
    page.goto(f"{live_server.url}/datasets/player-demo/")
    assert page.locator("#label-summary tbody tr").count() == 2
    assert page.locator('#label-chart svg g[id^="bar-"]').count() == 4
    assert_no_horizontal_scroll(page)
    page.screenshot(path=str(artifacts / "dataset-page.png"), full_page=True)


def test_import_page_lists_problems_of_a_bad_file(page, live_server, transactional_db, login, artifacts):
    bad = (
        b'{"video_id": "v1", "system": "COOT", "paragraph_score": 3, "sentences": ["fine ."]}\n'
        b'{"video_id": "v2", "system": "COOT", "paragraph_score": 0, "sentences": ["bad ."]}\n'
        b'{"video_id": "v3", "system": "COOT", "sentences": [\n'
    )
    login(page)
    page.get_by_role("link", name="Import", exact=True).click()
    page.wait_for_url(f"{live_server.url}/import/")
    page.fill("#id_name", "broken-upload")
    page.select_option("#id_format", "jsonl")
    page.set_input_files("#id_file", files=[{"name": "bad.jsonl", "mimeType": "application/x-ndjson", "buffer": bad}])
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("#problems")
    problems = page.locator("#problems")
    assert "2 problems found: nothing was imported" in problems.inner_text()
    cells = [
        [cell.strip() for cell in row.split("\t")] for row in page.locator("#problems tr.problem").all_inner_texts()
    ]
    assert [row[:3] for row in cells] == [["bad.jsonl", "2", "paragraph_score"], ["bad.jsonl", "3", "—"]]
    assert "paragraph_score must be an integer from 1 to 5, not 0" in cells[0][3]
    assert cells[1][3].startswith("invalid JSON")
    assert page.input_value("#id_name") == "broken-upload"
    assert not Dataset.objects.exists()
    assert_no_horizontal_scroll(page)
    page.screenshot(path=str(artifacts / "import-problems.png"), full_page=True)

    # a good file then imports and lands on the new dataset's page
    good = b'{"video_id": "v1", "system": "COOT", "paragraph_score": 3, "sentences": ["fine ."]}\n'
    page.set_input_files("#id_file", files=[{"name": "good.jsonl", "mimeType": "application/x-ndjson", "buffer": good}])
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(f"{live_server.url}/datasets/broken-upload/")
    assert "Imported broken-upload" in page.locator(".messages").inner_text()
    assert Dataset.objects.filter(name="broken-upload").exists()


@pytest.mark.parametrize("width, height", [(1024, 768), (390, 844)])
def test_pages_do_not_scroll_sideways_on_smaller_screens(
    browser, live_server, video_dataset, staff_user, width, height, artifacts
):
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", "pw-researcher-1")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        for path in ("/", "/datasets/player-demo/", "/datasets/player-demo/videos/clip-01/", "/import/"):
            page.goto(live_server.url + path)
            scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
            assert scroll_width <= width, f"{path} is {scroll_width} px wide at a {width} px wide screen"
        page.screenshot(path=str(artifacts / f"import-page-{width}.png"), full_page=True)
        page.goto(f"{live_server.url}/datasets/player-demo/videos/clip-01/")
        page.screenshot(path=str(artifacts / f"video-page-{width}.png"), full_page=True)
    finally:
        context.close()
