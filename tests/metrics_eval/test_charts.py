"""The report figures printed at one column of a paper (8.5 cm): text at 7 pt or more, nothing overlapping,
cut or leaving the canvas, visible scatter points, measured on the drawn figures (tests/figure_checks.py).
Reports are made by the real analysis (analysis.analyse / analyse_pairs) from realistic frames and from
stressful ones: 20 systems with long names, many metrics with long labels, three human levels."""

import math
import struct
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metrics_eval import analysis, charts
from tests.figure_checks import assert_legible

LONG = [
    "COOT_100m_finetuned_on_activitynet_captions_v2",
    "Vid2Seq (YT-Temporal-1B pretraining, full)",
    "PDVC_with_a_rather_long_descriptive_name_2023",
    "TimeChat-7B-instruction-tuned",
]
METRIC_LABELS = {
    "bleu4": "BLEU-4",
    "meteor": "METEOR",
    "cider": "CIDEr-D",
    "rouge": "ROUGE-L",
    "emscore": "EMScore (video + reference, F-score)",
    "bertscore": "BERTScore-F1 (roberta-large)",
    "factvc": "FactVC",
    "spice": "SPICE",
    "clipscore": "RefCLIPScore",
    "polos": "Polos",
    "fifa": "FIFA factuality (question answering)",
    "vcinspector": "VC-Inspector-7B",
}


def frame(systems, metrics, humans, videos=60, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s, system in enumerate(systems):
        quality = 1 - s / max(1, len(systems))
        for v in range(videos):
            truth = quality + rng.normal(0, 0.3)
            row = {"video_id": f"v{v:03d}", "system": system}
            for h, human in enumerate(humans):
                row[human] = truth + rng.normal(0, 0.2 + 0.1 * h)
            for m, metric in enumerate(metrics):
                row[metric] = (0.3 + 0.1 * m % 0.5) * truth + rng.normal(0, 0.1 + 0.05 * m)
            rows.append(row)
    return pd.DataFrame(rows)


def report(systems, metrics, humans=("paragraph",), level="segment", method="pearson", videos=60):
    params = analysis.Parameters(method=method, level=level, resamples=10)
    result = analysis.analyse(frame(systems, metrics, list(humans), videos), list(humans), metrics, params)
    snapshot = {"metrics": {m: {"label": METRIC_LABELS.get(m, m)} for m in metrics}}
    return SimpleNamespace(result=result, snapshot=snapshot)


def pairs_report(metrics):
    rng = np.random.default_rng(1)
    rows = {"video_id": [f"v{i // 2:03d}" for i in range(200)]}
    for m, metric in enumerate(metrics):
        correct = rng.normal(0.6, 0.2, 200)
        rows[f"{metric}:correct"], rows[f"{metric}:foil"] = correct, correct - rng.normal(0.1 * m % 0.3, 0.2, 200)
    result = analysis.analyse_pairs(pd.DataFrame(rows), metrics, analysis.Parameters(method="accuracy", resamples=10))
    return SimpleNamespace(result=result, snapshot={"metrics": {m: {"label": METRIC_LABELS[m]} for m in metrics}})


TWENTY = [f"{LONG[i % 4]}_{i}" if i % 3 else f"sys-{i}" for i in range(20)]
FEW_METRICS = ["bleu4", "meteor", "cider", "emscore"]
CASES = {
    "realistic segment": lambda: report(["COOT", "Vid2Seq", "PDVC", "MART", "gt_para"], FEW_METRICS),
    "realistic system": lambda: report(["COOT", "Vid2Seq", "PDVC", "MART", "gt_para"], FEW_METRICS, level="system"),
    "20 long systems, system level": lambda: report(TWENTY, FEW_METRICS[:2], level="system", videos=20),
    "20 long systems, 12 metrics, 3 humans": lambda: report(
        TWENTY,
        list(METRIC_LABELS),
        humans=("paragraph", "sentence", "word"),
        videos=20,
        level="system",
        method="kendall_b",
    ),
    "20 long systems, 6 metrics, 2 humans": lambda: report(
        TWENTY, list(METRIC_LABELS)[:6], humans=("paragraph", "word"), videos=20, level="system"
    ),
    "10,000 captions": lambda: report(["A", "B", "C", "D", "E"], ["bleu4", "cider"], videos=2000),
}
# 36 scatter panels (12 metrics x 3 humans) take a minute to lay out on a loaded machine; the 12 panels of
# "6 metrics, 2 humans" stress the same grid
SLOW = {("scatter", "20 long systems, 12 metrics, 3 humans")}
BUILT = {}


def built(case):
    if case not in BUILT:
        BUILT[case] = CASES[case]()
    return BUILT[case]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("figure", charts.FIGURES)
def test_figures_are_legible_at_column_width(case, figure):
    if (figure, case) in SLOW:
        return
    the_report = built(case)
    drawn = getattr(charts, figure)(the_report)
    assert_legible(drawn, f"{figure}, {case}")


def test_pairs_report_correlations_are_legible():
    assert_legible(charts.correlations(pairs_report(list(METRIC_LABELS))), "pairs")


def test_ranking_shows_every_rank_and_marks_the_inconsistent_systems():
    the_report = built("20 long systems, 12 metrics, 3 humans")
    drawn = charts.ranking(the_report, "sentence")
    rankings = the_report.result["systems"]["rankings"]["sentence"]
    cells = [text for axes in drawn.axes for text in axes.texts]
    red = [t for t in cells if t.get_color() == charts.INCONSISTENT]
    assert len(red) == sum(len(c["inconsistent"]) for c in rankings.values()) > 0
    headers = [t.get_text() for axes in drawn.axes for t in axes.get_xticklabels()]
    assert sum(h != "people" for h in headers) == len(rankings)  # every metric, in as many blocks as needed
    assert len(drawn.axes) == math.ceil(len(rankings) / (headers.index("people", 1) - 1))


def test_system_names_are_shown_where_they_fit():
    drawn = charts.scatter(built("realistic system"))
    named = [t.get_text() for axes in drawn.axes for t in axes.texts]
    assert len(named) == 4 * 5  # four panels of five systems, room for every name


def test_render_keeps_the_column_width_in_every_format():
    the_report = built("realistic segment")
    png = charts.render(the_report, "scatter", "png")
    assert abs(struct.unpack(">I", png[16:20])[0] / 300 * 2.54 - 8.5) < 0.01
    svg = charts.render(the_report, "correlations", "svg")
    assert svg.startswith(b"<?xml") and b'width="240.944882pt"' in svg
    pdf = charts.render(the_report, "ranking", "pdf")
    assert pdf.startswith(b"%PDF") and b"/MediaBox [ 0 0 240.94488" in pdf
