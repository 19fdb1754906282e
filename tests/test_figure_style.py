"""The shared figure style (annotation_site/figure_style.py) and the legibility checker every chart test uses
(tests/figure_checks.py): the checker must catch each defect it is there for, and the label fitting must keep
labels inside their width, on their number of lines, with both ends of a long name."""

import pytest
from matplotlib.figure import Figure

from annotation_site import figure_style as fs
from tests.figure_checks import problems

NAMES = [
    "COOT_100m_finetuned_on_activitynet_captions_v2",
    "Vid2Seq (YT-Temporal-1B pretraining, full)",
    "a" * 120,
    "short",
    "Ünïcödé-système → long name with spaces and / slashes / everywhere",
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("width, lines", [(60, 1), (95, 2), (150, 3)])
def test_fit_label_keeps_width_lines_and_both_ends(name, width, lines):
    label = fs.fit_label(name, width, lines)
    assert label.count("\n") < lines
    assert all(fs.text_width(line) <= width + 0.01 for line in label.split("\n"))
    if "…" in label:
        assert label.replace("\n", "")[0] == name[0] and label.replace("\n", "")[-1] == name[-1]
    else:
        assert "".join(label.split()) == "".join(name.split())  # nothing lost, only line breaks


def test_text_width_agrees_with_matplotlib_layout():
    figure = fs.new_figure(1)
    with fs.style():
        for name in NAMES:
            text = figure.text(0, 0.5, name, fontsize=fs.FONT_PT)
            measured = text.get_window_extent(figure.canvas.get_renderer()).width / figure.dpi * 72
            # never narrower than drawn (labels fit), at most 15 % wider (hinting at screen resolution)
            assert measured <= fs.text_width(name) <= measured * 1.15, name
            text.remove()


def test_fit_labels_tells_apart_names_that_would_shorten_alike():
    names = [f"model-with-a-long-common-prefix-{'x' * 40}-{'y' * 30}-v{i}{'z' * 30}" for i in range(3)]
    labels = fs.fit_labels(names, 60, lines=1)
    assert len(set(labels)) == 3


def test_fitted_numbers_keep_their_decimals_together():
    assert "0.\n05" not in fs.fit_label("Row beats column (one-sided Wilcoxon rank-sum, p < 0.05)", 120, 3)


def test_grow_to_fit_makes_room_for_every_row_of_labels():
    with fs.style():
        figure = fs.new_figure(1.0)
        axes = figure.subplots()
        axes.barh(range(30), range(30))
        axes.set_yticks(range(30), fs.fit_labels([f"{NAMES[i % 2]} {i}" for i in range(30)], 90))
        axes.set_ylim(29.5, -0.5)
    assert problems(figure)  # 30 two-line labels in one inch: they overlap
    fs.grow_to_fit(figure)
    assert not problems(figure) and figure.get_size_inches()[0] == pytest.approx(fs.COLUMN_INCHES)


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")
def test_checker_catches_every_defect():
    wide = Figure(figsize=(6.4, 3))
    wide.subplots().plot([0, 1])
    assert any("wide" in p for p in problems(wide))
    with fs.style():
        tiny = fs.new_figure(2)
        axes = tiny.subplots()
        axes.set_title("small", fontsize=5)
        axes.text(0.5, 0.5, "one label", fontsize=8)
        axes.text(0.52, 0.5, "another label", fontsize=8)
        tiny.text(0.9, 0.5, "a label running off the right edge", fontsize=8)
        axes.scatter([0.2, 0.3], [0.2, 0.3], s=3, alpha=0.3)
    found = " | ".join(problems(tiny))
    for defect in ("'small' is 5.0 pt", "overlaps", "leaves the canvas", "markers of 3.0 pt²", "alpha 0.30"):
        assert defect in found, (defect, found)
