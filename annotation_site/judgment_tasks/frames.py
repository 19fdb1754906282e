"""Loaders and flatteners: a task's items, human answers and model answers as pandas DataFrames (one query
each); the statistics (``reports.py``) are pure functions over these frames.

Every non-text question becomes a long frame with one row per (unit, annotator):

- a question per item: unit ``"<item pk>"``, element -1;
- a ``per`` question: unit ``"<item pk>:<element>"``, one row per element answered;
- a matching-pairs question: unit ``"<item pk>:<left>:<right>"`` for every pair of the two lists (their cross
  product), value 1 when the annotator entered the pair and 0 otherwise: one decision per pair, as FIFA's
  kappa over pair decisions counts them.

Values: Likert points and counts as integers, choice options by their value (text), pairs 0/1.
"""

import pandas as pd

from .models import Item, ModelAnswer, Submission

ITEMS = ["item_id", "key", "video_id", "system", "model", "subset"]
LONG = ["unit", "item_id", "element", "left", "right", "annotator", "value"]


def items(task):
    """``(frame, lengths)``: the items (ITEMS columns) and ``{item pk: {list name: length}}``."""
    rows, lengths = [], {}
    for pk, key, video, system, model, subset, lists in (
        Item.objects.filter(task=task)
        .order_by("position", "pk")
        .values_list("pk", "key", "video__external_id", "system", "model", "subset", "lists")
    ):
        rows.append((pk, key, video, system, model, subset))
        lengths[pk] = {name: len(elements) for name, elements in (lists or {}).items()}
    return pd.DataFrame.from_records(rows, columns=ITEMS), lengths


def human_answers(task):
    """``[(item pk, annotator pk, answers)]`` of the current submissions."""
    return list(
        Submission.objects.filter(assignment__task=task, is_current=True)
        .order_by("assignment__item_id", "annotator_id")
        .values_list("assignment__item_id", "annotator_id", "answers")
    )


def model_answers(task):
    """``[(item pk, model name, answers)]``."""
    return list(
        ModelAnswer.objects.filter(task=task).order_by("model", "item_id").values_list("item_id", "model", "answers")
    )


def long_frame(question, rows, lengths):
    """The long frame (LONG columns) of one question over ``rows`` = ``[(item pk, who, answers)]``; ``who``
    is an annotator pk (human answers) or a model name (model answers)."""
    qid, kind = question["id"], question["type"]
    out = []
    if kind == "pairs":
        left_name, right_name = question["left"], question["right"]
        for item_id, who, answers in rows:
            if qid not in answers:
                continue
            chosen = {tuple(pair) for pair in answers[qid] or []}
            left, right = lengths[item_id].get(left_name, 0), lengths[item_id].get(right_name, 0)
            for i in range(left):
                for j in range(right):
                    out.append((f"{item_id}:{i}:{j}", item_id, -1, i, j, who, int((i, j) in chosen)))
    elif question.get("per"):
        for item_id, who, answers in rows:
            for index, value in enumerate(answers.get(qid) or []):
                if value is not None:
                    out.append((f"{item_id}:{index}", item_id, index, -1, -1, who, value))
    else:
        for item_id, who, answers in rows:
            value = answers.get(qid)
            if value is not None:
                out.append((str(item_id), item_id, -1, -1, -1, who, value))
    return pd.DataFrame.from_records(out, columns=LONG)


def texts(question, rows):
    """Free-text answers of one question: ``[(item pk, annotator pk, text)]`` (empty ones left out)."""
    return [
        (item_id, who, answers.get(question["id"])) for item_id, who, answers in rows if answers.get(question["id"])
    ]
