"""Every judgment-task preset in real headless Chromium (issue #10, "done when"): the researcher sets each task up
from its preset on the "New task" page and imports its items (and, for fact verification, two VideoQA models'
answers) on the task page; three annotators each log in once and fill in every item of every task with the mouse;
the researcher reads each report page.

The answers are a plan written here, with a known majority, so every figure on the report is checked against a
value computed here: the FIFA Table 2 shares and Table 3 model accuracies by hand (counts in the comments),
kappa with statsmodels' ``fleiss_kappa`` and alpha with the ``krippendorff`` package on matrices built here.
FIFA question quality (matching pairs, with the keyboard) has its own end-to-end test in test_task_pages.py."""

import json
import re

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation_site.judgment_tasks.models import Submission, Task
from tests.browser.conftest import ANNOTATOR_PASSWORD as PASSWORD
from tests.browser.test_task_pages import log_in

pytestmark = [pytest.mark.browser]

ANNOTATORS = ("ann1", "ann2", "ann3")

# Each task: its preset, its items (a marker in each item's text tells the page apart), optional model answers,
# and per annotator and item the answer to enter, in the stored shape (row answers in list order; an optional
# comment left empty is stored as "").
TASKS = {
    "faith": {
        "preset": "fifa-faithfulness",
        "items": [
            {"item_id": "f-1", "video_id": "clip-01", "prompt": "Describe the test clip [f1]", "text": "A card."},
            {"item_id": "f-2", "video_id": "clip-01", "text": "A dog runs across a lawn [f2]."},
        ],
        "plan": {
            "ann1": {"f-1": {"faithfulness": 5}, "f-2": {"faithfulness": 2}},
            "ann2": {"f-1": {"faithfulness": 5}, "f-2": {"faithfulness": 1}},
            "ann3": {"f-1": {"faithfulness": 4}, "f-2": {"faithfulness": 1}},
        },
    },
    "conv": {
        "preset": "fifa-conversion",
        "items": [
            {
                "item_id": "c-1",
                "video_id": "clip-01",
                "tuples": ["a test card is shown [c1]", "a square moves"],
                "questions": ["Is a test card shown?", "Is the square red?"],
            },
            {
                "item_id": "c-2",
                "video_id": "clip-01",
                "tuples": ["numbers count up [c2]", "a tone plays"],
                "questions": ["Do numbers count up?", "Is a tone played?"],
            },
        ],
        "plan": {
            "ann1": {"c-1": {"valid": ["valid", "valid"]}, "c-2": {"valid": ["valid", "valid"]}},
            "ann2": {"c-1": {"valid": ["valid", "invalid"]}, "c-2": {"valid": ["valid", "valid"]}},
            "ann3": {"c-1": {"valid": ["valid", "invalid"]}, "c-2": {"valid": ["invalid", "valid"]}},
        },
    },
    "deps": {
        "preset": "fifa-dependency",
        "items": [
            {
                "item_id": "d-1",
                "video_id": "clip-01",
                "tuples": ["a card [d1]", "the card is grey", "a square"],
                "dependencies": ["T2 depends on T1", "T3 depends on T2"],
            },
            {
                "item_id": "d-2",
                "video_id": "clip-01",
                "tuples": ["a screen [d2]", "the screen turns black"],
                "dependencies": ["T1 depends on T2", "T2 depends on T1"],
            },
        ],
        "plan": {
            "ann1": {"d-1": {"valid": ["valid", "invalid"]}, "d-2": {"valid": ["invalid", "valid"]}},
            "ann2": {"d-1": {"valid": ["valid", "invalid"]}, "d-2": {"valid": ["invalid", "valid"]}},
            "ann3": {"d-1": {"valid": ["valid", "valid"]}, "d-2": {"valid": ["invalid", "valid"]}},
        },
    },
    "verify": {
        "preset": "fifa-verification",
        "items": [
            {
                "item_id": "v-1",
                "video_id": "clip-01",
                "subset": "T2V",
                "questions": ["Is a test card shown [v1]?", "Is there a dog?", "Do numbers count up?"],
            },
            {
                "item_id": "v-2",
                "video_id": "clip-01",
                "subset": "V2T",
                "questions": ["Is there a cat [v2]?", "Does a square move?"],
            },
        ],
        "plan": {
            "ann1": {"v-1": {"answer": ["yes", "no", "yes"]}, "v-2": {"answer": ["no", "yes"]}},
            "ann2": {"v-1": {"answer": ["yes", "no", "no"]}, "v-2": {"answer": ["no", "yes"]}},
            "ann3": {"v-1": {"answer": ["yes", "yes", "yes"]}, "v-2": {"answer": ["yes", "yes"]}},
        },
        # gold (majority): v-1 yes / no / yes, v-2 no / yes
        "model_answers": [
            {"item_id": "v-1", "model": "qa-a", "answers": {"answer": ["yes", "no", "no"]}},  # 2 of 3
            {"item_id": "v-2", "model": "qa-a", "answers": {"answer": ["no", "yes"]}},  # 2 of 2
            {"item_id": "v-1", "model": "qa-b", "answers": {"answer": ["yes", "yes", "yes"]}},  # 2 of 3
            {"item_id": "v-2", "model": "qa-b", "answers": {"answer": ["yes", "no"]}},  # 0 of 2
        ],
    },
}
VCI_ITEMS = [
    {
        "item_id": "i-1",
        "video_id": "clip-01",
        "model": "vci-7b",
        "caption": "a man walks a dog in a park .",
        "score": "1",
        "explanation": "The video shows a test card [i1], not a man or a dog.",
    },
    {
        "item_id": "i-2",
        "video_id": "clip-01",
        "model": "vci-3b",
        "caption": "a grey test card with a moving square .",
        "score": "2",
        "explanation": "The square does not move [i2].",
    },
]
TASKS["vci"] = {
    "preset": "vc-inspector",
    "items": VCI_ITEMS,
    "plan": {
        "ann1": {
            "i-1": {"correct": 5, "names_errors": 4, "comment": "Right."},
            "i-2": {"correct": 1, "names_errors": 2, "comment": ""},
        },
        "ann2": {
            "i-1": {"correct": 4, "names_errors": 4, "comment": ""},
            "i-2": {"correct": 2, "names_errors": 1, "comment": ""},
        },
        "ann3": {
            "i-1": {"correct": 5, "names_errors": 5, "comment": ""},
            "i-2": {"correct": 2, "names_errors": 2, "comment": ""},
        },
    },
}
TASKS["vcib"] = {
    "preset": "vc-inspector-binary",
    "items": VCI_ITEMS,
    "plan": {
        "ann1": {
            "i-1": {"correct": "yes", "names_errors": "yes", "comment": "Fine."},
            "i-2": {"correct": "no", "names_errors": "no", "comment": ""},
        },
        "ann2": {
            "i-1": {"correct": "yes", "names_errors": "no", "comment": ""},
            "i-2": {"correct": "no", "names_errors": "no", "comment": ""},
        },
        "ann3": {
            "i-1": {"correct": "yes", "names_errors": "yes", "comment": ""},
            "i-2": {"correct": "yes", "names_errors": "no", "comment": ""},
        },
    },
}


def jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def set_up(page, live_server, tmp_path, name, spec):
    """Create the task from its preset on the page, import its items (and model answers) on the task page."""
    page.goto(f"{live_server.url}/tasks/new/")
    page.fill("#id_name", name)
    page.select_option("#id_dataset", "task-demo")
    page.select_option("#id_preset", spec["preset"])
    page.fill("#id_annotators", "\n".join(ANNOTATORS))
    page.click("#task-form button[type=submit]")
    page.wait_for_url(f"{live_server.url}/tasks/t/{name}/")
    page.set_input_files("#id_items-file", jsonl(tmp_path / f"{name}.jsonl", spec["items"]))
    page.click("#items-form button[type=submit]")
    page.wait_for_selector(f"text=Imported {len(spec['items'])} items")
    if "model_answers" in spec:
        page.set_input_files("#id_answers-file", jsonl(tmp_path / f"{name}-models.jsonl", spec["model_answers"]))
        page.click("#answers-form button[type=submit]")
        page.wait_for_selector(f"text={len(spec['model_answers'])} model answer")


def shown_item(page, spec):
    """The item on the page, by the marker in its text."""
    text = page.inner_text("main")
    [item] = [item for item in spec["items"] if f"[{item['item_id'].replace('-', '')}]" in text]
    return item


def enter(page, answer):
    """Enter an answer in the stored shape with the mouse: scale points and options, per row for row questions,
    free text typed."""
    for question, value in answer.items():
        block = page.locator(f"#q-{question}")
        if block.get_attribute("data-type") == "text":
            if value:
                page.fill(f"#text-{question}", value)
        elif isinstance(value, list):
            for row, option in enumerate(value):
                block.locator(f'.task-row[data-row="{row}"] label:has(input[value="{option}"])').click()
        else:
            block.locator(f'label:has(input[value="{value}"])').first.click()


def work_through(page, live_server, name, spec, username):
    page.goto(f"{live_server.url}/tasks/t/{name}/work/")
    page.click("#start")
    for _ in spec["items"]:
        page.wait_for_url(re.compile(r".*/tasks/assignments/\d+/$"))
        page.wait_for_selector("#annotation")
        item = shown_item(page, spec)
        if spec["preset"] == "fifa-faithfulness" and "prompt" in item:
            assert item["prompt"] in page.inner_text("#field-prompt")  # FIFA Fig. 7 shows the prompt
        html = page.content()
        assert "qa-a" not in html and (not item.get("model") or item["model"] not in html)  # models never shown
        enter(page, spec["plan"][username][item["item_id"]])
        assert "no answer" not in page.inner_text("#annotation")
        current = page.url
        page.click("#submit")
        page.wait_for_url(lambda url, current=current: url != current, timeout=15000)
    page.wait_for_url(f"{live_server.url}/tasks/t/{name}/work/")
    assert "no item left for you" in page.content()


# --- references, computed here from the plans ------------------------------------------------------------------


def units(spec, question):
    """(item, row) units of a question in item order, and each annotator's value per unit."""
    keys, values = [], {u: [] for u in ANNOTATORS}
    for item in spec["items"]:
        first = spec["plan"][ANNOTATORS[0]][item["item_id"]][question]
        rows = range(len(first)) if isinstance(first, list) else [None]
        for row in rows:
            keys.append((item["item_id"], row))
            for user in ANNOTATORS:
                given = spec["plan"][user][item["item_id"]][question]
                values[user].append(given if row is None else given[row])
    return keys, values


def alpha_text(spec, question, level, *, model=None):
    keys, values = units(spec, question)
    keep = [i for i, (item_id, _) in enumerate(keys) if model is None or model_of(spec, item_id) == model]
    categories = sorted({v for user in ANNOTATORS for v in values[user]}, key=str)
    matrix = np.array([[categories.index(values[u][i]) for i in keep] for u in ANNOTATORS], dtype=float)
    if level in ("ordinal", "interval"):  # Likert points: the values themselves
        matrix = np.array([[values[u][i] for i in keep] for u in ANNOTATORS], dtype=float)
    if len(np.unique(matrix)) < 2:  # one value only: no disagreement is possible, alpha is undefined
        return "—"
    return f"{krippendorff.alpha(reliability_data=matrix, level_of_measurement=level):.3f}"


def kappa_text(spec, question):
    _, values = units(spec, question)
    categories = sorted({v for user in ANNOTATORS for v in values[user]}, key=str)
    table = [[sum(values[u][i] == c for u in ANNOTATORS) for c in categories] for i in range(len(values["ann1"]))]
    return f"{fleiss_kappa(np.array(table), method='fleiss'):.3f}"


def model_of(spec, item_id):
    return next(item.get("model") for item in spec["items"] if item["item_id"] == item_id)


def agreement_row(page, question):
    return page.locator("#agreement tbody tr", has=page.locator(f'th:text-is("{question}")')).inner_text()


def check_report(page, live_server, name, spec):
    page.goto(f"{live_server.url}/tasks/t/{name}/report/")
    charts = page.locator(".task-chart img")
    assert charts.count() >= 2  # answers and agreement per question at least
    charts.last.scroll_into_view_if_needed()  # the charts load lazily
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.task-chart img')).every(i => i.complete && i.naturalWidth > 0)"
    )
    head = page.inner_text(".page-head")
    assert f"{len(spec['items'])} of {len(spec['items'])} items judged" in head
    assert f"{3 * len(spec['items'])} answers by 3 annotators" in head
    preset = spec["preset"]
    if preset == "fifa-faithfulness":
        row = agreement_row(page, "faithfulness")
        # ratings 5 5 4 / 2 1 1
        assert f"ordinal {alpha_text(spec, 'faithfulness', 'ordinal')}" in row
        assert f"interval {alpha_text(spec, 'faithfulness', 'interval')}" in row
        assert kappa_text(spec, "faithfulness") in row
    elif preset in ("fifa-conversion", "fifa-dependency"):
        # conversion: majorities valid, invalid / valid, valid -> 3 of 4 units valid;
        # dependency: valid, invalid / invalid, valid -> 2 of 4
        share, matching = ("75.00%", 3) if preset == "fifa-conversion" else ("50.00%", 2)
        cells = page.locator("#figure-table-0 tbody tr").first.locator("td").all_inner_texts()
        assert cells == [share, "4", str(matching), "0"]
        row = agreement_row(page, "valid")
        assert f"nominal {alpha_text(spec, 'valid', 'nominal')}" in row and kappa_text(spec, "valid") in row
    elif preset == "fifa-verification":
        rows = {
            r.locator("th").inner_text(): r.locator("td").all_inner_texts()
            for r in page.locator("#figure-table-0 tbody tr").all()
        }
        # qa-a: 4 of 5 (T2V 2 of 3, V2T 2 of 2); qa-b: 2 of 5 (T2V 2 of 3, V2T 0 of 2)
        assert rows["qa-a"] == ["80.00%", "T2V 66.67% · V2T 100.00%", "5 (0)"]
        assert rows["qa-b"] == ["40.00%", "T2V 66.67% · V2T 0.00%", "5 (0)"]
        assert "Against 5 gold answers (human majority); 0 tied units left out." in page.inner_text("#figure-table-0")
        row = agreement_row(page, "answer")
        assert f"nominal {alpha_text(spec, 'answer', 'nominal')}" in row and kappa_text(spec, "answer") in row
    else:  # VC-Inspector: alpha over all versions and per version, for both questions
        levels = ("ordinal", "interval") if preset == "vc-inspector" else ("nominal",)
        for index, question in enumerate(("correct", "names_errors")):
            rows = {
                r.locator("th").inner_text(): r.locator("td").first.inner_text()
                for r in page.locator(f"#figure-table-{index} tbody tr:has(th)").all()
            }
            assert set(rows) == {"all versions", "vci-7b", "vci-3b"}
            # two items: each version's alpha says it rests on too few units
            assert page.locator(f"#figure-table-{index} tr.figure-warning").count() == 3
            for label, model in (("all versions", None), ("vci-7b", "vci-7b"), ("vci-3b", "vci-3b")):
                for level in levels:
                    assert f"{level} {alpha_text(spec, question, level, model=model)}" in rows[label], (label, level)
            row = agreement_row(page, question)
            assert all(f"{level} {alpha_text(spec, question, level)}" in row for level in levels)
        assert "free text: 1 answer" in agreement_row(page, "comment")


def test_every_preset_set_up_filled_by_three_annotators_and_reported(
    browser, live_server, login, clip_dataset, tmp_path, artifacts
):
    staff = browser.new_context(viewport={"width": 1280, "height": 800})
    page = login(staff.new_page())
    for name, spec in TASKS.items():
        set_up(page, live_server, tmp_path, name, spec)

    for username in ANNOTATORS:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        work = context.new_page()
        log_in(work, live_server, username, PASSWORD)
        for name, spec in TASKS.items():
            work_through(work, live_server, name, spec, username)
        context.close()

    for name, spec in TASKS.items():  # what the pages stored is exactly the plan
        stored = {
            (s.annotator.user.username, s.assignment.item.key): s.answers
            for s in Submission.objects.filter(assignment__task=Task.objects.get(name=name)).select_related(
                "annotator__user", "assignment__item"
            )
        }
        assert stored == {(u, k): answer for u, plan in spec["plan"].items() for k, answer in plan.items()}, name

    for name, spec in TASKS.items():
        check_report(page, live_server, name, spec)
        page.screenshot(path=str(artifacts / f"task-report-{spec['preset']}.png"), full_page=True)
    staff.close()
