"""The reports of a task, assembled from the frames by pure functions.

Per question (every type but free text):

- the aggregated label of each unit: the majority for choice and matching-pair decisions (a tie, two values
  sharing the top count, gives no label and is recorded); the median for Likert points and counts (an even
  number of answers whose two middle values differ is a tie, recorded; the label is then the lower median by
  default, ``median_ties="upper"`` takes the upper one);
- Krippendorff's alpha at the level of measurement of the type: nominal (choice, pairs), ordinal and interval
  (Likert), interval (count); Fleiss' kappa with the options, scale points or match / no match as categories
  (it needs the same number of answers per unit: the most common number is used and the others are counted
  as left out; a count has no categories: its kappa is None, and ``fleiss_note`` says why). Both from
  ``factuality.statistics``.

Per task, the figures its definition names (FIFA, Jing et al., section 4.4, Tables 2-3; VC-Inspector,
arXiv 2509.16538):

- ``precision_recall`` (Table 2, question quality): over the judged items, a question (right element) is
  matched when the majority matched it to some tuple (left element), a tuple when the majority matched it to
  some question; precision = matched questions / questions, recall = matched tuples / tuples (pooled over
  items, as the paper's overall figures);
- ``share`` (Table 2, conversion accuracy and dependency valid ratio): the share of units whose majority label
  is the given option (tied units are left out and counted);
- ``model_accuracy`` (Table 3): each model's answers against the human majority (gold), per model and subset,
  over the units that have a gold label and an answer of the model (units without one are counted);
- ``alpha_by_model`` (VC-Inspector): alpha of the question over all items and per model version.
"""

import math

import pandas as pd

from annotation_site.factuality import statistics
from annotation_site.workflow import reports as workflow_reports

from . import frames
from .definition import level, values_of

MEDIAN_TIES = ("lower", "upper")
# Question types whose answers have no categories for Fleiss' kappa: its figures are None, and why.
FLEISS_NOT_APPLICABLE = {
    "count": "Fleiss' kappa does not apply to a count: it takes values as unordered categories (3 and 4 would "
    "disagree as much as 0 and 20); the interval alpha measures the agreement on counts",
}


def _numeric(question, frame):
    """The frame with values as numbers for the statistics (choice options by their position)."""
    if question["type"] == "choice":
        index = {value: position for position, value in enumerate(values_of(question))}
        frame = frame.assign(value=frame["value"].map(index))
    return frame


def aggregate(question, frame, *, median_ties="lower"):
    """One row per unit: unit, item_id, element, left, right, answers (count), label, tie, votes ({value: n})."""
    if median_ties not in MEDIAN_TIES:
        raise ValueError(f"median_ties must be one of {MEDIAN_TIES}")
    columns = ["unit", "item_id", "element", "left", "right", "answers", "label", "tie", "votes"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    keys = frame.drop_duplicates("unit").set_index("unit")[["item_id", "element", "left", "right"]]
    counts = frame.groupby(["unit", "value"]).size().unstack(fill_value=0)
    order = values_of(question)
    if order is not None:
        counts = counts.reindex(columns=[v for v in order if v in counts.columns])
    else:
        counts = counts.reindex(columns=sorted(counts.columns))
    answers = counts.sum(axis=1)
    votes = [{k: int(v) for k, v in row.items() if v} for row in counts.to_dict("records")]
    if question["type"] in ("likert", "count"):
        grouped = frame.groupby("unit")["value"]
        lower = grouped.quantile(0.5, interpolation="lower").reindex(counts.index)
        upper = grouped.quantile(0.5, interpolation="higher").reindex(counts.index)
        tie = lower != upper
        label = (lower if median_ties == "lower" else upper).astype(int).astype(object)
    else:
        top = counts.max(axis=1)
        tie = counts.eq(top, axis=0).sum(axis=1) > 1
        label = pd.Series(
            [None if tied else value for value, tied in zip(counts.idxmax(axis=1).tolist(), tie)],
            index=counts.index,
            dtype=object,
        )
    out = keys.loc[counts.index].reset_index()
    out["answers"] = answers.to_numpy()
    out["label"] = pd.Series(label.tolist(), index=out.index, dtype=object)  # None stays None (pandas 3 str)
    out["tie"] = tie.to_numpy()
    out["votes"] = votes
    return out[columns].sort_values(["item_id", "element", "left", "right"], kind="stable").reset_index(drop=True)


def agreement(question, frame, *, min_units=statistics.MIN_UNITS):
    """Alpha (at the question's level; Likert also interval) and Fleiss' kappa of one question's long frame.
    Every question type gets every key: Fleiss' figures are None for a type without categories
    (``FLEISS_NOT_APPLICABLE``), ``fleiss_note`` then saying why (None otherwise)."""
    numeric = _numeric(question, frame)
    numeric = numeric.assign(value=numeric["value"].astype(float)) if not numeric.empty else numeric
    lvl = level(question)
    domain = values_of(question)
    if question["type"] == "choice":
        domain = list(range(len(domain)))
    if domain is None and not numeric.empty:
        domain = sorted(numeric["value"].unique())
    out = {"level": lvl, "alpha": {}, "warnings": []}
    levels = [lvl, "interval"] if question["type"] == "likert" else [lvl]
    result = None
    for name in levels:
        result = statistics.krippendorff_alpha(numeric, level=name, value_domain=domain, min_units=min_units)
        out["alpha"][name] = result.alpha
    out.update(units=result.units, annotators=result.annotators, values=result.values)
    out["warnings"] += result.warnings
    out.update(fleiss_kappa=None, fleiss_units=None, fleiss_raters=None, fleiss_dropped=None, fleiss_note=None)
    if question["type"] in FLEISS_NOT_APPLICABLE:
        out["fleiss_note"] = FLEISS_NOT_APPLICABLE[question["type"]]
        return out
    fleiss = statistics.fleiss_from_frame(numeric, categories=domain)
    out.update(
        fleiss_kappa=fleiss.kappa,
        fleiss_units=fleiss.units,
        fleiss_raters=fleiss.raters,
        fleiss_dropped=fleiss.dropped,
    )
    if fleiss.dropped:
        out["warnings"].append(
            f"Fleiss' kappa uses the {fleiss.units} units with {fleiss.raters} answers; "
            f"{fleiss.dropped} with another number of answers were left out"
        )
    return out


def _ratio(numerator, denominator):
    return numerator / denominator if denominator else None


def precision_recall(question, labels, lengths, item_frame, judged):
    """FIFA Table 2 question quality over the judged items (``judged``: item pks with an answer)."""

    def figures(item_ids):
        ids = set(item_ids) & judged
        matched = labels[(labels["label"] == 1) & labels["item_id"].isin(ids)]
        questions = sum(lengths[i].get(question["right"], 0) for i in ids)
        tuples = sum(lengths[i].get(question["left"], 0) for i in ids)
        matched_questions = int(matched.drop_duplicates(["item_id", "right"]).shape[0])
        matched_tuples = int(matched.drop_duplicates(["item_id", "left"]).shape[0])
        ties = int(labels[labels["item_id"].isin(ids)]["tie"].sum())
        return {
            "items": len(ids),
            "questions": questions,
            "matched_questions": matched_questions,
            "precision": _ratio(matched_questions, questions),
            "tuples": tuples,
            "matched_tuples": matched_tuples,
            "recall": _ratio(matched_tuples, tuples),
            "tied_pairs": ties,
        }

    return _with_subsets(figures, item_frame)


def share(labels, value, item_frame):
    """Share of units whose majority label is ``value`` (ties left out and counted)."""

    def figures(item_ids):
        rows = labels[labels["item_id"].isin(set(item_ids))]
        decided = rows[~rows["tie"].astype(bool)]
        hits = int((decided["label"] == value).sum())
        return {
            "units": int(len(decided)),
            "matching": hits,
            "share": _ratio(hits, len(decided)),
            "tied": int(len(rows) - len(decided)),
        }

    return _with_subsets(figures, item_frame)


def _with_subsets(figures, item_frame):
    out = figures(item_frame["item_id"].tolist())
    subsets = [s for s in item_frame["subset"].drop_duplicates().tolist() if s]
    if subsets:
        out["subsets"] = {s: figures(item_frame.loc[item_frame["subset"] == s, "item_id"].tolist()) for s in subsets}
    return out


def model_accuracy(labels, model_frame, item_frame):
    """Per model: accuracy of its answers against the gold (human majority) labels, overall and per subset."""
    gold = labels[~labels["tie"].astype(bool) & labels["label"].notna()][["unit", "item_id", "label"]]
    subset_of = dict(zip(item_frame["item_id"], item_frame["subset"]))
    out = {}
    for model, answers in model_frame.groupby("annotator", sort=True):
        merged = gold.merge(answers[["unit", "value"]], on="unit", how="left")
        merged["subset"] = merged["item_id"].map(subset_of)

        def figures(rows):
            answered = rows[rows["value"].notna()]
            correct = int((answered["value"] == answered["label"]).sum())
            return {
                "units": int(len(answered)),
                "correct": correct,
                "accuracy": _ratio(correct, len(answered)),
                "missing": int(len(rows) - len(answered)),
            }

        entry = figures(merged)
        subsets = [s for s in merged["subset"].drop_duplicates().tolist() if s]
        if subsets:
            entry["subsets"] = {s: figures(merged[merged["subset"] == s]) for s in sorted(subsets)}
        out[str(model)] = entry
    return {"gold_units": int(len(gold)), "tied_units": int(labels["tie"].astype(bool).sum()), "models": out}


def alpha_by_model(question, frame, item_frame, *, min_units=statistics.MIN_UNITS):
    """Alpha of a question over every item and per model version (items' ``model``)."""
    model_of = dict(zip(item_frame["item_id"], item_frame["model"]))
    out = {"all": agreement(question, frame, min_units=min_units)}
    models = sorted({m for m in item_frame["model"].tolist() if m})
    for model in models:
        subset = frame[frame["item_id"].map(model_of) == model]
        out[model] = agreement(question, subset, min_units=min_units)
    return out


def build(
    definition, item_frame, lengths, human_rows, model_rows, *, median_ties="lower", min_units=statistics.MIN_UNITS
):
    """The whole report (plain values) and the aggregated labels per question (DataFrames)."""
    judged = {item_id for item_id, _, _ in human_rows}
    report = {
        "parameters": {"median_ties": median_ties, "min_units": min_units},
        "items": int(len(item_frame)),
        "judged_items": len(judged),
        "annotators": len({who for _, who, _ in human_rows}),
        "answers": len(human_rows),
        "models": sorted({model for _, model, _ in model_rows}),
        "questions": [],
        "figures": [],
    }
    labels, long_frames = {}, {}
    for question in definition["questions"]:
        if question["type"] == "text":
            report["questions"].append(
                {
                    "id": question["id"],
                    "type": "text",
                    "prompt": question["prompt"],
                    "answered": len(frames.texts(question, human_rows)),
                }
            )
            continue
        frame = frames.long_frame(question, human_rows, lengths)
        long_frames[question["id"]] = frame
        aggregated = aggregate(question, frame, median_ties=median_ties)
        labels[question["id"]] = aggregated
        entry = {
            "id": question["id"],
            "type": question["type"],
            "prompt": question["prompt"],
            "per": question.get("per"),
            **agreement(question, frame, min_units=min_units),
            "labelled_units": int(aggregated["label"].notna().sum()),
            "ties": int(aggregated["tie"].sum()),
            "distribution": _distribution(question, frame),
        }
        if entry["ties"]:
            entry["warnings"].append(
                f"{entry['ties']} units are tied "
                + (
                    "(no majority: no label)"
                    if question["type"] in ("choice", "pairs")
                    else f"(even answers: the {median_ties} median is used)"
                )
            )
        report["questions"].append(entry)
    for figure in definition["figures"]:
        question = next(q for q in definition["questions"] if q["id"] == figure["question"])
        entry = dict(figure)
        if figure["kind"] == "precision_recall":
            entry.update(precision_recall(question, labels[question["id"]], lengths, item_frame, judged))
        elif figure["kind"] == "share":
            entry.update(share(labels[question["id"]], figure["value"], item_frame))
        elif figure["kind"] == "model_accuracy":
            entry.update(
                model_accuracy(labels[question["id"]], frames.long_frame(question, model_rows, lengths), item_frame)
            )
            if not model_rows:
                entry["warnings"] = ["no model answers imported yet"]
        elif figure["kind"] == "alpha_by_model":
            entry["by_model"] = alpha_by_model(question, long_frames[question["id"]], item_frame, min_units=min_units)
        report["figures"].append(entry)
    return report, labels


def _distribution(question, frame):
    """How many answers took each value (in the question's order)."""
    if frame.empty:
        return {}
    counts = frame["value"].value_counts()
    order = values_of(question) or sorted(counts.index)
    return {str(value): int(counts.get(value, 0)) for value in order}


def task_report(task, **parameters):
    """Load a task's frames (three queries) and build its report and labels."""
    item_frame, lengths = frames.items(task)
    report, labels = build(
        task.definition, item_frame, lengths, frames.human_answers(task), frames.model_answers(task), **parameters
    )
    report = {"task": task.name, "preset": task.preset, "status": task.status, **report}
    return report, labels, item_frame


LABEL_COLUMNS = [
    "question",
    "item_id",
    "video_id",
    "system",
    "model",
    "subset",
    "element",
    "left",
    "right",
    "answers",
    "label",
    "tie",
    "votes",
]


def label_rows(definition, labels, item_frame):
    """The aggregated labels of every question as plain rows (LABEL_COLUMNS), 1-based element numbers."""
    info = item_frame.set_index("item_id")
    rows = []
    for question in definition["questions"]:
        frame = labels.get(question["id"])
        if frame is None:
            continue
        for unit in frame.itertuples(index=False):
            item = info.loc[unit.item_id]
            rows.append(
                {
                    "question": question["id"],
                    "item_id": item["key"],
                    "video_id": item["video_id"],
                    "system": item["system"],
                    "model": item["model"],
                    "subset": item["subset"],
                    "element": unit.element + 1 if unit.element >= 0 else None,
                    "left": unit.left + 1 if unit.left >= 0 else None,
                    "right": unit.right + 1 if unit.right >= 0 else None,
                    "answers": int(unit.answers),
                    "label": _plain(unit.label),
                    "tie": bool(unit.tie),
                    "votes": {str(k): v for k, v in unit.votes.items()},
                }
            )
    return rows


def _plain(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def jsonable(value):
    """numpy numbers made plain, NaN made null, keys made strings (for JSON)."""
    return workflow_reports.jsonable(value, nan_to_null=True)
