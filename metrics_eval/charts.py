"""Figures of a report, drawn on the server with matplotlib (no pyplot: each figure is its own object, so
drawing is safe in threads), as PNG, SVG (text kept as text) or PDF, one column of a paper wide in the shared
style of ``annotation_site.figure_style`` (8.5 cm, text at 7 pt or more, heights that grow with the content).

- ``correlations``: one horizontal bar per metric and human level with its confidence interval; the best metric
  of each level is starred. Metrics are rows, so any number of them stays legible.
- ``scatter``: metric score against human score for each metric and level (captions at segment level, systems
  at system level, named where the names fit) with the least-squares line; two panels a row.
- ``ranking``: the systems in the people's order (rows) and each metric's rank of them (columns); a red cell
  marks a system the metric orders against the people with respect to some other system; the last row counts
  the inverted pairs. Metrics that do not fit the column's width continue in a second block below.

Each figure function is pure: a report (``.result``, ``.snapshot``) in, a figure out.
"""

import math

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.patheffects import withStroke
from matplotlib.transforms import Bbox

from annotation_site import figure_style as fs

FIGURES = ("correlations", "scatter", "ranking")
FORMATS = fs.FORMATS
PALETTE = ["#2f5db8", "#c2541b", "#2b8a57", "#8a3fb0", "#b38b00", "#1b8ba8", "#a8324a", "#5c6b7a"]
INCONSISTENT = "#c0392b"
INCONSISTENT_FILL, CONSISTENT_FILL, PEOPLE_FILL = "#f6d3cf", "#eef1f5", "#dbe4f5"
NAME_WIDTH_PT = 92  # metric or system names beside a plot
PANEL_COLUMNS = 2  # scatter panels a row


def _labels(report):
    metrics = report.snapshot.get("metrics", {})
    return {name: metrics.get(name, {}).get("label") or name for name in report.result["metrics"]}


def method_label(report):
    from .correlation import METHODS

    parameters = report.result["parameters"]
    if parameters["method"] == "ranking_accuracy":  # a pairs report (analysis.analyse_pairs)
        return "ranking accuracy, correct caption over foil"
    method = METHODS.get(parameters["method"], parameters["method"])
    if parameters.get("level") == "system":
        return f"{method}, system level"
    grouping = parameters.get("group_by", "none")
    return f"{method}, segment level" + ("" if grouping == "none" else f", grouped by {grouping}")


def correlations(report):
    result, labels = report.result, _labels(report)
    metrics, humans = list(result["metrics"]), result["humans"]
    names = fs.fit_labels([labels[m] for m in metrics], NAME_WIDTH_PT)
    bars = max(1, len(humans))
    with fs.style():
        row = max(fs.row_height_inches(fs.label_lines(names)), bars * 0.09)
        figure = fs.new_figure(1.3 + len(metrics) * row)
        axes = figure.subplots()
        height = 0.8 / bars
        finite, stars = [0.0], []
        for j, human in enumerate(humans):
            ys, values, lows, highs, best = [], [], [], [], []
            for i, metric in enumerate(metrics):
                entry = result["metrics"][metric].get(human) or {}
                value = entry.get("r")
                ci = entry.get("ci") or [None, None]
                ys.append(i + (j - (bars - 1) / 2) * height)
                values.append(np.nan if value is None else value)
                has_ci = value is not None and None not in ci
                lows.append(ci[0] if has_ci else np.nan)  # a bootstrap interval need not contain the estimate
                highs.append(ci[1] if has_ci else np.nan)
                finite += [v for v in (value, *ci) if v is not None and np.isfinite(v)]
                if value is not None and metric in result["best"].get(human, []):
                    ends = [v for v in (value, *ci) if v is not None]
                    best.append((max(ends) if value >= 0 else min(ends), ys[-1]))
            color = PALETTE[j % len(PALETTE)]
            # light bars so the interval drawn over them stays visible in print
            axes.barh(ys, values, height * 0.9, color=color, alpha=0.45, edgecolor=color, linewidth=0.6, label=human)
            axes.hlines(ys, lows, highs, color="#111111", linewidth=0.9)
            axes.scatter(lows + highs, ys + ys, marker="|", s=12, color="#111111", linewidths=0.9, zorder=3)
            stars += best
        low_x, high_x = min(finite), max(finite)
        pad = 0.1 * max(high_x - low_x, 0.1)
        axes.set_xlim(low_x - (pad if low_x < 0 else 0), high_x + pad)
        if stars:  # beside the end of the interval, not on it
            axes.scatter(
                [x + (0.4 if x >= 0 else -0.4) * pad for x, _ in stars],
                [y for _, y in stars],
                marker="*",
                s=30,
                color="#222222",
                zorder=4,
                label="best",
                clip_on=False,
            )
        axes.axvline(0, color="#888888", linewidth=0.6)
        axes.set_yticks(range(len(metrics)), names)
        axes.set_ylim(len(metrics) - 0.5, -0.5)
        axes.set_xlabel(method_label(report).split(",")[0])
        axes.grid(axis="x", color="#e5e7eb", linewidth=0.5)
        ci = round(100 * result["parameters"]["confidence"])
        fs.set_title(figure, f"{method_label(report)}; {ci}% CI; ★ best")
        handles, legend_labels = axes.get_legend_handles_labels()
        if len(humans) > 1 or "best" in legend_labels:
            fs.legend_below(figure, handles, legend_labels)
        return fs.grow_to_fit(figure)


def _fit_line(axes, x, y):
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2 or np.ptp(x[keep]) == 0:
        return
    slope, intercept = np.polyfit(x[keep], y[keep], 1)
    xs = np.array([x[keep].min(), x[keep].max()])
    axes.plot(xs, slope * xs + intercept, color=INCONSISTENT, linewidth=1.0)


def _overlaps(box, boxes):
    return any(box.x0 < other.x1 and other.x0 < box.x1 and box.y0 < other.y1 and other.y0 < box.y1 for other in boxes)


def _name_points(axes, names, x, y):
    """Name each point beside it where the name fits inside the panel without touching another name; returns
    how many points could not be named. Boxes are worked out from the font's measures (a text artist is made
    only for the names that are placed)."""
    figure = axes.figure
    frame = axes.get_window_extent(figure.canvas.get_renderer())
    scale = figure.dpi / 72  # pixels per point
    size = fs.MIN_FONT_PT
    height = 1.17 * size * scale
    radius = math.sqrt(fs.SYSTEM_AREA) / 2 * scale
    centres = [axes.transData.transform((xi, yi)) for xi, yi in zip(x, y) if np.isfinite(xi) and np.isfinite(yi)]
    placed = [Bbox.from_extents(cx - radius, cy - radius, cx + radius, cy + radius) for cx, cy in centres]
    missing = 0
    offsets = [
        ((4, 2.5), "left", "bottom"),
        ((-4, 2.5), "right", "bottom"),
        ((4, -2.5), "left", "top"),
        ((-4, -2.5), "right", "top"),
        ((4.5, 0), "left", "center"),
        ((-4.5, 0), "right", "center"),
        ((0, 4), "center", "bottom"),
        ((0, -4), "center", "top"),
    ]
    for name, xi, yi in sorted(zip(names, x, y), key=lambda item: -item[2]):
        if not (np.isfinite(xi) and np.isfinite(yi)):
            continue
        label = fs.fit_label(name, 60, lines=1, size=size)
        width = fs.text_width(label, size) * scale
        px, py = axes.transData.transform((xi, yi))
        for (dx, dy), ha, va in offsets:
            x0 = px + dx * scale - {"left": 0, "center": width / 2, "right": width}[ha]
            y0 = py + dy * scale - {"bottom": 0, "center": height / 2, "top": height}[va]
            box = Bbox.from_bounds(x0, y0, width, height).padded(0.5 * scale)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not _overlaps(box, placed):
                placed.append(box)
                text = axes.annotate(
                    label,
                    (xi, yi),
                    xytext=(dx, dy),
                    textcoords="offset points",
                    ha=ha,
                    va=va,
                    fontsize=size,
                    annotation_clip=False,
                    path_effects=[withStroke(linewidth=2, foreground="white")],
                )
                text.set_in_layout(False)
                break
        else:
            missing += 1
    return missing


def scatter(report):
    result, labels = report.result, _labels(report)
    metrics, humans = list(result["metrics"]), result["humans"]
    system_level = result["parameters"].get("level") == "system"
    pairs = [(metric, human) for metric in metrics for human in humans]
    columns = min(PANEL_COLUMNS, max(1, len(pairs)))
    rows = max(1, math.ceil(len(pairs) / columns))
    panel_width = (fs.COLUMN_PT - 12) / columns - 30  # the plot of a panel, beside its tick labels
    points = result.get("points") or {}
    systems = result.get("systems") or {}
    with fs.style():
        figure = fs.new_figure(0.5 + rows * 1.6)
        grid = figure.subplots(rows, columns, squeeze=False)
        drawn = []
        for k, axes in enumerate(grid.flat):
            if k >= len(pairs):
                axes.set_visible(False)
                continue
            metric, human = pairs[k]
            if system_level:
                names = sorted(
                    set(systems.get("human", {}).get(human, {})) & set(systems.get("metrics", {}).get(metric, {}))
                )
                x = np.array([systems["human"][human][s] for s in names], dtype=float)
                y = np.array([systems["metrics"][metric][s] for s in names], dtype=float)
                axes.scatter(x, y, s=fs.SYSTEM_AREA, color=PALETTE[0], zorder=3)
                drawn.append((axes, names, x, y))
            else:
                x = np.array(points.get("human", {}).get(human, []), dtype=float)
                y = np.array(points.get("metrics", {}).get(metric, []), dtype=float)
                alpha = max(fs.MIN_ALPHA, min(0.9, 0.9 - 0.35 * math.log10(max(len(x), 1) / 100)))
                axes.scatter(x, y, s=fs.SCATTER_AREA, alpha=alpha, color=PALETTE[0], linewidths=0)
            _fit_line(axes, x, y)
            axes.margins(0.12 if system_level else 0.05)
            entry = result["metrics"][metric].get(human) or {}
            value = entry.get("r")
            r = f"r = {value:.3f}" if value is not None else "r undefined"
            axes.set_title(fs.fit_label(f"{labels[metric]}: {r}", panel_width, lines=2), fontsize=fs.FONT_PT)
            axes.set_xlabel(fs.fit_label(f"human: {human}", panel_width, lines=1))
            axes.set_ylabel("metric score" if k % columns == 0 else "")
            axes.locator_params(nbins=4)
        title = shown = method_label(report)
        fs.set_title(figure, title)
        for _ in range(3):  # the title says how many names were left out; a longer title moves the panels
            for axes, *_ in drawn:
                for text in list(axes.texts):
                    text.remove()
            fs.grow_to_fit(figure, extra={axes: 1.0 for axes in grid.flat if axes.get_visible()})
            missing = sum(_name_points(*panel) for panel in drawn)
            wanted = f"{title} ({missing} system name(s) left out where they would overlap)" if missing else title
            if wanted == shown:
                break
            fs.set_title(figure, wanted)
            shown = wanted
        return figure


def _rank_block(axes, comparison_of, metrics, order, names, labels):
    """One block of the ranking grid: the people's rank and the ranks by ``metrics`` of the systems in
    ``order``, and a last row with each metric's inverted pairs."""
    columns = ["people"] + metrics
    rows = len(order)
    for c, metric in enumerate(columns):
        for r, system in enumerate(order):
            if metric == "people":
                rank, fill, colour = comparison_of[metrics[0]]["human_rank"][system], PEOPLE_FILL, "black"
            else:
                comparison = comparison_of[metric]
                rank = comparison["metric_rank"].get(system)
                bad = system in comparison["inconsistent"]
                fill, colour = (INCONSISTENT_FILL, INCONSISTENT) if bad else (CONSISTENT_FILL, "black")
            axes.add_patch(Rectangle((c - 0.45, r - 0.42), 0.9, 0.84, facecolor=fill, edgecolor="none"))
            axes.text(
                c,
                r,
                "–" if rank is None else str(rank),
                ha="center",
                va="center",
                color=colour,
                fontweight="bold" if colour == INCONSISTENT else "normal",
            )
        if metric != "people":
            axes.text(c, rows + 0.15, str(len(comparison_of[metric]["inverted_pairs"])), ha="center", va="center")
    axes.axhline(rows - 0.5 + 0.1, color="#5b6573", linewidth=0.6)
    axes.set_xlim(-0.5, len(columns) - 0.5)
    axes.set_ylim(rows + 0.65, -0.5)
    axes.set_yticks(list(range(rows)) + [rows + 0.15], names + ["inverted pairs"])
    axes.xaxis.tick_top()
    # headers across the columns when each fits its column on up to three lines, else upright
    widest = max(fs.text_width(line) for name in names + ["inverted pairs"] for line in name.split("\n"))
    cell = (fs.COLUMN_PT - widest - 24) / len(columns) - 3
    across = [fs.fit_label(labels[m], cell, lines=3) for m in metrics]
    if all("…" not in text or "…" in labels[m] for text, m in zip(across, metrics)) and fs.text_width("people") <= cell:
        axes.set_xticks(range(len(columns)), ["people"] + across)
    else:
        axes.set_xticks(
            range(len(columns)), ["people"] + [fs.fit_label(labels[m], 100, lines=1) for m in metrics], rotation=90
        )
    axes.tick_params(length=0)
    for side in ("left", "bottom", "top", "right"):
        axes.spines[side].set_visible(False)


def drawn_level(report, name, human=None):
    """The human level that figure ``name`` of ``report`` draws when ``human`` is asked for: the ranking draws
    one, the level asked for when the report has it, else its first; the other figures draw every level (None).
    What the figure's cache is keyed by, so that a level the report does not have is not a figure of its own."""
    if name != "ranking":
        return None
    humans = report.result["humans"]
    return human if human in humans else humans[0]


def ranking(report, human=None):
    result, labels = report.result, _labels(report)
    human = drawn_level(report, "ranking", human)
    rankings = (result.get("systems") or {}).get("rankings", {}).get(human, {})
    metrics = [m for m in result["metrics"] if m in rankings]
    with fs.style():
        if not metrics:
            figure = fs.new_figure(1.0)
            axes = figure.subplots()
            axes.text(0.5, 0.5, "no system-level data", ha="center", va="center")
            axes.set_axis_off()
            return figure
        order = rankings[metrics[0]]["order"]
        names = fs.fit_labels(order, NAME_WIDTH_PT)
        cell_pt = max(fs.text_width(str(len(order))) + 5, 1.17 * fs.FONT_PT + 4)
        per_block = max(1, int((fs.COLUMN_PT - NAME_WIDTH_PT - 20) // cell_pt) - 1)  # metrics beside "people"
        blocks = [metrics[i : i + per_block] for i in range(0, len(metrics), per_block)]
        rows = len(order) + 1
        block_inches = rows * fs.row_height_inches(fs.label_lines(names)) + 0.9
        figure = fs.new_figure(0.4 + len(blocks) * block_inches)
        grid = figure.subplots(len(blocks), 1, squeeze=False)[:, 0]
        for axes, block in zip(grid, blocks):
            _rank_block(axes, rankings, block, order, names, labels)
        fs.set_title(
            figure,
            f"System ranking by human {human} score (people) and by each metric; red: ordered against the people",
        )
        roomy = rows * fs.row_height_inches(2) / 1.15  # rows no tighter than two-line names need
        return fs.grow_to_fit(figure, extra={axes: roomy for axes in grid})


def figures(report):
    """The figures ``report`` has: a pairs report has its accuracies only (no caption scatter, no system level),
    every other report all of FIGURES."""
    pairs = report.result["parameters"]["method"] == "ranking_accuracy"  # (analysis.analyse_pairs, as method_label)
    return ("correlations",) if pairs else FIGURES


def render(report, name, fmt, human=None):
    """The figure ``name`` of a report as bytes in ``fmt`` (png, svg, pdf)."""
    if name not in figures(report) or fmt not in FORMATS:
        raise ValueError(f"figure must be one of {figures(report)} and format one of {tuple(FORMATS)}")
    if name == "correlations":
        figure = correlations(report)
    elif name == "scatter":
        figure = scatter(report)
    else:
        figure = ranking(report, human)
    content = fs.save(figure, fmt)
    return content.encode() if isinstance(content, str) else content
