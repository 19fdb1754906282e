"""The campaign charts printed at one column of a paper (8.5 cm): text at 7 pt or more, nothing overlapping or
leaving the canvas, visible points, for a realistic campaign and for 20 systems with long names, measured on the
drawn figures (tests/figure_checks.py)."""

import re

import numpy as np
import pandas as pd
import pytest

from assessment import charts, scoring, significance
from tests.figure_checks import assert_legible

LONG = [
    "COOT_100m_finetuned_on_activitynet_captions_v2",
    "Vid2Seq (YT-Temporal-1B pretraining, full)",
    "PDVC_with_a_rather_long_descriptive_name_2023",
    "TimeChat-7B-instruction-tuned",
    "human",
]


def captions(systems, human="human", videos=40, seed=0):
    """Caption z-scores as scoring.caption_scores gives them: better systems score higher."""
    rng = np.random.default_rng(seed)
    rows = []
    for rank, system in enumerate(systems):
        for v in range(videos):
            z = 0.8 - 0.09 * rank + rng.normal(0, 0.6)
            rows.append((f"v{v:03d}", system, 50 + 20 * z, z, 3, system == human))
    return pd.DataFrame(rows, columns=["video_id", "system", "raw", "z", "n", "is_human"])


def campaign(systems, human="human"):
    frame = captions(systems, human)
    table = scoring.system_scores(frame)
    table["is_human"] = table["system"] == human
    return table, significance.win_matrix(frame, table["system"].tolist())


CASES = {
    "realistic": ["human", "COOT", "Vid2Seq", "PDVC", "MART"],
    "long names": LONG,
    "20 systems": [f"{LONG[i % 4]}_{i}" if i % 3 else f"sys-{i}" for i in range(19)] + ["human"],
    "one system": ["only $x$ & co"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_system_scores_chart_is_legible_at_column_width(case):
    systems, _ = campaign(CASES[case])
    figure = charts.system_scores_figure(systems)
    assert_legible(figure, case)
    labels = [label.get_text() for label in figure.axes[0].get_yticklabels()]
    assert len(labels) == len(systems) and len(set(labels)) == len(labels)


def test_a_system_of_one_caption_is_drawn_without_an_interval_and_said_so():
    frame = captions(["human", "COOT", "Vid2Seq"])
    frame = frame[(frame["system"] != "Vid2Seq") | (frame["video_id"] == "v000")]  # Vid2Seq: one caption
    systems = scoring.system_scores(frame)
    systems["is_human"] = systems["system"] == "human"
    figure = charts.system_scores_figure(systems)
    assert_legible(figure, "one caption")
    assert "no interval: one caption" in figure.axes[0].get_xlabel()
    segments = figure.axes[0].collections[0].get_segments()
    drawn = [bool(segment.size and np.isfinite(segment).all()) for segment in segments]
    assert sorted(drawn) == [False, True, True]


@pytest.mark.parametrize("case", list(CASES))
def test_win_matrix_is_legible_at_column_width(case):
    systems, p_values = campaign(CASES[case])
    figure = charts.win_matrix_figure(p_values, 0.05)
    assert_legible(figure, case)
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == [str(i) for i in range(1, len(systems) + 1)]
    rows = [t.get_text() for t in axes.get_yticklabels()]
    assert [r.split(".")[0] for r in rows] == [str(i) for i in range(1, len(systems) + 1)]


def test_win_matrix_writes_p_values_when_they_fit():
    _, p_values = campaign(CASES["realistic"])
    figure = charts.win_matrix_figure(p_values, 0.05)
    figure.draw_without_rendering()
    cells = [t.get_text() for t in figure.axes[0].texts]
    assert len(cells) == int((p_values.to_numpy() < 0.05).sum()) > 0


def test_charts_embed_as_scalable_svg_one_column_wide():
    systems, p_values = campaign(CASES["realistic"])
    for svg in (charts.system_scores_chart(systems), charts.win_matrix_chart(p_values)):
        assert svg.startswith("<svg") and 'role="img"' in svg
        width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
        assert width / 72 * 2.54 == pytest.approx(8.5, abs=0.01)
