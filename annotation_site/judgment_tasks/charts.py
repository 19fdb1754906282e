"""Charts of a task's report, drawn on the server with matplotlib for one column of a paper in the shared style
of ``annotation_site.figure_style``: 8.5 cm wide, text at 7 pt or more, values written at the bar ends. SVG for the pages (text stays text, same bytes for the same
data) and PNG at 300 dpi for papers.

Charts: ``figure-N`` (the N-th figure of the definition: FIFA Table 2 precision / recall, accuracy, valid ratio
by subset; Table 3 model accuracy by model and subset; VC-Inspector alpha by model version), ``agreement``
(alpha and Fleiss' kappa per question) and ``answers`` (how the answers of each question are spread).
"""

from annotation_site import figure_style as fs
from annotation_site.strict_numbers import ascii_int

COLUMN_INCHES = fs.COLUMN_INCHES
FONT_PT = fs.FONT_PT
PALETTE = ["#2456c8", "#e8590c", "#1c7c45", "#8e44ad", "#b42318", "#5b6573", "#0f9bb4", "#b38b00", "#d6336c", "#222222"]
SCALE = ["#b42318", "#e8590c", "#f0b429", "#7cb342", "#1c7c45"]
NAME_WIDTH_PT = 90  # category names beside the bars
VALUE_PT = fs.MIN_FONT_PT  # values written at the bar ends and inside bars


def render(figure, fmt):
    """The figure's bytes (PNG, 300 dpi) or SVG text. The figure keeps its size: exactly one column wide
    (constrained layout fits the labels inside instead of growing the picture)."""
    return fs.save(figure, "png" if fmt == "png" else "svg")


def grouped_bars(title, categories, series, *, xlabel, xlim=(0, 1), number="{:.2f}"):
    """Horizontal bars: one group per category (top to bottom), one bar per series in it, values at the ends.
    ``series``: [(name, [value or None per category])]; None draws no bar and writes "n/a"."""
    rows = len(categories)
    bars = max(1, len(series))
    height = 0.8 / bars
    names = fs.fit_labels(categories, NAME_WIDTH_PT)
    with fs.style():
        figure = fs.new_figure(1.2 + rows * fs.row_height_inches(fs.label_lines(names)))
        axes = figure.subplots()
        span = xlim[1] - xlim[0]
        for s, (name, values) in enumerate(series):
            positions = [r + (s - (bars - 1) / 2) * height for r in range(rows)]
            drawn = [v if v is not None else 0 for v in values]
            axes.barh(positions, drawn, height=height * 0.9, color=PALETTE[s % len(PALETTE)], label=name)
            for position, value in zip(positions, values):
                text = "n/a" if value is None else number.format(value)
                axes.text(max(value or 0, 0) + span * 0.015, position, text, va="center", fontsize=VALUE_PT)
        axes.set_yticks(range(rows), names)
        axes.set_ylim(rows - 0.5, -0.5)
        axes.set_xlim(xlim[0], xlim[0] + span * 1.2)  # room for the values written at the bar ends
        axes.set_xticks([t for t in axes.get_xticks() if xlim[0] - 1e-9 <= t <= xlim[1] + 1e-9])
        if xlim[0] < 0:
            axes.axvline(0, color="#5b6573", linewidth=0.6)
        axes.set_xlabel(xlabel)
        fs.set_title(figure, title)
        if bars > 1:
            fs.legend_below(figure, *axes.get_legend_handles_labels())
        # each bar tall enough for the value written beside it
        bar_inches = (1.17 * VALUE_PT + 0.5) / 72 / height
        return fs.grow_to_fit(figure, extra={axes: rows * bar_inches})


def figure_chart(figure):
    """The chart of one figure of the report."""
    kind, name = figure["kind"], figure["name"]
    if kind in ("precision_recall", "share"):
        measures = ["precision", "recall"] if kind == "precision_recall" else ["share"]
        groups = [("all items", figure)] + sorted(figure.get("subsets", {}).items())
        label = {"share": name}.get
        series = [(label(m) or m, [values[m] for _, values in groups]) for m in measures]
        return grouped_bars(
            f"{name.capitalize()} (majority of annotators)", [g for g, _ in groups], series, xlabel="share"
        )
    if kind == "model_accuracy":
        models = sorted(figure["models"])
        subsets = sorted({s for values in figure["models"].values() for s in values.get("subsets", {})})
        series = [("all", [figure["models"][m]["accuracy"] for m in models])]
        series += [
            (s, [figure["models"][m].get("subsets", {}).get(s, {}).get("accuracy") for m in models]) for s in subsets
        ]
        return grouped_bars(
            f"{name} against the human majority",
            models or ["(no model answers)"],
            series if models else [("all", [None])],
            xlabel="accuracy",
        )
    if kind == "alpha_by_model":
        groups = list(figure["by_model"].items())
        levels = list(groups[0][1]["alpha"]) if groups else ["nominal"]
        series = [(f"alpha ({lvl})", [values["alpha"].get(lvl) for _, values in groups]) for lvl in levels]
        return grouped_bars(
            f"Krippendorff's alpha, {name}",
            [g if g != "all" else "all versions" for g, _ in groups],
            series,
            xlabel="alpha",
            xlim=(min(0, *[v or 0 for _, vs in series for v in vs]), 1),
        )
    raise ValueError(f"no chart for figure kind {kind!r}")


def agreement_chart(report):
    questions = [q for q in report["questions"] if q["type"] != "text"]
    levels = []
    for question in questions:
        for lvl in question["alpha"]:
            if lvl not in levels:
                levels.append(lvl)
    series = [(f"alpha ({lvl})", [q["alpha"].get(lvl) for q in questions]) for lvl in levels]
    series.append(("Fleiss' kappa", [q.get("fleiss_kappa") for q in questions]))
    values = [v for _, vs in series for v in vs if v is not None]
    return grouped_bars(
        "Agreement per question",
        [q["id"] for q in questions],
        series,
        xlabel="coefficient",
        xlim=(min(0, *values) if values else 0, 1),
    )


def answers_chart(report):
    """Stacked bars: per question, the share of answers taking each value, named inside the bar where the name
    fits at 7 pt."""
    questions = [q for q in report["questions"] if q["type"] != "text" and q.get("distribution")]
    names = fs.fit_labels([q["id"] for q in questions], NAME_WIDTH_PT)
    with fs.style():
        figure = fs.new_figure(1.0 + len(questions) * fs.row_height_inches(fs.label_lines(names)))
        axes = figure.subplots()
        segments = []
        for row, question in enumerate(questions):
            counts = question["distribution"]
            total = sum(counts.values()) or 1
            left = 0.0
            for index, (value, count) in enumerate(counts.items()):
                share = count / total
                colour = (
                    SCALE[round(index * (len(SCALE) - 1) / max(1, len(counts) - 1))]
                    if question["type"] == "likert"
                    else PALETTE[index % len(PALETTE)]
                )
                patch = axes.barh(row, share, left=left, color=colour, edgecolor="white", linewidth=0.5, height=0.7)
                segments.append((row, left, share, _answer_name(value, question["type"]), patch, question["id"]))
                left += share
        axes.set_yticks(range(len(questions)), names)
        axes.set_ylim(len(questions) - 0.5, -0.5)
        axes.set_xlim(0, 1)
        axes.set_xlabel("share of answers")
        fs.set_title(figure, "Answers per question")
        extra = {axes: max(0.45, len(questions) * (1.17 * VALUE_PT + 3) / 72 / 0.7)}
        fs.grow_to_fit(figure, extra=extra)
        width_pt = axes.get_window_extent(figure.canvas.get_renderer()).width / figure.dpi * 72
        unnamed = []
        for row, left, share, name, patch, question in segments:
            room = (share * width_pt - 3) / 1.12  # bold text is about 12 % wider than the measured regular
            if share > 0 and fs.text_width(name, VALUE_PT) <= room:
                axes.text(
                    left + share / 2,
                    row,
                    name,
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=VALUE_PT,
                    fontweight="bold",
                )
            elif share > 0:  # too narrow for its name: named in the legend instead
                label = name if len(questions) == 1 else f"{question}: {name}"
                unnamed.append((patch, fs.fit_label(label, fs.COLUMN_PT / 2, lines=2)))
        if unnamed:
            fs.legend_below(figure, [p for p, _ in unnamed], [label for _, label in unnamed])
            fs.grow_to_fit(figure, extra=extra)  # the axes keep their width: the legend only adds height
        return figure


def _answer_name(value, kind):
    return {"0": "no", "1": "match"}.get(str(value), str(value)) if kind == "pairs" else str(value)


def chart(report, name):
    """A chart by name (``figure-N``, ``agreement``, ``answers``); KeyError when there is none."""
    if name == "agreement":
        return agreement_chart(report)
    if name == "answers":
        return answers_chart(report)
    number = ascii_int(name.removeprefix("figure-")) if name.startswith("figure-") else None
    if number is not None and number < len(report["figures"]) and name == f"figure-{number}":
        return figure_chart(report["figures"][number])
    raise KeyError(name)


def chart_names(report):
    return [f"figure-{i}" for i in range(len(report["figures"]))] + ["agreement", "answers"]
