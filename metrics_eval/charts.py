"""Figures of a report, drawn on the server with matplotlib (no pyplot: each figure is its own object, so
drawing is safe in threads), as PNG, SVG (text kept as text) or PDF, sized for a paper column.

- ``correlations``: one bar per metric and human level with its confidence interval; the best metric of each
  level is starred.
- ``scatter``: metric score against human score for each metric and level (captions at segment level, systems
  at system level) with the least-squares line.
- ``ranking``: per metric, the systems' rank by people (left) and by the metric (right); a red line marks a
  system the metric orders against the people with respect to some other system.
"""
import io

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

FIGURES = ("correlations", "scatter", "ranking")
FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
STYLE = {
    "svg.fonttype": "none", "svg.hashsalt": "captioneval", "font.size": 8, "axes.titlesize": 8,
    "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7, "legend.fontsize": 7,
    "axes.spines.top": False, "axes.spines.right": False, "pdf.fonttype": 42,
}
PALETTE = ["#2f5db8", "#c2541b", "#2b8a57", "#8a3fb0", "#b38b00", "#1b8ba8", "#a8324a", "#5c6b7a"]
INCONSISTENT = "#c0392b"


def _short(text, limit=24):
    """Long names (systems, metrics: untrusted, any length) shortened so they cannot squeeze the plot away."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _labels(report):
    metrics = report.snapshot.get("metrics", {})
    return {name: _short(metrics.get(name, {}).get("label") or name) for name in report.result["metrics"]}


def method_label(report):
    from .correlation import METHODS

    parameters = report.result["parameters"]
    method = METHODS.get(parameters["method"], parameters["method"])
    if parameters.get("level") == "system":
        return f"{method}, system level"
    grouping = parameters.get("group_by", "none")
    return f"{method}, segment level" + ("" if grouping == "none" else f", grouped by {grouping}")


def _save(figure, fmt):
    buffer = io.BytesIO()
    metadata = {"Creator": "CaptionEval"} if fmt in ("svg", "pdf") else None
    figure.savefig(buffer, format=fmt, dpi=200, bbox_inches="tight", metadata=metadata)
    return buffer.getvalue()


def correlations(report):
    result, labels = report.result, _labels(report)
    metrics, humans = list(result["metrics"]), result["humans"]
    figure = Figure(figsize=(max(3.4, 1.1 + 0.5 * len(metrics) * len(humans) / 2), 2.6))
    axes = figure.subplots()
    width = 0.8 / max(1, len(metrics))
    for i, metric in enumerate(metrics):
        xs, values, low, high = [], [], [], []
        for j, human in enumerate(humans):
            entry = result["metrics"][metric].get(human) or {}
            value = entry.get("r")
            ci = entry.get("ci") or [None, None]
            xs.append(j - 0.4 + width * (i + 0.5))
            values.append(np.nan if value is None else value)
            low.append(0 if value is None or ci[0] is None else value - ci[0])
            high.append(0 if value is None or ci[1] is None else ci[1] - value)
        color = PALETTE[i % len(PALETTE)]
        axes.bar(xs, values, width * 0.92, color=color, label=labels[metric])
        axes.errorbar(xs, values, yerr=[low, high], fmt="none", ecolor="#333333", elinewidth=0.7, capsize=1.5)
        for x, human, value in zip(xs, humans, values):
            if metric in result["best"].get(human, []) and np.isfinite(value):
                axes.annotate("★", (x, value), xytext=(0, 2 if value >= 0 else -9), textcoords="offset points",
                              ha="center", fontsize=7, color="#222222")
    axes.axhline(0, color="#888888", linewidth=0.6)
    axes.set_xticks(range(len(humans)), humans)
    axes.set_ylabel(method_label(report).split(",")[0])
    ci = round(100 * result["parameters"]["confidence"])
    axes.set_title(f"{method_label(report)}; {ci}% CI; ★ best", loc="left")
    axes.legend(frameon=False, ncols=min(4, len(metrics)), loc="upper left", bbox_to_anchor=(0, -0.12))
    return figure


def _fit_line(axes, x, y):
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2 or np.ptp(x[keep]) == 0:
        return
    slope, intercept = np.polyfit(x[keep], y[keep], 1)
    xs = np.array([x[keep].min(), x[keep].max()])
    axes.plot(xs, slope * xs + intercept, color=INCONSISTENT, linewidth=1.0)


def scatter(report):
    result, labels = report.result, _labels(report)
    metrics, humans = list(result["metrics"]), result["humans"]
    system_level = result["parameters"].get("level") == "system"
    figure = Figure(figsize=(1.9 * len(humans) + 0.4, 1.6 * len(metrics) + 0.4), layout="constrained")
    grid = figure.subplots(len(metrics), len(humans), squeeze=False)
    points = result.get("points") or {}
    systems = result.get("systems") or {}
    for i, metric in enumerate(metrics):
        for j, human in enumerate(humans):
            axes = grid[i][j]
            if system_level:
                names = sorted(set(systems.get("human", {}).get(human, {}))
                               & set(systems.get("metrics", {}).get(metric, {})))
                x = np.array([systems["human"][human][s] for s in names], dtype=float)
                y = np.array([systems["metrics"][metric][s] for s in names], dtype=float)
                axes.scatter(x, y, s=12, color=PALETTE[0])
                for name, xi, yi in zip(names, x, y):
                    axes.annotate(_short(name, 16), (xi, yi), xytext=(2, 2), textcoords="offset points",
                                  fontsize=5.5)
            else:
                x = np.array(points.get("human", {}).get(human, []), dtype=float)
                y = np.array(points.get("metrics", {}).get(metric, []), dtype=float)
                axes.scatter(x, y, s=3, alpha=0.35, color=PALETTE[0], linewidths=0)
            _fit_line(axes, x, y)
            entry = result["metrics"][metric].get(human) or {}
            value = entry.get("r")
            axes.set_title(f"r = {value:.3f}" if value is not None else "r undefined", loc="left", pad=2)
            if i == len(metrics) - 1:
                axes.set_xlabel(f"human: {human}")
            if j == 0:
                axes.set_ylabel(labels[metric])
    figure.suptitle(method_label(report), x=0.02, ha="left", fontsize=8)
    return figure


def ranking(report, human=None):
    result, labels = report.result, _labels(report)
    human = human if human in result["humans"] else result["humans"][0]
    rankings = (result.get("systems") or {}).get("rankings", {}).get(human, {})
    metrics = [m for m in result["metrics"] if m in rankings]
    figure = Figure(figsize=(max(3.0, 1.5 * max(1, len(metrics))), 2.8), layout="constrained")
    grid = figure.subplots(1, max(1, len(metrics)), squeeze=False)[0]
    if not metrics:
        grid[0].text(0.5, 0.5, "no system-level data", ha="center", va="center")
        grid[0].set_axis_off()
        return figure
    for axes, metric in zip(grid, metrics):
        comparison = rankings[metric]
        bad = set(comparison["inconsistent"])
        count = len(comparison["order"])
        for system in comparison["order"]:
            left, right = comparison["human_rank"][system], comparison["metric_rank"][system]
            color = INCONSISTENT if system in bad else "#7a8594"
            axes.plot([0, 1], [left, right], color=color, linewidth=1.4 if system in bad else 0.9, marker="o",
                      markersize=2.5)
            axes.annotate(_short(system, 16), (0, left), xytext=(-3, 0), textcoords="offset points", ha="right",
                          va="center", fontsize=5.5, color=color)
            axes.annotate(_short(system, 16), (1, right), xytext=(3, 0), textcoords="offset points", ha="left",
                          va="center", fontsize=5.5, color=color)
        axes.set_xlim(-0.15, 1.15)
        axes.set_ylim(count + 0.5, 0.5)
        axes.set_xticks([0, 1], ["people", labels[metric]])
        axes.set_yticks([])
        axes.spines[["left", "bottom"]].set_visible(False)
        axes.set_title(f"{len(comparison['inverted_pairs'])} inverted pair(s)", fontsize=7)
    figure.suptitle(f"System ranking by human {human} score vs metric (red: ordered against people)",
                    x=0.02, ha="left", fontsize=8)
    return figure


def render(report, name, fmt, human=None):
    """The figure ``name`` of a report as bytes in ``fmt`` (png, svg, pdf)."""
    if name not in FIGURES or fmt not in FORMATS:
        raise ValueError(f"figure must be one of {FIGURES} and format one of {tuple(FORMATS)}")
    with rc_context(STYLE):
        if name == "correlations":
            figure = correlations(report)
        elif name == "scatter":
            figure = scatter(report)
        else:
            figure = ranking(report, human)
        return _save(figure, fmt)
