"""Charts of the reports, drawn on the server with matplotlib as SVG text (no JavaScript, no CDN).

SVG output is made deterministic (fixed hash salt, no date) so the same data gives the same bytes, and text
stays text (``svg.fonttype = none``) so the charts are small and readable by screen readers and search.
"""
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import rc_context  # noqa: E402

# Paragraph scores from 1 (many errors: red) to 5 (none: green); other scales interpolate.
_COLOURS = ["#b42318", "#e8590c", "#f0b429", "#7cb342", "#1c7c45"]
_RC = {"svg.hashsalt": "captioneval", "svg.fonttype": "none", "font.size": 10, "text.parse_math": False,
       "axes.spines.top": False, "axes.spines.right": False, "font.family": "DejaVu Sans"}


def _colour(index, count):
    if count <= 1:
        return _COLOURS[-1]
    position = index * (len(_COLOURS) - 1) / (count - 1)
    return _COLOURS[round(position)]


def _svg(figure):
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(figure)
    return buffer.getvalue()


def score_distribution(systems, scale, *, title="Paragraph scores per system"):
    """Stacked horizontal bars: for each system, the share of judgments at each point of the scale."""
    values = [v for v, _ in scale]
    names = [row["system"] for row in systems]
    with rc_context(_RC):
        figure, axes = plt.subplots(figsize=(7.5, 0.9 + 0.45 * max(1, len(names))))
        left = [0.0] * len(names)
        for index, value in enumerate(values):
            shares = []
            for row in systems:
                total = sum(row["counts"].values())
                shares.append(row["counts"].get(value, 0) / total if total else 0)
            axes.barh(names, shares, left=left, color=_colour(index, len(values)), label=str(value),
                      edgecolor="white", linewidth=0.5)
            left = [a + b for a, b in zip(left, shares)]
        axes.set_xlim(0, 1)
        axes.set_xlabel("share of judgments")
        axes.invert_yaxis()
        axes.set_title(title, loc="left")
        axes.legend(title="score", ncols=len(values), loc="upper left", bbox_to_anchor=(0, -0.35 if len(names) < 3
                    else -0.15), frameon=False)
        return _svg(figure)


def error_shares(systems):
    """Grouped horizontal bars: share of sentence judgments flagging an error and of judged words in spans."""
    names = [row["system"] for row in systems]
    with rc_context(_RC):
        figure, axes = plt.subplots(figsize=(7.5, 0.9 + 0.55 * max(1, len(names))))
        positions = range(len(names))
        sentence = [row.get("sentence_error_share") or 0 for row in systems]
        word = [row.get("word_error_share") or 0 for row in systems]
        axes.barh([p - 0.2 for p in positions], sentence, height=0.38, color="#b42318", label="sentences")
        axes.barh([p + 0.2 for p in positions], word, height=0.38, color="#e8590c", label="words")
        axes.set_yticks(list(positions), names)
        axes.set_xlim(0, 1)
        axes.set_xlabel("share judged erroneous")
        axes.invert_yaxis()
        axes.set_title("Errors per system", loc="left")
        axes.legend(loc="lower right", frameon=False)
        return _svg(figure)
