"""Charts of a campaign's results, drawn server-side with matplotlib as SVG text for embedding in pages.

Text is kept as SVG text (not paths) and matplotlib escapes it; ``$`` is escaped so system names never turn
into mathtext. Figures are made with ``matplotlib.figure.Figure`` (no pyplot state, safe in threads).
"""
import io
import re

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from .scoring import confidence_interval

GREEN, GREY, DIAGONAL = "#1c7c45", "#eef1f5", "#ffffff"
HUMAN, SYSTEM = "#1c7c45", "#2456c8"
_RC = {"svg.fonttype": "none", "font.size": 10, "font.family": "sans-serif"}


def _label(text, limit=28):
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("$", r"\$")


def _svg(figure):
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # drop the XML declaration and doctype: the SVG goes inside HTML
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 role="img"', text, count=1)


def system_scores_chart(systems, title="Mean z-score per system (95% confidence interval over captions)"):
    """Horizontal points with confidence intervals of every system's mean z, best at the top; the human
    caption set in green."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        n = len(systems)
        figure = Figure(figsize=(6.4, 0.9 + 0.34 * max(n, 1)))
        axes = figure.subplots()
        if n:
            ci = confidence_interval(systems)
            y = np.arange(n)[::-1]
            colours = [HUMAN if human else SYSTEM for human in systems["is_human"]]
            axes.hlines(y, ci["low"], ci["high"], colors=colours, linewidth=2)
            axes.scatter(systems["z"], y, color=colours, zorder=3, s=28)
            axes.set_yticks(y, [_label(s) for s in systems["system"]])
            axes.axvline(0, color="#9aa3af", linewidth=0.8, linestyle="--")
        axes.set_xlabel("mean z-score")
        axes.set_title(title, fontsize=10, loc="left")
        axes.spines[["top", "right"]].set_visible(False)
        axes.grid(axis="x", color="#e5e7eb", linewidth=0.6)
        return _svg(figure)


def win_matrix_chart(p_values, alpha=0.05):
    """The paper's win matrix: a green cell where the row system significantly beats the column system."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        names = list(p_values.index)
        n = len(names)
        size = 1.6 + 0.42 * max(n, 1)
        figure = Figure(figsize=(size + 0.6, size))
        axes = figure.subplots()
        p = p_values.to_numpy(dtype=float) if n else np.zeros((0, 0))
        cells = np.where(np.isnan(p), 2, (p < alpha).astype(int))
        axes.imshow(cells, cmap=ListedColormap([GREY, GREEN, DIAGONAL]), vmin=0, vmax=2)
        for i in range(n):
            for j in range(n):
                if i != j and p[i, j] < alpha:
                    axes.text(j, i, f"{p[i, j]:.0e}".replace("e-0", "e-"), ha="center", va="center", color="white",
                              fontsize=6)
        labels = [_label(name, 20) for name in names]
        axes.set_xticks(range(n), labels, rotation=60, ha="right")
        axes.set_yticks(range(n), labels)
        axes.set_xlabel("column: beaten system")
        axes.set_ylabel("row: winning system")
        axes.set_title(f"Row beats column (one-sided Wilcoxon rank-sum, p < {alpha:g})", fontsize=10, loc="left")
        axes.set_xticks(np.arange(-0.5, n, 1), minor=True)
        axes.set_yticks(np.arange(-0.5, n, 1), minor=True)
        axes.grid(which="minor", color="white", linewidth=1.5)
        axes.tick_params(which="minor", length=0)
        return _svg(figure)
