"""One figure style for every chart the platform draws: each is sized for one column of a paper.

A figure is exactly ``COLUMN_CM`` (8.5 cm) wide, its text is ``FONT_PT`` (never below ``MIN_FONT_PT`` = 7 pt at
that size) and it is saved at its own size (no tight bounding box that would change the width): constrained layout
fits titles, labels and legends inside. Long names (systems, metrics, questions: untrusted, any length) are wrapped
at word and ``_-/.`` boundaries onto a few lines and shortened in the middle with "…" beyond that, measured with
the real font, so a label never squeezes the plot away. Heights adapt to the number of labels: ``grow_to_fit``
measures the laid-out figure and makes it taller until every row of tick labels has room.

Charts build their figures with ``new_figure`` (no pyplot state: safe in threads) and turn them into bytes or
SVG text with ``save``. Everything here is pure: data in, figure out.
"""

import functools
import io
import itertools
import math
import re

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

COLUMN_CM = 8.5
COLUMN_INCHES = COLUMN_CM / 2.54
COLUMN_PT = COLUMN_INCHES * 72
MIN_FONT_PT = 7.0
FONT_PT = 7.5  # tick labels, axis labels, legends, annotations
TITLE_PT = 8.0
DPI = 300  # PNG resolution (print quality)
GAP_PT = 2.0  # free space between two rows of labels
SCATTER_AREA = 9.0  # marker area in pt² of a point among many (3 pt across: about 1 mm)
SYSTEM_AREA = 22.0  # marker area of a point that stands for a whole system
MIN_ALPHA = 0.55  # the palest a scatter point may be
FONT_FAMILY = "DejaVu Sans"  # ships with matplotlib: the same metrics on every machine

RC = {
    "font.family": FONT_FAMILY,
    "font.size": FONT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT,
    "figure.titlesize": TITLE_PT,
    "axes.titlelocation": "left",
    "text.parse_math": False,  # names with "$" stay text
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "xtick.major.pad": 2.0,
    "ytick.major.pad": 2.0,
    "axes.labelpad": 2.5,
    "axes.titlepad": 4.0,
    "legend.frameon": False,
    "legend.handlelength": 1.2,
    "legend.handletextpad": 0.4,
    "legend.columnspacing": 1.0,
    "legend.borderaxespad": 0.2,
    "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.w_pad": 0.03,
    "svg.fonttype": "none",
    "svg.hashsalt": "captioneval",
    "pdf.fonttype": 42,
}
FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}

# a line may break after a space or one of these characters (after "." only when no digit follows: 0.05 stays)
_BREAK = re.compile(r"(?<=[\s_\-/:,;)])|(?<=\.)(?!\d)")


def style():
    """The style as a context manager: text artists take their sizes when they are made, so build inside it."""
    return matplotlib.rc_context(RC)


def new_figure(height_inches):
    """An empty figure one column wide with constrained layout; build it inside ``style()``."""
    figure = Figure(figsize=(COLUMN_INCHES, max(0.8, height_inches)), layout="constrained")
    FigureCanvasAgg(figure)  # a renderer to measure text with (and to draw PNGs)
    return figure


@functools.lru_cache(maxsize=4096)
def _advance(character):
    """The advance width of one character at 100 pt (measured once with the real font)."""
    width, _, _ = text_to_path.get_text_width_height_descent(
        character, FontProperties(family=FONT_FAMILY, size=100), ismath=False
    )
    return width


def text_width(text, size=FONT_PT):
    """The width in points of one line of ``text`` in the figure font at ``size``: the characters' advances
    (kerning left out, so 2 % is added: it only ever narrows a line)."""
    return 1.02 * size / 100 * sum(_advance(c) for c in text)


def line_height(size=FONT_PT):
    """The distance in points between two lines of text at ``size`` (matplotlib's default spacing, 1.2)."""
    return 1.2 * size


def _wrap(text, width_pt, size):
    """Greedy wrap at break characters; a piece wider than a line is cut by characters."""
    lines, current = [], ""
    for piece in _BREAK.split(text):
        while piece:
            candidate = current + piece
            if text_width(candidate.rstrip(), size) <= width_pt:
                current, piece = candidate, ""
            elif current:
                lines.append(current.rstrip())
                current = ""
                piece = piece.lstrip()
            else:  # one piece longer than a line: as many characters as fit
                cut = max(
                    1, max(k for k in range(1, len(piece) + 1) if k == 1 or text_width(piece[:k], size) <= width_pt)
                )
                lines.append(piece[:cut])
                piece = piece[cut:]
    if current.strip():
        lines.append(current.rstrip())
    return lines


def fit_label(text, width_pt, lines=2, size=FONT_PT):
    """``text`` on at most ``lines`` lines no wider than ``width_pt`` at ``size``: wrapped where it may break,
    shortened in the middle with "…" (beginning and end kept: versions and variants usually differ there)."""
    text = " ".join(str(text).split()) or "(blank)"
    wrapped = _wrap(text, width_pt, size)
    if len(wrapped) <= lines:
        return "\n".join(wrapped)
    low, high = 1, len(text) - 1  # the number of characters kept around the "…"
    best = "…"
    while low <= high:
        keep = (low + high) // 2
        head = math.ceil(keep * 0.6)
        candidate = (
            text[:head].rstrip() + "…" + text[len(text) - (keep - head) :].lstrip()
            if keep > head
            else text[:head].rstrip() + "…"
        )
        attempt = _wrap(candidate, width_pt, size)
        if len(attempt) <= lines:
            best, low = "\n".join(attempt), keep + 1
        else:
            high = keep - 1
    return best


def fit_labels(texts, width_pt, lines=2, size=FONT_PT):
    """``fit_label`` for each; labels that would come out the same are told apart by their position."""
    fitted = [fit_label(text, width_pt, lines, size) for text in texts]
    seen = {}
    for label in fitted:
        seen[label] = seen.get(label, 0) + 1
    if all(count == 1 for count in seen.values()):
        return fitted
    return [
        fit_label(f"{index}. {text}", width_pt, lines, size) if seen[label] > 1 else label
        for index, (text, label) in enumerate(zip(texts, fitted), start=1)
    ]


def label_lines(labels):
    return max((str(label).count("\n") + 1 for label in labels), default=1)


def row_height_inches(lines=1, size=FONT_PT):
    """The height one row of tick labels of ``lines`` lines needs, with a gap to the next row."""
    return ((lines - 1) * line_height(size) + 1.17 * size + GAP_PT) / 72


def _tick_rows_deficit(axes, renderer):
    """How many inches ``axes`` lacks so that its y tick labels do not touch one another."""
    labels = [label for label in axes.get_yticklabels() if label.get_visible() and label.get_text()]
    locations = sorted(axes.get_yticks())
    if len(labels) < 2 or len(locations) < 2:
        return 0.0
    tallest = max(label.get_window_extent(renderer).height for label in labels) / axes.figure.dpi
    spacing = min(b - a for a, b in itertools.pairwise(locations))
    low, high = sorted(axes.get_ylim())
    needed = (tallest + GAP_PT / 72) * (high - low) / spacing
    have = axes.get_window_extent(renderer).height / axes.figure.dpi
    return max(0.0, needed - have)


def grow_to_fit(figure, axes_list=None, extra=None):
    """Make ``figure`` taller (never wider) until each axes has room for its rows of y tick labels and for
    ``extra`` ({axes: minimum height in inches}). Measured on the laid-out figure, so titles, legends and
    wrapped labels of any size are accounted for."""
    axes_list = list(axes_list if axes_list is not None else figure.axes)
    extra = extra or {}
    for _ in range(4):
        figure.draw_without_rendering()
        renderer = figure.canvas.get_renderer()
        deficit = 0.0
        for axes in axes_list:
            have = axes.get_window_extent(renderer).height / figure.dpi
            deficit = max(deficit, _tick_rows_deficit(axes, renderer), extra.get(axes, 0.0) - have)
        if deficit <= 0.005:
            return figure
        width, height = figure.get_size_inches()
        figure.set_size_inches(width, height + deficit * 1.05 + 0.01)
    figure.draw_without_rendering()
    return figure


def set_title(figure, text, lines=3):
    """The figure's title, left-aligned over the whole column (not just the plot beside the labels), wrapped."""
    margin = 4.0
    figure.suptitle(
        fit_label(text, COLUMN_PT - 2 * margin, lines, TITLE_PT), x=margin / COLUMN_PT, ha="left", fontsize=TITLE_PT
    )


def legend_columns(labels, available_pt, size=FONT_PT):
    """How many legend entries fit side by side in ``available_pt`` (handle, padding and spacing included)."""
    widths = [text_width(str(label).split("\n")[0], size) + size * (1.2 + 0.4 + 1.0) for label in labels]
    for columns in range(len(widths), 0, -1):
        per_column = [max(widths[c::columns]) for c in range(columns)]
        if sum(per_column) <= available_pt:
            return columns
    return 1


def legend_below(figure, handles, labels, title=None):
    """A legend under the plot, as many entries a row as fit the column, read row by row."""
    fit = legend_columns(labels, COLUMN_PT - 12)
    rows = math.ceil(len(labels) / fit) if labels else 1
    columns = math.ceil(len(labels) / rows) if labels else 1
    # matplotlib fills a legend column by column: reorder so the rows read left to right
    order = [r * columns + c for c in range(columns) for r in range(rows) if r * columns + c < len(labels)]
    return figure.legend(
        [handles[i] for i in order], [labels[i] for i in order], title=title, ncols=columns, loc="outside lower center"
    )


def save(figure, fmt, dpi=DPI):
    """The figure at its own size (exactly one column wide): PNG bytes, PDF bytes or SVG text (text kept as
    text; the same data gives the same bytes)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {tuple(FORMATS)}")
    with style():
        if fmt == "svg":
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "CaptionEval"})
        else:
            buffer = io.BytesIO()
            metadata = {"Creator": "CaptionEval"} if fmt == "pdf" else None
            figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()
