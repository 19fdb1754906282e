"""JSONL imports of a task: its items, and the answers of models. Each file is validated whole first (every
problem names file, line and field; nothing is written while any remains), then written in one transaction.

Items, one per line::

    {"item_id": "v1-a", "video_id": "v1", "system": "CogVideoX", "model": "", "subset": "T2V",
     "<field name>": "text", "<list name>": ["element", ...]}

``video_id`` names a video of the task's dataset; ``item_id`` is optional (default: the video id, then
``:system`` and ``:model`` when given) and must be unique in the task; ``system``, ``model`` and ``subset`` are
optional and never shown to annotators. Every field and list of the definition is required unless marked
optional; lists shown side by side (a question's ``per`` and ``with``) must have the same length.

Model answers, one per item and model::

    {"item_id": "v1-a", "model": "Video-LLaVA", "answers": {"answer": ["yes", "no", "yes"]}}

``answers`` has the shape of a human answer (``answers.py``) for the questions the model answers (no free
text, nothing left empty). Importing answers of a model for an item again replaces them, so importing the same
file twice leaves the same rows.
"""

from django.db import transaction

from annotation_site import safe_json
from annotation_site.db_statistics import refresh_after_bulk_load
from annotation_site.problems import FormatError, ProblemList

from .answers import check_answer
from .models import Assignment, Item, ModelAnswer, Task

ITEM_KEYS = {"item_id", "video_id", "system", "model", "subset"}
MAX_ELEMENTS = 500
MAX_TEXT = 5000


class WorkStarted(Exception):
    """Replacing items is refused once items were handed out."""


def default_key(video_id, system="", model=""):
    return ":".join(part for part in (video_id, system, model) if part)


def _lines(text, filename, problems):
    return safe_json.object_lines(text, lambda line, message: problems.add(filename, message, line=line))


def _column(field):
    """How many characters the Item column ``field`` holds: a longer value was a database error on PostgreSQL."""
    return Item._meta.get_field(field).max_length


def _label(obj, key, number, filename, problems, *, required=False, limit=200):
    value = obj.get(key)
    if value is None or value == "":
        if required:
            problems.add(filename, f"{key} is required", line=number, where=key)
        return ""
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        problems.add(
            filename,
            f"{key} must be a non-empty text of at most {limit} characters, not {value!r}",
            line=number,
            where=key,
        )
        return None
    return value.strip()


def _item_key(key, video_id, system, model, number, filename, problems, seen, existing_keys):
    """The item id of a line (its ``item_id`` or the default), checked: not too long, unique in the file
    (``seen``: id -> line, filled here) and new to the task (``existing_keys``)."""
    if not key and len(default_key(video_id, system, model)) > _column("key"):
        problems.add(
            filename,
            f"without item_id the item's id is video_id:system:model, {len(default_key(video_id, system, model))} "
            f"characters; at most {_column('key')} are allowed: give the item an item_id",
            line=number,
            where="item_id",
        )
        return key
    key = key or default_key(video_id, system, model)
    if key in seen:
        problems.add(filename, f"item {key!r} is already given on line {seen[key]}", line=number, where="item_id")
    elif key in existing_keys:
        problems.add(filename, f"the task already has an item {key!r}", line=number, where="item_id")
    else:
        seen[key] = number
    return key


def _fields(obj, fields, number, filename, problems):
    """The line's fields ({name: text}), every problem of each added."""
    values = {}
    for name, spec in fields.items():
        value = obj.get(name)
        if value is None or value == "":
            if not spec["optional"]:
                problems.add(filename, "this field is required (a non-empty text)", line=number, where=name)
            continue
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            problems.add(
                filename,
                f"must be a text of at most {MAX_TEXT} characters, not {value!r:.80}",
                line=number,
                where=name,
            )
            continue
        values[name] = value.strip()
    return values


def _lists(obj, lists, aligned, number, filename, problems):
    """The line's lists ({name: [text, ...]}), every problem of each added; lists shown side by side
    (``aligned``) must have the same length, checked whenever both lengths are known (each a list, or an
    optional list left out), whatever else is wrong with their elements or the line."""
    elements, lengths = {}, {}
    for name, spec in lists.items():
        value = obj.get(name)
        if value is None or value == []:
            if spec["optional"]:
                lengths[name] = 0
            else:
                problems.add(filename, "this list is required (a non-empty list of texts)", line=number, where=name)
            elements[name] = []
            continue
        if not isinstance(value, list) or len(value) > MAX_ELEMENTS:
            problems.add(filename, f"must be a list of at most {MAX_ELEMENTS} texts", line=number, where=name)
            continue
        lengths[name] = len(value)
        bad = next(
            (
                i
                for i, element in enumerate(value)
                if not isinstance(element, str) or not element.strip() or len(element) > MAX_TEXT
            ),
            None,
        )
        if bad is not None:
            problems.add(
                filename,
                f"must be a non-empty text of at most {MAX_TEXT} characters, not {value[bad]!r:.80}",
                line=number,
                where=f"{name}[{bad}]",
            )
            continue
        elements[name] = [element.strip() for element in value]
    for per, partner in aligned:
        if per in lengths and partner in lengths and lengths[per] != lengths[partner]:
            problems.add(
                filename,
                f"{per} and {partner} are shown side by side and need the same length "
                f"({lengths[per]} and {lengths[partner]})",
                line=number,
                where=partner,
            )
    return elements


def read_items(task, text, *, filename="items.jsonl", existing_keys=()):
    """Validate an items file against the task; returns a list of dicts ready for Item rows (video given by
    external id). Raises FormatError listing every problem: every check of a line runs whatever else is wrong
    with it (its id, its labels, its fields, its lists), and a line is an item when it added no problem."""
    definition = task.definition
    problems = ProblemList()
    fields = {entry["name"]: entry for entry in definition["fields"]}
    lists = {entry["name"]: entry for entry in definition["lists"]}
    # each pair of lists shown side by side once, however many questions show it
    aligned = list(dict.fromkeys((q["per"], q["with"]) for q in definition["questions"] if q.get("with")))
    allowed = ITEM_KEYS | set(fields) | set(lists)
    seen, items, named = {}, [], []  # named: (line, video_id) of every line whose video_id could be read
    for number, obj in _lines(text, filename, problems):
        before = len(problems)
        for extra in sorted(set(obj) - allowed):
            problems.add(
                filename,
                f"unknown field (the definition has {', '.join(sorted(set(fields) | set(lists))) or 'no fields'})",
                line=number,
                where=extra,
            )
        video_id = _label(obj, "video_id", number, filename, problems, required=True)
        if video_id:
            named.append((number, video_id))
        system, model, subset = (
            _label(obj, key, number, filename, problems, limit=_column(key)) for key in ("system", "model", "subset")
        )
        key = _label(obj, "item_id", number, filename, problems, limit=_column("key"))
        if None not in (video_id, system, model, subset, key) and video_id:
            key = _item_key(key, video_id, system, model, number, filename, problems, seen, existing_keys)
        values = _fields(obj, fields, number, filename, problems)
        elements = _lists(obj, lists, aligned, number, filename, problems)
        if len(problems) == before:
            items.append(
                {
                    "key": key,
                    "video_id": video_id,
                    "system": system,
                    "model": model,
                    "subset": subset,
                    "fields": values,
                    "lists": elements,
                    "line": number,
                }
            )
    if not problems and not items:
        problems.add(filename, "the file holds no items")
    # every line's video, whatever else is wrong with the line (an unknown video was told only once the file's
    # other problems were mended); one query, the problems then in line order
    videos = _videos(task, {video_id for _, video_id in named})
    for number, video_id in named:
        if video_id not in videos:
            problems.add(
                filename, f"dataset {task.dataset.name} has no video {video_id!r}", line=number, where="video_id"
            )
    problems.sort(key=lambda problem: problem.line or 0)  # (stable: a line's own problems keep their order)
    problems.raise_if_any()
    return items


def _videos(task, ids):
    from annotation_site.corpus.models import Video

    return dict(Video.objects.filter(dataset_id=task.dataset_id, external_id__in=ids).values_list("external_id", "pk"))


def import_items(task, text, *, filename="items.jsonl", replace=False):
    """Validate and add the items of a JSONL file (``replace``: drop the task's items first, allowed until work
    starts). Returns counts. A fixed number of queries whatever the file's size (bulk inserts aside)."""
    if replace and Assignment.objects.filter(task=task).exists():
        raise WorkStarted(f"items of task {task.name} were already handed out: they can no longer be replaced")
    existing = () if replace else set(Item.objects.filter(task=task).values_list("key", flat=True))
    items = read_items(task, text, filename=filename, existing_keys=existing)
    videos = _videos(task, {item["video_id"] for item in items})
    with transaction.atomic():
        # the overlap the new items copy, read under the task's row lock: a change of it (``update_task``, which
        # holds that lock) made while the file was read waits, or is seen (annotation_site/workflow/capacity.py)
        overlap = (
            Task.objects.select_for_update().filter(pk=task.pk).values_list("annotators_per_item", flat=True).get()
        )
        if replace:
            # checked again under the items' row locks: the check above ran before the file was read, and a
            # hand-out (which locks the item it takes, not the task) may have handed one out since; an item
            # being handed out now is waited for, then seen. Deleting items takes their assignments and answers.
            list(Item.objects.select_for_update().filter(task=task).order_by("pk").values_list("pk", flat=True))
            if Assignment.objects.filter(task=task).exists():
                raise WorkStarted(
                    f"items of task {task.name} were handed out meanwhile: they can no longer be replaced"
                )
            ModelAnswer.objects.filter(task=task).delete()
            Item.objects.filter(task=task).delete()
            start = 0
        else:
            last = Item.objects.filter(task=task).order_by("-position").values_list("position", flat=True).first()
            start = 0 if last is None else last + 1  # (``or -1`` took a last position 0 for none)
        Item.objects.bulk_create(
            [
                Item(
                    task=task,
                    key=item["key"],
                    video_id=videos[item["video_id"]],
                    system=item["system"],
                    model=item["model"],
                    subset=item["subset"],
                    fields=item["fields"],
                    lists=item["lists"],
                    position=start + index,
                    capacity=overlap,
                )
                for index, item in enumerate(items)
            ],
            batch_size=2000,
        )
        refresh_after_bulk_load(Item)
    return {"items": len(items), "elements": sum(len(v) for item in items for v in item["lists"].values())}


def _answers_item_key(obj, number, filename, problems):
    """The item id a model-answers line names (``item_id``, or ``video_id`` + ``system`` for the default id);
    None when it names none it can (the problem added)."""
    key = _label(obj, "item_id", number, filename, problems)
    if key is None or key:
        return key
    video_id = _label(obj, "video_id", number, filename, problems)
    system = _label(obj, "system", number, filename, problems)
    if video_id is None or system is None:
        return None
    if not video_id:
        problems.add(filename, "item_id (or the item's video_id and system) is required", line=number, where="item_id")
        return None
    return default_key(video_id, system)


def read_model_answers(task, text, *, filename="model-answers.jsonl"):
    """Validate a model-answers file against the task's items; returns ``[(item pk, model, answers)]``. Every
    check of a line runs whatever else is wrong with it (its item, its model, a repeat, its answers, checked
    against the item whenever the item is known); a line is kept when it added no problem."""
    problems = ProblemList()
    known = {key: (pk, lists) for key, pk, lists in Item.objects.filter(task=task).values_list("key", "pk", "lists")}
    seen, rows = {}, []
    for number, obj in _lines(text, filename, problems):
        before = len(problems)
        for extra in sorted(set(obj) - {"item_id", "video_id", "system", "model", "answers"}):
            problems.add(filename, "unknown field (item_id, model, answers)", line=number, where=extra)
        model = _label(
            obj,
            "model",
            number,
            filename,
            problems,
            required=True,
            limit=ModelAnswer._meta.get_field("model").max_length,
        )
        key = _answers_item_key(obj, number, filename, problems)
        if key is not None and key not in known:
            problems.add(filename, f"task {task.name} has no item {key!r}", line=number, where="item_id")
            key = None
        if key is not None and model:
            if (key, model) in seen:
                problems.add(
                    filename,
                    f"answers of model {model!r} for item {key!r} are already given on line {seen[(key, model)]}",
                    line=number,
                    where="model",
                )
            else:
                seen[(key, model)] = number
        cleaned = None
        if not isinstance(obj.get("answers"), dict) or not obj["answers"]:
            problems.add(filename, "answers must be an object {question id: answer}", line=number, where="answers")
        elif key is not None:
            cleaned, errors, _ = check_answer(task.definition, known[key][1], obj["answers"], partial=True)
            for error in errors:
                where = f"answers.{error.question}" if error.question else "answers"
                if error.element is not None:
                    where += f"[{error.element}]"
                problems.add(filename, error.message, line=number, where=where)
        if len(problems) == before:
            rows.append((known[key][0], model, cleaned))
    if not problems and not rows:
        problems.add(filename, "the file holds no answers")
    problems.raise_if_any()
    return rows


def import_model_answers(task, text, *, filename="model-answers.jsonl"):
    rows = read_model_answers(task, text, filename=filename)
    with transaction.atomic():
        for model in {model for _, model, _ in rows}:
            ModelAnswer.objects.filter(
                task=task, model=model, item_id__in=[pk for pk, m, _ in rows if m == model]
            ).delete()
        ModelAnswer.objects.bulk_create(
            [
                ModelAnswer(task=task, item_id=pk, model=model, answers=answers, source=filename[:300])
                for pk, model, answers in rows
            ],
            batch_size=2000,
        )
    return {"answers": len(rows), "models": len({model for _, model, _ in rows})}


__all__ = ["FormatError", "import_items", "import_model_answers", "read_items", "read_model_answers", "WorkStarted"]
