"""Legibility of a figure printed at one column of a paper, measured on the drawn figure itself.

``problems(figure)`` draws the figure with matplotlib's renderer, records every text actually drawn (tick labels,
axis labels, titles, legend entries, annotations, values in cells) and its real bounding box, and lists what would
make the printed figure hard to read: a width other than 8.5 cm, text under 7 pt, text outside the canvas or cut
by its clip box, two texts overlapping, axes squeezed to nothing, scatter points too small or too pale.
"""

from unittest import mock

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.text import Text

COLUMN_CM = 8.5
MIN_PT = 7.0
MIN_MARKER_AREA = 6.0  # pt²: about 2.8 pt across
MIN_ALPHA = 0.5
MIN_AXES_INCHES = 0.35
TOLERANCE_PT = 0.3  # texts may touch; they may not overlap by more than this


def drawn_texts(figure):
    """Every non-empty text drawn by ``figure`` with its window extent, in drawing order."""
    if not hasattr(figure.canvas, "get_renderer"):  # a bare Figure(): give it the Agg renderer
        FigureCanvasAgg(figure)
    drawn = []
    original = Text.draw

    def recording(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))

    with mock.patch.object(Text, "draw", recording):
        figure.canvas.draw()
    return drawn


def _overlap(a, b, tolerance):
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)


def problems(figure):
    out = []
    width_cm = figure.get_size_inches()[0] * 2.54
    if abs(width_cm - COLUMN_CM) > 0.001:
        out.append(f"figure is {width_cm:.2f} cm wide, not {COLUMN_CM}")
    texts = drawn_texts(figure)
    if not texts:
        out.append("no text drawn")
    scale = figure.dpi / 72  # window pixels per point
    tolerance = TOLERANCE_PT * scale
    canvas = figure.bbox
    for text, box in texts:
        name = repr(text.get_text()[:40])
        if text.get_fontsize() < MIN_PT:
            out.append(f"{name} is {text.get_fontsize():.1f} pt")
        if (
            box.x0 < canvas.x0 - tolerance
            or box.y0 < canvas.y0 - tolerance
            or box.x1 > canvas.x1 + tolerance
            or box.y1 > canvas.y1 + tolerance
        ):
            out.append(f"{name} leaves the canvas: {box.extents.round(1)} vs {canvas.extents.round(1)}")
        clip = text.get_clip_box() if text.get_clip_on() else None
        if clip is not None and (
            box.x0 < clip.x0 - tolerance
            or box.x1 > clip.x1 + tolerance
            or box.y0 < clip.y0 - tolerance
            or box.y1 > clip.y1 + tolerance
        ):
            out.append(f"{name} is cut by its clip box")
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            if _overlap(box_a, box_b, tolerance):
                out.append(f"{a.get_text()[:30]!r} overlaps {b.get_text()[:30]!r}")
    for axes in figure.axes:
        if not axes.get_visible() or not axes.axison:
            continue
        box = axes.get_window_extent()
        if box.width < MIN_AXES_INCHES * figure.dpi or box.height < MIN_AXES_INCHES * figure.dpi:
            out.append(f"axes squeezed to {box.width / figure.dpi:.2f} x {box.height / figure.dpi:.2f} in")
        for collection in axes.collections:
            if not isinstance(collection, PathCollection) or not len(collection.get_offsets()):
                continue
            sizes = collection.get_sizes()
            if len(sizes) and sizes.min() < MIN_MARKER_AREA:
                out.append(f"scatter markers of {sizes.min():.1f} pt²")
            alphas = [collection.get_alpha() if collection.get_alpha() is not None else 1.0]
            colours = collection.get_facecolors()
            if len(colours):
                alphas.append(float(np.min(colours[:, 3])))
            if min(alphas) < MIN_ALPHA:
                out.append(f"scatter markers with alpha {min(alphas):.2f}")
    return out


def assert_legible(figure, what=""):
    found = problems(figure)
    assert not found, f"{what}: " + "; ".join(found[:12]) + (f" (+{len(found) - 12} more)" if len(found) > 12 else "")
