"""Task definitions: what an item shows and which questions are asked, as validated, normalised JSON.

    {"video": true,                                   # show the item's video
     "fields": [{"name": "caption", "label": "Caption", "optional": false}],      # named texts
     "lists": [{"name": "tuples", "label": "Facts", "marker": "T", "optional": false}],  # numbered T1, T2...
     "questions": [
        {"id": "score", "type": "likert", "prompt": "...", "scale": [[1, "anchor"], ..., [5, "anchor"]]},
        {"id": "valid", "type": "choice", "prompt": "...", "options": [["valid", "Valid"], ["invalid", "Invalid"]],
         "per": "questions", "with": "tuples"},       # one answer per element of a list (shown with its partner)
        {"id": "matches", "type": "pairs", "prompt": "...", "left": "tuples", "right": "questions"},
        {"id": "comment", "type": "text", "prompt": "...", "required": false},
        {"id": "objects", "type": "count", "prompt": "...", "min": 0, "max": 20}],
     "figures": [{"kind": "precision_recall", "question": "matches"}, ...]}

Answers (``answers.py`` checks them) use the same ids: a Likert value or a choice's option value per item, or
a list of them (one per element) for ``per`` questions; matching pairs as ``[[left index, right index], ...]``
(0-based); text; an integer count. ``figures`` name the paper figures a task reports (``reports.py``).
"""

import re

QUESTION_TYPES = ("likert", "choice", "pairs", "text", "count")
FIGURE_KINDS = ("precision_recall", "share", "model_accuracy", "alpha_by_model")
RESERVED = {"item_id", "video_id", "system", "model", "subset", "type", "fields", "lists"}
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MARKER = re.compile(r"^[A-Za-z]{0,3}$")
# Level of measurement of each question type for Krippendorff's alpha (text answers are not compared).
LEVELS = {"likert": "ordinal", "choice": "nominal", "pairs": "nominal", "count": "interval"}
MAX_QUESTIONS = 30


class DefinitionError(Exception):
    """Every problem of a definition, each as ``path: message``."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _text(value, path, problems, *, required=True, limit=2000):
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        problems.append(f"{path}: must be {'a non-empty ' if required else ''}text of at most {limit} characters")
        return ""
    return value.strip()


def _flag(value, path, problems, default):
    if value is None:
        return default
    if not isinstance(value, bool):
        problems.append(f"{path}: must be true or false, not {value!r}")
        return default
    return value


def _int(value, path, problems, default):
    if value is None:
        return default
    if type(value) is not int:
        problems.append(f"{path}: must be a whole number, not {value!r}")
        return default
    return value


def _named(entries, what, problems, taken):
    out = []
    if entries is None:
        return out
    if not isinstance(entries, list):
        problems.append(f"{what}: must be a list")
        return out
    for index, entry in enumerate(entries):
        path = f"{what}[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{path}: must be an object with a name")
            continue
        allowed = {"name", "label", "optional"} | ({"marker"} if what == "lists" else set())
        for extra in sorted(set(entry) - allowed):
            problems.append(f"{path}.{extra}: unknown key")
        name = entry.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            problems.append(
                f"{path}.name: must be lower-case letters, digits and _ (starting with a letter), not {name!r}"
            )
            continue
        if name in RESERVED:
            problems.append(f"{path}.name: {name!r} is reserved (item_id, video_id, system, model, subset)")
            continue
        if name in taken:
            problems.append(f"{path}.name: {name!r} is already the name of a field or list")
            continue
        taken.add(name)
        item = {
            "name": name,
            "label": _text(
                entry.get("label") or name.replace("_", " ").capitalize(), f"{path}.label", problems, limit=200
            ),
            "optional": _flag(entry.get("optional"), f"{path}.optional", problems, False),
        }
        if what == "lists":
            marker = entry.get("marker", "")
            if not isinstance(marker, str) or not MARKER.match(marker):
                problems.append(f"{path}.marker: up to three letters shown before element numbers, not {marker!r}")
                marker = ""
            item["marker"] = marker
        out.append(item)
    return out


_QUESTION_KEYS = {
    "likert": {"scale", "per", "with"},
    "choice": {"options", "per", "with"},
    "pairs": {"left", "right"},
    "text": {"max_length", "rows"},
    "count": {"min", "max", "per", "with"},
}


def _one_of(value, names):
    """Whether ``value`` is one of ``names`` (a list or an object in the definition's place of a name is not: it
    cannot even be looked up in a set, a TypeError that was a 500)."""
    return isinstance(value, str) and value in names


def _question(entry, path, problems, lists):
    if not isinstance(entry, dict):
        problems.append(f"{path}: must be an object")
        return None
    kind = entry.get("type")
    if kind not in QUESTION_TYPES:
        problems.append(f"{path}.type: must be one of {', '.join(QUESTION_TYPES)}, not {kind!r}")
        return None
    for extra in sorted(set(entry) - {"id", "type", "prompt", "help", "required"} - _QUESTION_KEYS[kind]):
        problems.append(f"{path}.{extra}: unknown key for a {kind} question")
    qid = entry.get("id")
    if not isinstance(qid, str) or not NAME.match(qid):
        problems.append(f"{path}.id: must be lower-case letters, digits and _ (starting with a letter), not {qid!r}")
        return None
    question = {
        "id": qid,
        "type": kind,
        "prompt": _text(entry.get("prompt"), f"{path}.prompt", problems, limit=500),
        "help": _text(entry.get("help"), f"{path}.help", problems, required=False),
        "required": _flag(entry.get("required"), f"{path}.required", problems, kind != "text"),
    }
    if "per" in _QUESTION_KEYS[kind]:
        per, partner = entry.get("per"), entry.get("with")
        if per is not None and not _one_of(per, lists):
            problems.append(f"{path}.per: no list named {per!r}")
            per = None
        if partner is not None and (per is None or not _one_of(partner, lists) or partner == per):
            problems.append(f"{path}.with: must name another list shown beside each element of 'per'")
            partner = None
        question["per"], question["with"] = per, partner
    if kind == "likert":
        scale = entry.get("scale")
        if (
            not isinstance(scale, list)
            or not 2 <= len(scale) <= 11
            or not all(isinstance(p, list) and len(p) == 2 and type(p[0]) is int for p in scale)
        ):
            problems.append(f"{path}.scale: must be 2 to 11 points [[value, anchor label], ...]")
        else:
            values = [p[0] for p in scale]
            if values != list(range(values[0], values[0] + len(values))):
                problems.append(f"{path}.scale: values must be consecutive whole numbers in order")
            question["scale"] = [
                [v, _text(label, f"{path}.scale[{i}]", problems, limit=300)] for i, (v, label) in enumerate(scale)
            ]
    elif kind == "choice":
        options = entry.get("options")
        if (
            not isinstance(options, list)
            or not 2 <= len(options) <= 12
            or not all(isinstance(o, list) and len(o) == 2 for o in options)
        ):
            problems.append(f"{path}.options: must be 2 to 12 options [[value, label], ...]")
        else:
            values = [o[0] for o in options]
            if not all(isinstance(v, str) and 0 < len(v) <= 50 and v.strip() == v for v in values):
                problems.append(f"{path}.options: each value must be a short text without surrounding spaces")
            elif len(set(values)) != len(values):
                problems.append(f"{path}.options: values must differ")
            question["options"] = [
                [v, _text(label, f"{path}.options[{i}]", problems, limit=300)] for i, (v, label) in enumerate(options)
            ]
    elif kind == "pairs":
        left, right = entry.get("left"), entry.get("right")
        if not _one_of(left, lists) or not _one_of(right, lists) or left == right:
            problems.append(f"{path}: left and right must name two different lists")
        question["left"], question["right"] = left, right
    elif kind == "text":
        question["max_length"] = _int(entry.get("max_length"), f"{path}.max_length", problems, 2000)
        question["rows"] = _int(entry.get("rows"), f"{path}.rows", problems, 3)
        if not 1 <= question["max_length"] <= 10000 or not 1 <= question["rows"] <= 12:
            problems.append(f"{path}: max_length must be 1-10000 and rows 1-12")
    elif kind == "count":
        question["min"] = _int(entry.get("min"), f"{path}.min", problems, 0)
        question["max"] = _int(entry.get("max"), f"{path}.max", problems, 100)
        if question["max"] <= question["min"]:
            problems.append(f"{path}: max must be greater than min")
    return question


def _figure(entry, path, problems, questions):
    if not isinstance(entry, dict) or entry.get("kind") not in FIGURE_KINDS:
        problems.append(f"{path}.kind: must be one of {', '.join(FIGURE_KINDS)}")
        return None
    kind, qid = entry["kind"], entry.get("question")
    question = questions.get(qid) if isinstance(qid, str) else None
    allowed = {"kind", "question", "name"} | ({"value"} if kind == "share" else set())
    for extra in sorted(set(entry) - allowed):
        problems.append(f"{path}.{extra}: unknown key for a {kind} figure")
    figure = {
        "kind": kind,
        "question": qid,
        "name": _text(entry.get("name") or kind.replace("_", " "), f"{path}.name", problems, limit=100),
    }
    if question is None:
        problems.append(f"{path}.question: no question {qid!r}")
        return None
    needs = {
        "precision_recall": ("pairs",),
        "share": ("choice",),
        "model_accuracy": ("choice", "likert", "count"),
        "alpha_by_model": ("choice", "likert", "count", "pairs"),
    }[kind]
    if question["type"] not in needs:
        problems.append(f"{path}.question: a {kind} figure needs a {' or '.join(needs)} question")
        return None
    if kind == "share":
        values = [o[0] for o in question.get("options", [])]
        if entry.get("value") not in values:
            problems.append(f"{path}.value: must be one of the options {values}")
            return None
        figure["value"] = entry["value"]
    return figure


def normalise(raw):
    """The definition with every default filled in; raises DefinitionError listing every problem."""
    problems = []
    if not isinstance(raw, dict):
        raise DefinitionError(["definition: must be a JSON object"])
    for extra in sorted(set(raw) - {"video", "fields", "lists", "questions", "figures"}):
        problems.append(f"{extra}: unknown key (video, fields, lists, questions, figures)")
    taken = set()
    fields = _named(raw.get("fields"), "fields", problems, taken)
    lists = _named(raw.get("lists"), "lists", problems, taken)
    list_names = {entry["name"] for entry in lists}
    raw_questions = raw.get("questions")
    questions = []
    if not isinstance(raw_questions, list) or not raw_questions:
        problems.append("questions: must list at least one question")
    elif len(raw_questions) > MAX_QUESTIONS:
        problems.append(f"questions: at most {MAX_QUESTIONS}")
    else:
        for index, entry in enumerate(raw_questions):
            question = _question(entry, f"questions[{index}]", problems, list_names)
            if question is None:
                continue
            if any(q["id"] == question["id"] for q in questions):
                problems.append(f"questions[{index}].id: {question['id']!r} is used twice")
                continue
            questions.append(question)
    video = _flag(raw.get("video"), "video", problems, True)
    if not fields and not lists and not video:
        problems.append("definition: an item must show something (the video, a field or a list)")
    by_id = {q["id"]: q for q in questions}
    figures = []
    raw_figures = raw.get("figures") or []
    if not isinstance(raw_figures, list):
        problems.append("figures: must be a list")
        raw_figures = []
    for index, entry in enumerate(raw_figures):
        figure = _figure(entry, f"figures[{index}]", problems, by_id)
        if figure is not None:
            figures.append(figure)
    if problems:
        raise DefinitionError(problems)
    return {"video": video, "fields": fields, "lists": lists, "questions": questions, "figures": figures}


def question(definition, qid):
    return next((q for q in definition["questions"] if q["id"] == qid), None)


def list_spec(definition, name):
    return next((entry for entry in definition["lists"] if entry["name"] == name), None)


def level(question_spec):
    """Krippendorff's level of measurement of a question (None: not compared, free text)."""
    return LEVELS.get(question_spec["type"])


def values_of(question_spec):
    """The ordered possible values of a likert / choice question (None for others)."""
    if question_spec["type"] == "likert":
        return [value for value, _ in question_spec["scale"]]
    if question_spec["type"] == "choice":
        return [value for value, _ in question_spec["options"]]
    if question_spec["type"] == "pairs":
        return [0, 1]
    return None
