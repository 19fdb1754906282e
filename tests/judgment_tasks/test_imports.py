"""JSONL imports: every problem of a file is named with file, line and field and nothing is written; a good
file is written in one go; model answers are checked against the items and replace earlier ones."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation_site.judgment_tasks import imports, services
from annotation_site.judgment_tasks.models import Item, ModelAnswer
from annotation_site.problems import FormatError

from .conftest import lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversion(videos):
    return services.create_task(name="conv", dataset=videos, preset="fifa-conversion")


def problems_of(call):
    with pytest.raises(FormatError) as caught:
        call()
    return [(p.file, p.line, p.where, p.message) for p in caught.value.problems]


def test_every_problem_is_named_and_nothing_is_written(conversion):
    text = (
        lines(
            {"video_id": "c1", "tuples": ["a man", "a dog"], "questions": ["Is there a man?", "Is there a dog?"]},
            {"video_id": "c2", "tuples": ["a man"], "questions": ["Is there a man?", "Extra?"]},
            {"video_id": "nope", "tuples": ["x"], "questions": ["y?"]},
            {"video_id": "c1", "tuples": ["b"], "questions": ["c?"]},
            {"video_id": "c3", "tuples": ["t"], "questions": [""], "colour": "red"},
            {"tuples": ["t"], "questions": ["q?"]},
        )
        + "not json\n"
        + lines({"video_id": "c4", "tuples": "a man", "questions": ["q?"]}, {"video_id": "c5"})
    )
    found = problems_of(lambda: imports.import_items(conversion, text, filename="conv.jsonl"))
    wheres = {(line, where) for _, line, where, _ in found}
    assert all(file == "conv.jsonl" for file, *_ in found)
    assert (2, "tuples") in wheres  # 1 tuple for 2 questions, shown side by side
    assert (4, "item_id") in wheres  # c1 again: the default item id repeats line 1
    assert (5, "colour") in wheres and (5, "questions[0]") in wheres
    assert (6, "video_id") in wheres
    assert (7, "") in wheres  # invalid JSON
    assert (8, "tuples") in wheres
    assert (9, "tuples") in wheres and (9, "questions") in wheres
    # the unknown video is told with the rest (it was told only once the rest was clean: a QA probe, 2026-11-28)
    assert ("conv.jsonl", 3, "video_id", "dataset clips has no video 'nope'") in found
    assert [line for _, line, *_ in found] == sorted(line for _, line, *_ in found)  # in line order
    assert not Item.objects.exists()
    # alone (one query for every video id of the file)
    found = problems_of(
        lambda: imports.import_items(
            conversion, lines({"video_id": "nope", "tuples": ["x"], "questions": ["y?"]}), filename="conv.jsonl"
        )
    )
    assert found == [("conv.jsonl", 1, "video_id", "dataset clips has no video 'nope'")]


def test_items_import_in_order_and_refuse_known_ids_unless_replacing(conversion):
    text = lines(
        *[
            {
                "item_id": f"i{n}",
                "video_id": f"c{n + 1}",
                "subset": "V2T",
                "system": "GPT",
                "tuples": ["a", "b"],
                "questions": ["a?", "b?"],
            }
            for n in range(3)
        ]
    )
    assert imports.import_items(conversion, text) == {"items": 3, "elements": 12}
    assert list(Item.objects.values_list("key", "position", "subset", "system")) == [
        ("i0", 0, "V2T", "GPT"),
        ("i1", 1, "V2T", "GPT"),
        ("i2", 2, "V2T", "GPT"),
    ]
    found = problems_of(lambda: imports.import_items(conversion, text))
    assert [(line, where) for _, line, where, _ in found] == [(1, "item_id"), (2, "item_id"), (3, "item_id")]
    more = lines({"video_id": "c9", "tuples": ["z"], "questions": ["z?"]})
    imports.import_items(conversion, more)
    assert Item.objects.get(key="c9").position == 3
    assert imports.import_items(conversion, text, replace=True)["items"] == 3
    assert Item.objects.count() == 3


def test_model_answers_are_checked_against_the_items(videos):
    task = services.create_task(name="verify", dataset=videos, preset="fifa-verification")
    imports.import_items(
        task,
        lines(
            {"item_id": "a", "video_id": "c1", "questions": ["q1?", "q2?"]},
            {"video_id": "c2", "system": "Sora", "questions": ["q?"]},
        ),
    )
    bad = lines(
        {"item_id": "a", "model": "M", "answers": {"answer": ["yes"]}},
        {"item_id": "a", "model": "M2", "answers": {"answer": ["yes", "maybe"]}},
        {"item_id": "a", "model": "M", "answers": {"answer": ["no", "no"]}},
        {"item_id": "zzz", "model": "M", "answers": {"answer": ["yes"]}},
        {"item_id": "a", "answers": {"answer": ["yes", "no"]}},
        {"item_id": "a", "model": "N", "answers": {"answer": ["yes", None], "other": 1}},
        {"video_id": "c2", "system": "Sora", "model": "M", "answers": {"answer": ["no"]}},
    )
    found = problems_of(lambda: imports.import_model_answers(task, bad, filename="qa.jsonl"))
    wheres = [(line, where) for _, line, where, _ in found]
    assert (1, "answers.answer") in wheres and (2, "answers.answer[1]") in wheres
    assert (3, "model") in wheres  # model M for item a again
    assert (4, "item_id") in wheres and (5, "model") in wheres
    assert (6, "answers.other") in wheres and (6, "answers.answer[1]") in wheres
    assert not any(line == 7 for line, _ in wheres)  # video_id + system name the item "c2:Sora"
    assert not ModelAnswer.objects.exists()
    good = lines(
        {"item_id": "a", "model": "M", "answers": {"answer": ["yes", "no"]}},
        {"video_id": "c2", "system": "Sora", "model": "M", "answers": {"answer": ["no"]}},
    )
    assert imports.import_model_answers(task, good) == {"answers": 2, "models": 1}
    imports.import_model_answers(task, lines({"item_id": "a", "model": "M", "answers": {"answer": ["no", "no"]}}))
    assert ModelAnswer.objects.count() == 2
    assert ModelAnswer.objects.get(item__key="a").answers == {"answer": ["no", "no"]}


def test_definition_changes_until_work_starts_and_must_fit_the_items(videos, annotator_accounts):
    from django.core.exceptions import ValidationError

    from annotation_site.judgment_tasks.assignment import next_assignment

    task = services.create_task(name="faith", dataset=videos, preset="fifa-faithfulness")
    imports.import_items(task, lines({"video_id": "c1", "text": "a man runs"}))
    definition = dict(
        task.definition, fields=[{"name": "text", "label": "Caption"}, {"name": "source", "label": "Source"}]
    )
    with pytest.raises(ValidationError) as caught:
        services.update_definition(task, definition)
    assert "source" in str(caught.value)  # the stored item has no "source"
    definition["fields"][1]["optional"] = True
    services.update_definition(task, definition)
    assert [f["label"] for f in task.definition["fields"]] == ["Caption", "Source"]
    [annotator] = annotator_accounts(1)
    services.add_member(task, annotator)
    next_assignment(task, annotator)
    with pytest.raises(ValidationError) as caught:
        services.update_definition(task, definition)
    assert "work has started" in str(caught.value)
    with pytest.raises(imports.WorkStarted):
        imports.import_items(task, lines({"video_id": "c2", "text": "x"}), replace=True)


def test_items_added_after_a_single_first_item_come_after_it(conversion):
    """The next position was ``(last or -1) + 1``: after one item at position 0 it was 0 again."""
    imports.import_items(conversion, lines({"item_id": "a", "video_id": "c1", "tuples": ["a"], "questions": ["a?"]}))
    imports.import_items(conversion, lines({"item_id": "b", "video_id": "c2", "tuples": ["b"], "questions": ["b?"]}))
    assert list(Item.objects.order_by("position").values_list("key", "position")) == [("a", 0), ("b", 1)]


def test_replacing_items_refuses_work_handed_out_while_the_file_was_read(videos, annotator_accounts, monkeypatch):
    """Whether work had started was asked before the file was read, outside the transaction that deletes the
    items: an item handed out and answered meanwhile was deleted with its assignment and the annotator's answer."""
    import uuid

    from annotation_site.judgment_tasks import answers
    from annotation_site.judgment_tasks.assignment import next_assignment
    from annotation_site.judgment_tasks.models import Submission

    task = services.create_task(name="faith", dataset=videos, preset="fifa-faithfulness")
    imports.import_items(task, lines({"video_id": "c1", "text": "a man runs"}))
    [annotator] = annotator_accounts(1)
    services.add_member(task, annotator)
    reading = imports.read_items

    def read_while_someone_works(*args, **kwargs):
        assignment = next_assignment(task, annotator)  # handed out and answered while the file is read
        answers.submit(assignment, {"faithfulness": 4}, client_uuid=str(uuid.uuid4()), video_played=True)
        return reading(*args, **kwargs)

    monkeypatch.setattr(imports, "read_items", read_while_someone_works)
    with pytest.raises(imports.WorkStarted, match="handed out meanwhile"):
        imports.import_items(task, lines({"video_id": "c2", "text": "x"}), replace=True)
    assert Submission.objects.filter(assignment__task=task).count() == 1  # the answer is kept
    assert list(Item.objects.filter(task=task).values_list("fields__text", flat=True)) == ["a man runs"]


def test_a_known_item_id_does_not_hide_the_other_problems_of_its_line(staff_client, conversion):
    """Lines whose default item id (the video id) the task already has, or an earlier line gave, or whose labels
    are wrong: every other problem of each line is listed in the same answer (only "the task already has an item"
    was, the rest after the ids were made unique)."""
    imports.import_items(
        conversion, lines(*[{"video_id": f"c{n}", "tuples": ["t"], "questions": ["q?"]} for n in (1, 2, 3, 4)])
    )
    text = lines(
        {"video_id": "c1", "tuples": ["a man"], "questions": ["Is there a man?", "A dog?"]},  # lengths differ
        {"video_id": "c2", "tuples": [], "questions": ["q?"]},  # an empty list
        {"video_id": "c3", "tuples": "a man", "questions": ["q?"]},  # a string instead of a list
        {"video_id": "c4", "tuples": ["a", 3], "questions": ["q?", ""]},  # elements that are not text
        {"video_id": "c9", "tuples": ["a"], "questions": ["q?"]},
        {"video_id": "c9", "tuples": ["a", "b"], "questions": ["q?"]},  # repeats line 5, and lengths differ
        {"video_id": "c10", "system": 5, "tuples": ["a", "b"], "questions": "q?"},  # a bad label hid the rest too
        {"video_id": "c11", "tuples": ["a", 7], "questions": ["q?"]},  # a bad element hid the lengths' problem
    )  # fmt: skip
    response = staff_client.post(
        reverse("api-tasks-items", args=["conv"]), {"file": SimpleUploadedFile("more.jsonl", text.encode())}
    )
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "more.jsonl, line 1, item_id: the task already has an item 'c1'",
        "more.jsonl, line 1, tuples: questions and tuples are shown side by side and need the same length (2 and 1)",
        "more.jsonl, line 2, item_id: the task already has an item 'c2'",
        "more.jsonl, line 2, tuples: this list is required (a non-empty list of texts)",
        "more.jsonl, line 3, item_id: the task already has an item 'c3'",
        "more.jsonl, line 3, tuples: must be a list of at most 500 texts",
        "more.jsonl, line 4, item_id: the task already has an item 'c4'",
        "more.jsonl, line 4, tuples[1]: must be a non-empty text of at most 5000 characters, not 3",
        "more.jsonl, line 4, questions[1]: must be a non-empty text of at most 5000 characters, not ''",
        "more.jsonl, line 6, item_id: item 'c9' is already given on line 5",
        "more.jsonl, line 6, tuples: questions and tuples are shown side by side and need the same length (1 and 2)",
        "more.jsonl, line 7, system: system must be a non-empty text of at most 100 characters, not 5",
        "more.jsonl, line 7, questions: must be a list of at most 500 texts",
        "more.jsonl, line 8, tuples[1]: must be a non-empty text of at most 5000 characters, not 7",
        "more.jsonl, line 8, tuples: questions and tuples are shown side by side and need the same length (1 and 2)",
    ]
    assert Item.objects.count() == 4


def test_a_repeated_model_answer_line_does_not_hide_its_answers_problems(videos):
    """A line repeating a model's answers for an item, or naming an unknown item, has its answers checked too."""
    task = services.create_task(name="verify", dataset=videos, preset="fifa-verification")
    imports.import_items(task, lines({"item_id": "a", "video_id": "c1", "questions": ["q1?", "q2?"]}))
    text = lines(
        {"item_id": "a", "model": "M", "answers": {"answer": ["yes", "no"]}},
        {"item_id": "a", "model": "M", "answers": {"answer": ["yes", "maybe"]}},
        {"item_id": "zzz", "model": "M", "answers": "yes"},
        {"item_id": "a", "answers": {"answer": ["yes"]}},
    )
    found = problems_of(lambda: imports.import_model_answers(task, text, filename="qa.jsonl"))
    assert [(line, where) for _, line, where, _ in found] == [
        (2, "model"),
        (2, "answers.answer[1]"),
        (3, "item_id"),
        (3, "answers"),
        (4, "model"),
        (4, "answers.answer"),
    ]
    assert not ModelAnswer.objects.exists()
