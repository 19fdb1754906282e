"""The draft rules of static/js/annotation-session.js, run in headless Chromium on the module alone (no server:
the page and the module are served by Playwright's router). A page that changed nothing since it loaded sends
no draft, not even on the keepalive path (hidden tab, minute autosave); the answer a tab kept (DraftKeeper) is
restored over the draft the server rendered only when that draft is one the tab knows (the version of its last
acknowledged save, or an answer it sent), and dropped once the server acknowledged it or when someone else saved
since."""

from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.browser]

STATIC = Path(__file__).resolve().parent.parent.parent / "static"
ORIGIN = "http://captioneval.test"


@pytest.fixture
def module_page(page):
    def serve(route):
        path = urlsplit(route.request.url).path
        if path.startswith("/static/"):
            route.fulfill(path=STATIC / path.removeprefix("/static/"), content_type="text/javascript")
        else:
            route.fulfill(body="<!doctype html><title>drafts</title>", content_type="text/html")

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    return page


def test_a_page_that_changed_nothing_sends_no_draft(module_page):
    result = module_page.evaluate(
        """async () => {
          const {AnnotationSession} = await import("/static/js/annotation-session.js");
          const sent = [];
          window.fetch = async (url, init) => {
            sent.push(JSON.parse(init.body));
            return new Response(JSON.stringify({saved_at: `v${sent.length}`}), {status: 200});
          };
          const state = {correct: null};
          const session = new AnnotationSession({draftUrl: "/api/tasks/assignments/1/draft/", submitUrl: "/s/",
            csrfToken: () => "t", editable: true, initial: {time_spent: 5}, getState: () => state});
          await session.saveDraft({keepalive: true});  // the tab is hidden, or the minute autosave runs
          await session.saveDraft();
          const unchanged = sent.length;
          state.correct = 4;
          session.scheduleDraft();
          await session.saveDraft({keepalive: true});
          await session.saveDraft({keepalive: true});  // changed since it loaded: keeps saving its time
          return {unchanged, sent};
        }"""
    )
    assert result["unchanged"] == 0
    assert [body["answer"] for body in result["sent"]] == [{"correct": 4}, {"correct": 4}]


KEEPER = """async ([rendered, version, basedOn]) => {
  const {DraftKeeper} = await import("/static/js/annotation-session.js");
  const keeper = new DraftKeeper({key: "/d/1/", version, basedOn});
  const kept = keeper.takeNewer(JSON.stringify(rendered));
  return {kept: kept && kept.answer, left: sessionStorage.getItem("captioneval:draft:/d/1/") !== null};
}"""


def keeper_run(page, script):
    return page.evaluate(
        """async (script) => {
          sessionStorage.clear();
          const {DraftKeeper} = await import("/static/js/annotation-session.js");
          return (new Function("DraftKeeper", script))(DraftKeeper);
        }""",
        script,
    )


def test_the_kept_answer_wins_only_over_a_draft_the_tab_knows(module_page):
    page = module_page
    # changed, reloaded before any save landed: the server still renders version v1
    keeper_run(page, 'const k = new DraftKeeper({key: "/d/1/", version: "v1"}); k.note({answer: {q: 1}});')
    assert page.evaluate(KEEPER, [{"q": None}, "v1", None]) == {"kept": {"q": 1}, "left": True}
    # its save of {q: 1} landed first (v2), then it changed again: the later answer wins
    keeper_run(
        page,
        'const k = new DraftKeeper({key: "/d/1/", version: "v1"}); k.sending({answer: {q: 1}}); k.note({answer: {q: 2}});',
    )
    assert page.evaluate(KEEPER, [{"q": 1}, "v2", None]) == {"kept": {"q": 2}, "left": True}
    # the server holds what the tab kept: nothing to restore, the copy goes
    assert page.evaluate(KEEPER, [{"q": 2}, "v3", None]) == {"kept": None, "left": False}
    # someone else saved after the tab last heard from the server: theirs stands
    keeper_run(page, 'const k = new DraftKeeper({key: "/d/1/", version: "v1"}); k.note({answer: {q: 1}});')
    assert page.evaluate(KEEPER, [{"q": 7}, "v9", None]) == {"kept": None, "left": False}
    # a copy made before the current submission is dropped
    keeper_run(page, 'const k = new DraftKeeper({key: "/d/1/", version: null}); k.note({answer: {q: 1}});')
    assert page.evaluate(KEEPER, [{"q": 5}, None, "uuid-of-a-later-submit"]) == {"kept": None, "left": False}


def test_the_copy_goes_once_the_server_acknowledged_it(module_page):
    left = keeper_run(
        module_page,
        """const k = new DraftKeeper({key: "/d/1/", version: null});
        k.note({answer: {q: 1}});
        const first = k.sending({answer: {q: 1}});
        k.note({answer: {q: 2}});
        const second = k.sending({answer: {q: 2}});
        k.acknowledged(second, "v2");
        k.acknowledged(first, "v1");  // late: does not move the version back
        const afterAck = sessionStorage.getItem("captioneval:draft:/d/1/");
        k.note({answer: {q: 3}});
        const record = JSON.parse(sessionStorage.getItem("captioneval:draft:/d/1/"));
        k.forget();  // a submit was stored
        return {afterAck, version: record.version, forgotten: sessionStorage.getItem("captioneval:draft:/d/1/")};""",
    )
    assert left == {"afterAck": None, "version": "v2", "forgotten": None}
