"""Charts of a campaign's results, drawn server-side with matplotlib, one column of a paper wide (the shared
style of ``annotation_site.figure_style``: 8.5 cm, text at 7 pt or more, heights that grow with the number of
systems, long names wrapped and shortened in the middle).

``system_scores_figure`` and ``win_matrix_figure`` are pure (data in, figure out); the ``*_chart`` functions
return the figure as SVG text for embedding in pages (text stays text and matplotlib escapes it; math text is off,
so ``$`` in a system name stays a dollar).
"""

import re

import numpy as np
from matplotlib.colors import ListedColormap

from annotation_site import figure_style as fs

from .scoring import confidence_interval

GREEN, GREY, DIAGONAL = "#1c7c45", "#eef1f5", "#ffffff"
HUMAN, SYSTEM = "#1c7c45", "#2456c8"
NAME_WIDTH_PT = 100  # system names beside the plot: about 40 % of the column


def _svg(figure):
    text = fs.save(figure, "svg")
    text = text[text.index("<svg") :]  # drop the XML declaration and doctype: the SVG goes inside HTML
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 role="img"', text, count=1)


def system_scores_figure(systems, title="Mean z-score per system (95% t interval over captions)"):
    """Horizontal points with confidence intervals of every system's mean z, best at the top; the human
    caption set in green."""
    with fs.style():
        n = len(systems)
        figure = fs.new_figure(1.2 + n * fs.row_height_inches())
        axes = figure.subplots()
        single = False  # a system of one caption has no interval: said under the axis
        if n:
            ci = confidence_interval(systems)
            single = bool(ci["low"].isna().any())
            y = np.arange(n)[::-1]
            humans = list(systems["is_human"])
            colours = [HUMAN if human else SYSTEM for human in humans]
            axes.hlines(y, ci["low"], ci["high"], colors=colours, linewidth=1.6)
            axes.scatter(systems["z"], y, color=colours, zorder=3, s=fs.SYSTEM_AREA)
            labels = fs.fit_labels(systems["system"], NAME_WIDTH_PT)
            axes.set_yticks(y, labels)
            for label, human in zip(axes.get_yticklabels(), humans):
                label.set_color(HUMAN if human else "black")
            axes.set_ylim(-0.6, n - 0.4)
            axes.axvline(0, color="#9aa3af", linewidth=0.6, linestyle="--")
        else:
            axes.set_yticks([])
        axes.set_xlabel("mean z-score" + ("\n(no interval: one caption)" if single else ""))
        fs.set_title(figure, title)
        axes.grid(axis="x", color="#e5e7eb", linewidth=0.5)
        return fs.grow_to_fit(figure)


def system_scores_chart(systems, title="Mean z-score per system (95% t interval over captions)"):
    return _svg(system_scores_figure(systems, title))


def _p_text(p):
    return f"{p:.0e}".replace("e-0", "e-")


def win_matrix_figure(p_values, alpha=0.05):
    """The paper's win matrix: a green cell where the row system significantly beats the column system.

    Rows are named ("1. name", in rank order); columns carry the row numbers, which fit at any number of systems
    (staggered on two lines when they would touch). A cell shows its p value when the value fits in it at 7 pt."""
    with fs.style():
        names = list(p_values.index)
        n = len(names)
        figure = fs.new_figure(1.4 + n * fs.row_height_inches())
        axes = figure.subplots()
        p = p_values.to_numpy(dtype=float) if n else np.zeros((0, 0))
        cells = np.where(np.isnan(p), 2, (p < alpha).astype(int))
        axes.imshow(
            cells, cmap=ListedColormap([GREY, GREEN, DIAGONAL]), vmin=0, vmax=2, aspect="auto", interpolation="nearest"
        )
        axes.set_yticks(
            range(n), fs.fit_labels([f"{i}. {name}" for i, name in enumerate(names, start=1)], NAME_WIDTH_PT)
        )
        axes.set_xticks(range(n), [str(i) for i in range(1, n + 1)])
        axes.set_xlabel("beaten system (its row number)")
        fs.set_title(figure, f"Row beats column (one-sided Wilcoxon rank-sum, p < {alpha:g})")
        axes.set_xticks(np.arange(-0.5, n, 1), minor=True)
        axes.set_yticks(np.arange(-0.5, n, 1), minor=True)
        axes.grid(which="minor", color="white", linewidth=1.2)
        axes.tick_params(which="minor", length=0)
        axes.spines[["left", "bottom"]].set_visible(False)
        if not n:
            return fs.grow_to_fit(figure)
        # cells at least as tall as wide (the rows may need more for two-line names)
        figure.draw_without_rendering()
        box = axes.get_window_extent(figure.canvas.get_renderer())
        fs.grow_to_fit(figure, extra={axes: box.width / figure.dpi * 0.85})
        box = axes.get_window_extent(figure.canvas.get_renderer())
        cell_w, cell_h = box.width / figure.dpi * 72 / n, box.height / figure.dpi * 72 / n
        widest = max(fs.text_width(str(i)) for i in range(1, n + 1))
        if widest + fs.GAP_PT > cell_w:  # numbers would touch: every other one a line lower
            for k, tick in enumerate(axes.xaxis.get_major_ticks()):
                if k % 2:
                    tick.set_pad(tick.get_pad() + fs.line_height())
                    tick.tick1line.set_markersize(tick.tick1line.get_markersize() + fs.line_height())
        size = fs.MIN_FONT_PT
        fits = (
            max((fs.text_width(_p_text(v), size) for v in p[p < alpha]), default=0) + 2 <= cell_w
            and 1.17 * size + 1 <= cell_h
        )
        if fits:
            for i in range(n):
                for j in range(n):
                    if i != j and p[i, j] < alpha:
                        axes.text(j, i, _p_text(p[i, j]), ha="center", va="center", color="white", fontsize=size)
        return fs.grow_to_fit(figure)


def win_matrix_chart(p_values, alpha=0.05):
    return _svg(win_matrix_figure(p_values, alpha))
