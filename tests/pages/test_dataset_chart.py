"""The dataset page's chart (mean paragraph score and sentence error share per system) printed at one column of a
paper (8.5 cm): text at 7 pt or more, nothing overlapping or leaving the canvas, measured on the drawn figure
(tests/figure_checks.py), for a small dataset and for 20 systems with long names; the bars are the summary's."""

import pytest

from annotation_site.datasets import charts
from tests.figure_checks import assert_legible

LONG = [
    "COOT_100m_finetuned_on_activitynet_captions_v2",
    "Vid2Seq (YT-Temporal-1B pretraining, full)",
    "PDVC_with_a_rather_long_descriptive_name_2023",
    "TimeChat-7B-instruction-tuned",
]


def summary(names):
    return [
        {
            "system": name,
            "captions": 10,
            "mean_score": None if i == 2 else 1 + (i * 7 % 40) / 10,
            "sentence_error_rate": None if i == 3 else (i * 13 % 100) / 100,
        }
        for i, name in enumerate(names)
    ]


CASES = {
    "small": ["COOT", "<i>evil</i>", "MART", "human"],
    "20 long systems": [f"{LONG[i % 4]}_{i}" if i % 3 else f"sys-{i}" for i in range(20)],
    "one system": ["only $x$ & co"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_label_summary_chart_is_legible_at_column_width(case):
    rows = summary(CASES[case])
    figure = charts.label_summary_figure(rows)
    assert_legible(figure, case)
    score, errors = figure.axes
    assert [p.get_width() for p in score.patches] == [r["mean_score"] or 0 for r in rows]
    assert [p.get_width() for p in errors.patches] == [r["sentence_error_rate"] or 0 for r in rows]
    assert [t.get_text() for t in score.texts].count("n/a") == (len(rows) > 2)
