"""The chart of a dataset page: per system, the mean paragraph score and the share of sentences with an error
of the selected label set, one column of a paper wide in the shared style (``annotation_site.figure_style``),
embedded in the page as SVG. ``label_summary_figure`` is pure: the rows of ``factuality.labels.system_summary`` in,
a figure out."""

import re

from annotation_site import figure_style as fs

NAME_WIDTH_PT = 80
SCORE, ERRORS = "#2456c8", "#b42318"


def label_summary_figure(summary):
    names = fs.fit_labels([row["system"] for row in summary], NAME_WIDTH_PT)
    rows = range(len(names))
    with fs.style():
        figure = fs.new_figure(1.1 + len(names) * fs.row_height_inches(fs.label_lines(names)))
        score_axes, error_axes = figure.subplots(1, 2, sharey=True)
        panels = (
            (score_axes, "mean_score", 5, SCORE, "mean paragraph\nscore", "{:.1f}"),
            (error_axes, "sentence_error_rate", 1, ERRORS, "sentences with\nan error", "{:.0%}"),
        )
        for axes, key, top, colour, label, number in panels:
            for row, entry in zip(rows, summary):
                value = entry[key]
                bar = axes.barh(row, value or 0, height=0.7, color=colour)
                bar.patches[0].set_gid(f"bar-{key}-{row}")
                text = "n/a" if value is None else number.format(value)
                axes.text((value or 0) + top * 0.03, row, text, va="center", fontsize=fs.MIN_FONT_PT)
            axes.set_xlim(0, top * 1.35)  # room for the values written at the bar ends
            axes.set_xticks(
                [0, top / 2, top] if top == 1 else [0, 1, 2, 3, 4, 5],
                ["0%", "50%", "100%"] if top == 1 else ["0", "1", "2", "3", "4", "5"],
            )
            axes.set_xlabel(label)
        score_axes.set_yticks(list(rows), names)
        score_axes.set_ylim(len(names) - 0.5, -0.5)
        error_axes.tick_params(axis="y", left=False)
        fs.set_title(figure, "Mean paragraph score (1-5) and share of sentences with an error, per system")
        return fs.grow_to_fit(figure)


def label_summary_chart(summary):
    """The chart as SVG for embedding in the page (no XML declaration, scales with the page)."""
    text = fs.save(label_summary_figure(summary), "svg")
    text = text[text.index("<svg") :]
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 role="img"', text, count=1)
