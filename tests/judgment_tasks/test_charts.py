"""Charts are drawn for one column of a paper: exactly 8.5 cm wide at any content, every text at 7 pt or more,
and the same data gives the same SVG bytes."""

import copy
import struct

import matplotlib.text
import pandas as pd
import pytest

from annotation_site.judgment_tasks import charts, presets, reports
from annotation_site.judgment_tasks.definition import normalise


def report_of(
    key,
    answer,
    *,
    items=12,
    lists=None,
    models=(),
    model_answer=None,
    item_model=None,
    subsets=("T2V", "V2T"),
    definition=None,
):
    definition = normalise(definition or presets.PRESETS[key]["definition"])
    frame = pd.DataFrame(
        [
            (i, f"k{i}", f"v{i}", "", item_model(i) if item_model else "", subsets[i % len(subsets)])
            for i in range(items)
        ],
        columns=["item_id", "key", "video_id", "system", "model", "subset"],
    )
    lengths = {i: dict(lists or {}) for i in range(items)}
    human = [(i, a, answer(i, a)) for i in range(items) for a in range(3)]
    model_rows = [(i, m, model_answer(i, m)) for i in range(items) for m in models]
    return reports.build(definition, frame, lengths, human, model_rows)[0]


REPORTS = {
    "quality": lambda: report_of(
        "fifa-question-quality",
        lambda i, a: {"matches": [[0, 0], [1, (i + a) % 3]]},
        lists={"tuples": 3, "questions": 3},
    ),
    "verification": lambda: report_of(
        "fifa-verification",
        lambda i, a: {"answer": ["yes", "no" if (i + a) % 4 else "yes"]},
        lists={"questions": 2},
        models=["Video-LLaVA", "A-rather-long-VideoQA-model-name-34B"],
        model_answer=lambda i, m: {"answer": ["yes", "yes"]},
    ),
    "vc-inspector": lambda: report_of(
        "vc-inspector",
        lambda i, a: {"correct": 1 + (i * a) % 5, "names_errors": 1 + (i + a) % 5, "comment": ""},
        item_model=lambda i: ["vci-3b", "vci-7b"][i % 2],
    ),
}


@pytest.mark.parametrize("which", list(REPORTS))
def test_charts_fit_one_column_with_legible_text(which):
    report = REPORTS[which]()
    for name in charts.chart_names(report):
        figure = charts.chart(report, name)
        sizes = [text.get_fontsize() for text in figure.findobj(matplotlib.text.Text) if text.get_text().strip()]
        assert sizes and min(sizes) >= 7, (name, min(sizes))
        png = charts.render(figure, "png")
        width = struct.unpack(">I", png[16:20])[0]
        assert abs(width / 300 * 2.54 - 8.5) < 0.02, (name, width)
        assert charts.render(charts.chart(report, name), "svg") == charts.render(charts.chart(report, name), "svg")


LONG_MODELS = [
    "Video-LLaVA-7B",
    "A-rather-long-VideoQA-model-name-34B",
    "VideoChat2_HD_mistral_7B_instruct",
    "LLaVA-NeXT-Video-34B-DPO",
    "Qwen2-VL-72B-Instruct (greedy decoding)",
    "GPT-4o-2024-08-06",
    "InternVL2-76B",
    "TimeChat-7B",
]
LONG_SUBSETS = [
    "ActivityNet Captions val_1 (long videos)",
    "YouCook2 validation split",
    "MSR-VTT test 1k-A",
    "VATEX public test",
    "T2V",
    "V2T",
]


def long_choice_definition():
    definition = copy.deepcopy(presets.PRESETS["fifa-verification"]["definition"])
    definition["questions"][0]["options"] = [
        ["yes_clearly", "Yes, clearly"],
        ["not_shown_in_the_video", "Not shown"],
        ["cannot_tell_from_the_video", "Cannot tell"],
        ["partly", "Partly"],
    ]
    return definition


STRESS = {
    "8 long models, 6 long subsets": lambda: report_of(
        "fifa-verification",
        lambda i, a: {"answer": ["yes", "no" if (i + a) % 4 else "yes"]},
        items=48,
        lists={"questions": 2},
        models=LONG_MODELS,
        subsets=LONG_SUBSETS,
        model_answer=lambda i, m: {"answer": ["yes", "no" if (i + len(m)) % 3 else "yes"]},
    ),
    "long answer values": lambda: report_of(
        "fifa-verification",
        lambda i, a: {
            "answer": [["yes_clearly", "not_shown_in_the_video", "cannot_tell_from_the_video", "partly"][(i + a) % 4]]
            * 2
        },
        items=24,
        lists={"questions": 2},
        definition=long_choice_definition(),
    ),
    "many quality subsets": lambda: report_of(
        "fifa-question-quality",
        lambda i, a: {"matches": [[0, 0], [1, (i + a) % 3]]},
        items=36,
        lists={"tuples": 3, "questions": 3},
        subsets=LONG_SUBSETS,
    ),
}
REPORTS.update(STRESS)


@pytest.mark.parametrize("which", list(REPORTS))
def test_charts_have_no_overlapping_or_cut_text(which):
    from tests.figure_checks import assert_legible

    report = REPORTS[which]()
    for name in charts.chart_names(report):
        assert_legible(charts.chart(report, name), f"{which} {name}")
