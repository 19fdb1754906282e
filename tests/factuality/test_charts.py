"""The factuality report charts printed at one column of a paper (8.5 cm): text at 7 pt or more, nothing
overlapping or leaving the canvas, for a realistic project and for 20 systems with long names and an 11-point
rating scale, measured on the drawn figures (tests/figure_checks.py)."""

import numpy as np
import pytest

from annotation_site.factuality import charts, protocol
from tests.figure_checks import assert_legible

LONG = [
    "COOT_100m_finetuned_on_activitynet_captions_v2",
    "Vid2Seq (YT-Temporal-1B pretraining, full)",
    "PDVC_with_a_rather_long_descriptive_name_2023",
    "TimeChat-7B-instruction-tuned",
]


def distributions(names, scale, seed=0):
    """Rows as agreement.system_distributions gives them."""
    rng = np.random.default_rng(seed)
    rows = []
    for name in names:
        counts = {v: int(c) for v, c in zip(scale, rng.multinomial(60, rng.dirichlet(np.ones(len(scale)))))}
        sentences, words = int(rng.integers(50, 200)), int(rng.integers(400, 2000))
        rows.append(
            {
                "system": name,
                "counts": counts,
                "scores": 60,
                "sentences": sentences,
                "error_sentences": int(sentences * rng.uniform(0.1, 0.9)),
                "words": words,
                "error_words": int(words * rng.uniform(0.02, 0.3)),
            }
        )
        rows[-1]["sentence_error_share"] = rows[-1]["error_sentences"] / sentences
        rows[-1]["word_error_share"] = rows[-1]["error_words"] / words
    return rows


FACTUALITY = sorted(protocol.FACTUALITY_SCALE)
RATING_11 = [(v, f"anchor {v}") for v in range(11)]
CASES = {
    "realistic": (["COOT", "Vid2Seq", "PDVC", "MART", "gt_para"], FACTUALITY),
    "long names": (LONG, FACTUALITY),
    "20 systems": ([f"{LONG[i % 4]}_{i}" if i % 3 else f"sys-{i}" for i in range(20)], FACTUALITY),
    "11-point rating": ([f"{LONG[i % 4]}_{i}" for i in range(8)], RATING_11),
    "one system": (["only $x$ & co"], FACTUALITY),
}


@pytest.mark.parametrize("case", list(CASES))
def test_score_distribution_is_legible_at_column_width(case):
    names, scale = CASES[case]
    figure = charts.score_distribution_figure(distributions(names, [v for v, _ in scale]), scale)
    assert_legible(figure, case)
    renderer = figure.canvas.get_renderer()
    entries = [(t.get_window_extent(renderer), t.get_text()) for t in figure.legends[0].get_texts()]
    reading = sorted(entries, key=lambda e: (-round(e[0].y0), e[0].x0))  # top row first, left to right
    assert [text for _, text in reading] == [str(v) for v, _ in scale]


@pytest.mark.parametrize("case", list(CASES))
def test_error_shares_are_legible_at_column_width(case):
    names, scale = CASES[case]
    figure = charts.error_shares_figure(distributions(names, [v for v, _ in scale]))
    assert_legible(figure, case)
    assert len(figure.axes[0].get_yticklabels()) == len(names)


def test_svg_is_one_column_wide_and_deterministic():
    names, scale = CASES["realistic"]
    rows = distributions(names, [v for v, _ in scale])
    svg = charts.score_distribution(rows, scale)
    assert svg.startswith("<?xml") and 'width="240.944882pt"' in svg
    assert svg == charts.score_distribution(rows, scale)
    assert charts.error_shares(rows) == charts.error_shares(rows)
