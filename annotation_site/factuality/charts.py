"""Charts of the reports, drawn on the server with matplotlib (no JavaScript, no CDN), one column of a paper
wide in the shared style of ``annotation_site.figure_style`` (8.5 cm, text at 7 pt or more, heights that grow with
the number of systems, long names wrapped and shortened in the middle).

``*_figure`` functions are pure (data in, figure out); ``score_distribution`` and ``error_shares`` return the
figure as SVG text, deterministic (fixed hash salt, no date: the same data gives the same bytes) with text kept as
text, small and readable by screen readers and search.
"""

from matplotlib.colors import LinearSegmentedColormap

from annotation_site import figure_style as fs

# Paragraph scores from 1 (many errors: red) to 5 (none: green); other scales interpolate.
_COLOURS = ["#b42318", "#e8590c", "#f0b429", "#7cb342", "#1c7c45"]
NAME_WIDTH_PT = 95  # system names beside the bars: about 40 % of the column


_SCALE = LinearSegmentedColormap.from_list("factuality", _COLOURS)


def _colour(index, count):
    """The colour of the ``index``-th of ``count`` scale points: every point its own shade."""
    return _SCALE(1.0 if count <= 1 else index / (count - 1))


def _legend_below(figure, axes, title=None):
    fs.legend_below(figure, *axes.get_legend_handles_labels(), title=title)


def score_distribution_figure(systems, scale, *, title="Paragraph scores per system"):
    """Stacked horizontal bars: for each system, the share of judgments at each point of the scale (the scale's
    worst value on the left, in red; the best on the right, in green)."""
    values = [v for v, _ in scale]
    names = fs.fit_labels([row["system"] for row in systems], NAME_WIDTH_PT)
    with fs.style():
        figure = fs.new_figure(1.3 + len(names) * fs.row_height_inches(fs.label_lines(names)))
        axes = figure.subplots()
        rows = range(len(names))
        left = [0.0] * len(names)
        for index, value in enumerate(values):
            shares = []
            for row in systems:
                total = sum(row["counts"].values())
                shares.append(row["counts"].get(value, 0) / total if total else 0)
            axes.barh(
                rows,
                shares,
                left=left,
                height=0.75,
                color=_colour(index, len(values)),
                label=str(value),
                edgecolor="white",
                linewidth=0.5,
            )
            left = [a + b for a, b in zip(left, shares)]
        axes.set_yticks(rows, names)
        axes.set_ylim(len(names) - 0.5, -0.5)
        axes.set_xlim(0, 1)
        axes.set_xlabel("share of judgments")
        fs.set_title(figure, title)
        if values:
            _legend_below(figure, axes, title=f"score ({values[0]} worst, {values[-1]} best)")
        return fs.grow_to_fit(figure)


def error_shares_figure(systems):
    """Grouped horizontal bars: share of sentence judgments flagging an error and of judged words in spans."""
    names = fs.fit_labels([row["system"] for row in systems], NAME_WIDTH_PT)
    with fs.style():
        figure = fs.new_figure(1.3 + len(names) * 1.2 * fs.row_height_inches(fs.label_lines(names)))
        axes = figure.subplots()
        positions = range(len(names))
        sentence = [row.get("sentence_error_share") or 0 for row in systems]
        word = [row.get("word_error_share") or 0 for row in systems]
        axes.barh([p - 0.2 for p in positions], sentence, height=0.38, color="#b42318", label="sentences flagged")
        axes.barh([p + 0.2 for p in positions], word, height=0.38, color="#f2a93b", label="words in error spans")
        axes.set_yticks(list(positions), names)
        axes.set_ylim(len(names) - 0.5, -0.5)
        axes.set_xlim(0, 1)
        axes.set_xlabel("share judged erroneous")
        fs.set_title(figure, "Errors per system")
        _legend_below(figure, axes)
        return fs.grow_to_fit(figure)


def score_distribution(systems, scale, *, title="Paragraph scores per system"):
    return fs.save(score_distribution_figure(systems, scale, title=title), "svg")


def error_shares(systems):
    return fs.save(error_shares_figure(systems), "svg")
