"""Answers: checking them against the definition and the item, storing each exactly once (double clicks,
retries, concurrent requests), resubmission history, drafts, and constant query counts whatever the lengths
of the item's lists."""

import uuid

import pytest

from annotation_site.judgment_tasks import answers, services
from annotation_site.judgment_tasks.assignment import TaskClosed, next_assignment
from annotation_site.judgment_tasks.definition import normalise
from annotation_site.judgment_tasks.models import Assignment, Submission
from annotation_site.prepared_queries import sent_sql
from annotation_site.workflow.answers import AnswerInvalid, NeedsConfirmation, SubmissionConflict
from tests.factuality.conftest import in_thread, race, thread_database

from .conftest import lines

pytestmark = pytest.mark.django_db

EVERYTHING = normalise(
    {
        "fields": [{"name": "caption"}],
        "lists": [{"name": "facts", "marker": "T"}, {"name": "questions", "marker": "Q"}],
        "questions": [
            {"id": "score", "type": "likert", "prompt": "Score?", "scale": [[1, "bad"], [2, "so-so"], [3, "good"]]},
            {
                "id": "valid",
                "type": "choice",
                "prompt": "Valid?",
                "options": [["y", "Yes"], ["n", "No"]],
                "per": "questions",
                "with": "facts",
            },
            {"id": "matches", "type": "pairs", "prompt": "Match", "left": "facts", "right": "questions"},
            {"id": "people", "type": "count", "prompt": "How many people?", "min": 0, "max": 9},
            {"id": "note", "type": "text", "prompt": "Note", "max_length": 20},
            {"id": "reason", "type": "text", "prompt": "Why?", "required": True},
        ],
    }
)
LISTS = {"facts": ["a", "b"], "questions": ["a?", "b?"]}


def test_check_answer_hard_and_soft_problems():
    good = {
        "score": 2,
        "valid": ["y", "n"],
        "matches": [[1, 0], [0, 0]],
        "people": 3,
        "note": " hi ",
        "reason": "because",
    }
    cleaned, problems, soft = answers.check_answer(EVERYTHING, LISTS, good)
    assert problems == [] and soft == []
    assert cleaned["matches"] == [[0, 0], [1, 0]] and cleaned["note"] == "hi"
    bad = {"score": 4, "valid": ["y"], "matches": [[2, 0]], "people": -1, "note": "x" * 21, "reason": " ", "extra": 1}
    _, problems, _ = answers.check_answer(EVERYTHING, LISTS, bad)
    assert sorted(p.question for p in problems) == ["extra", "matches", "note", "people", "reason", "score", "valid"]
    empty = {"score": None, "valid": ["y", None], "matches": [], "people": None, "reason": "ok"}
    _, problems, soft = answers.check_answer(EVERYTHING, LISTS, empty)
    assert problems == []
    assert [(p.question, p.element) for p in soft] == [
        ("score", None),
        ("valid", 1),
        ("matches", None),
        ("people", None),
    ]
    assert "Q2" in soft[1].message  # elements are named as the page numbers them


@pytest.fixture
def verification(make_task, annotator_accounts):
    def make(name="verify", questions=3, annotators=1, per_item=3):
        people = annotator_accounts(annotators, prefix=f"{name}-")
        items = [
            {"item_id": f"{name}{n}", "video_id": f"c{n + 1}", "questions": [f"q{i}?" for i in range(questions)]}
            for n in range(3)
        ]
        return make_task(name, "fifa-verification", items, members=people, per_item=per_item), people

    return make


def test_a_retry_is_stored_once_and_a_new_uuid_replaces_the_answer(verification):
    task, [annotator] = verification()
    assignment = next_assignment(task, annotator)
    key = uuid.uuid4()
    first = answers.submit(assignment, {"answer": ["yes", "no", "yes"]}, client_uuid=key)
    again = answers.submit(assignment, {"answer": ["no", "no", "no"]}, client_uuid=str(key))  # a retry
    assert first.created and not again.created and again.submission.pk == first.submission.pk
    assert Submission.objects.get().answers == {"answer": ["yes", "no", "yes"]}
    changed = answers.submit(assignment, {"answer": ["no", "no", "no"]}, client_uuid=uuid.uuid4())
    assert changed.created
    assert list(Submission.objects.order_by("id").values_list("is_current", flat=True)) == [False, True]
    other = next_assignment(task, annotator)
    with pytest.raises(SubmissionConflict):
        answers.submit(other, {"answer": ["yes"] * 3}, client_uuid=key)
    with pytest.raises(NeedsConfirmation):
        answers.submit(other, {"answer": ["yes", None, "no"]}, client_uuid=uuid.uuid4())
    stored = answers.submit(other, {"answer": ["yes", None, "no"]}, client_uuid=uuid.uuid4(), confirm=True)
    assert stored.submission.confirmed_incomplete
    with pytest.raises(AnswerInvalid):
        answers.submit(other, {"answer": ["yes"]}, client_uuid="not-a-uuid")


def test_a_retry_that_no_longer_passes_the_checks_is_answered_with_the_stored_answer(verification):
    """A retry is recognised even when the check would now refuse it: after the task closed, or with a body
    that is incomplete or invalid (a retry keeps its UUID; the stored answer is what counts). A new UUID is
    refused as before."""
    task, [annotator] = verification(name="late")
    assignment = next_assignment(task, annotator)
    key = uuid.uuid4()
    first = answers.submit(assignment, {"answer": ["yes", "no", "yes"]}, client_uuid=key)
    for body in ({"answer": ["yes", None, "no"]}, {"answer": ["maybe"]}):
        again = answers.submit(assignment, body, client_uuid=key)
        assert not again.created and again.submission.pk == first.submission.pk
    services.set_status(task, "closed")
    assignment.task.refresh_from_db()
    again = answers.submit(assignment, {"answer": ["yes", "no", "yes"]}, client_uuid=key)
    assert not again.created and again.submission.pk == first.submission.pk
    with pytest.raises(TaskClosed):
        answers.submit(assignment, {"answer": ["yes", "no", "yes"]}, client_uuid=uuid.uuid4())
    assert Submission.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_of_one_submit_store_one_row(verification):
    """Four requests carrying one submission at the same moment (a double click and retries racing): one row,
    one "created", the others answered with it. SQLite on a file as in production, or PostgreSQL."""
    task, [annotator] = verification(name="race")
    assignment = next_assignment(task, annotator)
    key = uuid.uuid4()
    with thread_database() as use:

        def post(ready):
            found = Assignment.objects.select_related("task", "item").get(pk=assignment.pk)
            ready()
            return answers.submit(found, {"answer": ["yes", "yes", "no"]}, client_uuid=key).created

        results, errors = race(post, [()] * 4, use=use)
        assert not errors, errors
        assert sorted(results) == [False, False, False, True]
        stored = in_thread(use, lambda: Submission.objects.filter(client_uuid=key).count())
    assert stored == 1


def test_drafts_are_kept_until_the_submit(verification):
    task, [annotator] = verification(name="drafts")
    assignment = next_assignment(task, annotator)
    answers.save_draft(assignment, {"answer": {"answer": ["yes", None, None]}, "time_spent": 12.5})
    assignment.refresh_from_db()
    assert answers.page_state(assignment)["source"] == "draft"
    with pytest.raises(AnswerInvalid):
        answers.save_draft(assignment, {"answer": {"x": "y" * 300_000}})
    answers.submit(assignment, {"answer": ["yes", "no", "no"]}, client_uuid=uuid.uuid4())
    assignment.refresh_from_db()
    state = answers.page_state(assignment)
    assert state["source"] == "submitted" and state["answer"] == {"answer": ["yes", "no", "no"]}


def _submit_queries(verification, name, questions):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation_site.judgment_tasks.assignment import assignment_for

    task, [annotator] = verification(name=name, questions=questions)
    assignment = assignment_for(annotator, next_assignment(task, annotator).pk)  # as the API loads it
    key = uuid.uuid4()
    with CaptureQueriesContext(connection) as first:
        answers.submit(assignment, {"answer": ["yes"] * questions}, client_uuid=key)
    with CaptureQueriesContext(connection) as retry:
        answers.submit(assignment, {"answer": ["yes"] * questions}, client_uuid=key)
    with CaptureQueriesContext(connection) as replacing:
        answers.submit(assignment, {"answer": ["no"] * questions}, client_uuid=uuid.uuid4())
    return len(first), len(retry), len(replacing)


def test_submit_uses_a_constant_number_of_queries(verification):
    """6 queries for a first answer (savepoint, lock, lookup that also finds a current answer, insert, status,
    release; 7 before: a lookup of the UUID before the transaction too; 8 before that: the history update ran
    even when there was nothing to mark), 7 for an answer that replaces one (the history update), 4 for a
    retry (savepoint, lock, lookup, release), with 2 or 200 elements in the item's list."""
    assert _submit_queries(verification, "few", 2) == _submit_queries(verification, "many", 200) == (6, 4, 7)


def test_assignment_caps_items_and_serves_crowd_quotas(make_task, annotator_accounts):
    people = annotator_accounts(4)
    items = [{"video_id": f"c{n + 1}", "text": f"t{n}"} for n in range(3)]
    task = make_task("cap", "fifa-faithfulness", items, members=people, per_item=2)
    taken = []
    for _ in range(3):
        for annotator in people:
            found = next_assignment(task, annotator)
            if found is not None:
                taken.append((annotator.pk, found.item.key))
                answers.submit(found, {"faithfulness": 3}, client_uuid=uuid.uuid4())
    assert sorted(k for _, k in taken) == ["c1", "c1", "c2", "c2", "c3", "c3"]
    assert len(set(taken)) == len(taken)
    other = services.create_task(name="quota", dataset=task.dataset, preset="fifa-faithfulness")
    from annotation_site.judgment_tasks import imports

    imports.import_items(other, lines(*items))
    services.add_member(other, people[0])
    first = next_assignment(other, people[0], limit=1)
    answers.submit(first, {"faithfulness": 2}, client_uuid=uuid.uuid4())
    assert next_assignment(other, people[0], limit=1) is None
    assert next_assignment(other, people[0], limit=2) is not None


@pytest.mark.django_db(transaction=True)
def test_annotators_arriving_together_never_overfill_an_item(make_task, annotator_accounts):
    """Five annotators ask for work at the same moment; the only item takes two: exactly two get it."""
    people = annotator_accounts(5, prefix="rush")
    task = make_task("rush", "fifa-faithfulness", [{"video_id": "c1", "text": "t"}], members=people, per_item=2)
    with thread_database() as use:

        def ask(ready, annotator_pk):
            from annotation_site.annotators.models import Annotator
            from annotation_site.judgment_tasks.models import Task

            found_task, annotator = Task.objects.get(pk=task.pk), Annotator.objects.get(pk=annotator_pk)
            ready()
            return next_assignment(found_task, annotator) is not None

        got, errors = race(ask, [(a.pk,) for a in people], use=use)

        def read():
            from annotation_site.judgment_tasks.models import Item

            return [(Assignment.objects.count(), Item.objects.get().assigned)]

        counts = in_thread(use, read)
    assert not errors, errors
    assert sorted(got) == [False, False, False, True, True] and counts == [(2, 2)]


def test_a_submit_locks_and_reads_without_joining_the_task_or_the_annotator(verification):
    """The models' default orderings (assignment: task, annotator; submission: assignment) made the lock
    ``SELECT ... JOIN task JOIN annotator ... FOR UPDATE`` (on PostgreSQL it locked the task's row: every
    submission of a task waited for every other one) and each submission lookup a join of four tables."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation_site.judgment_tasks.assignment import assignment_for

    task, [annotator] = verification(name="joins", questions=2)
    key = uuid.uuid4()
    with CaptureQueriesContext(connection) as captured:
        assignment = assignment_for(annotator, next_assignment(task, annotator).pk)
        answers.submit(assignment, {"answer": ["yes"] * 2}, client_uuid=key)
        answers.submit(assignment, {"answer": ["yes"] * 2}, client_uuid=key)  # a retry
    selects = [s for s in (sent_sql(q["sql"]) for q in captured.captured_queries) if s.startswith("SELECT")]
    lock = 'SELECT "judgment_tasks_assignment"."id" FROM "judgment_tasks_assignment" '  # (FOR UPDATE where it can)
    locks = [s for s in selects if s.startswith(lock)]
    assert len(locks) == 2 and not [s for s in locks if " JOIN " in s]  # the answer's, the retry's
    lookups = [s for s in selects if 'FROM "judgment_tasks_submission"' in s]
    assert len(lookups) == 2 and not [s for s in lookups if " JOIN " in s]
