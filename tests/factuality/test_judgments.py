"""Storing answers: one stored submission per client UUID, resubmission with history, refusals with reasons
(soft ones unless confirmed), drafts, and constant query counts whatever the number of captions."""

import uuid

import pytest

from annotation_site.factuality import judgments, projects
from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.models import (
    Assignment,
    ParagraphJudgment,
    Project,
    SentenceJudgment,
    Submission,
)
from annotation_site.prepared_queries import sent_sql

from .conftest import answer, import_jsonl, lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def taken(make_project, annotator_accounts):
    [annotator] = annotator_accounts(1)
    project = make_project(annotators=[annotator], videos=["v1"])
    found = next_assignment(project, annotator)
    return found, presented_captions(found)


def sizes(presented):
    return [len(sentences) for _, sentences in presented]


def test_submit_stores_the_three_levels(taken):
    found, presented = taken
    errors = {(0, 0): [(0, 1), (2, 4)]}
    result = judgments.submit(
        found,
        presented,
        answer(presented, [2, 5, 4], errors),
        client_uuid=uuid.uuid4(),
        time_spent=95.25,
        video_played=True,
    )
    assert result.created
    submission = result.submission
    assert (submission.time_spent, submission.video_played, submission.is_current) == (95.25, True, True)
    assert submission.annotator_id == found.annotator_id and submission.source == "web"
    assert sorted(ParagraphJudgment.objects.filter(submission=submission).values_list("caption_id", "score")) == sorted(
        [(presented[i][0].pk, s) for i, s in enumerate([2, 5, 4])]
    )
    first = presented[0][1][0]
    judged = SentenceJudgment.objects.get(submission=submission, sentence=first)
    assert judged.error and list(judged.spans.values_list("start", "end")) == [(0, 1), (2, 4)]
    assert SentenceJudgment.objects.filter(submission=submission).count() == sum(sizes(presented))
    assert SentenceJudgment.objects.filter(submission=submission, error=True).count() == 1
    found.refresh_from_db()
    assert found.status == Assignment.Status.SUBMITTED and found.submitted_at is not None


def test_a_retry_with_the_same_uuid_is_stored_once_and_returns_the_stored_result(taken):
    found, presented = taken
    key = uuid.uuid4()
    first = judgments.submit(found, presented, answer(presented, [3, 3, 3]), client_uuid=key)
    again = judgments.submit(found, presented, answer(presented, [1, 1, 1]), client_uuid=str(key))
    assert first.created and not again.created and again.submission.pk == first.submission.pk
    assert Submission.objects.count() == 1
    assert set(ParagraphJudgment.objects.values_list("score", flat=True)) == {3}


def test_the_same_uuid_for_another_video_is_a_conflict(make_project, annotator_accounts):
    [annotator] = annotator_accounts(1)
    project = make_project(annotators=[annotator], annotators_per_video=1)
    first = next_assignment(project, annotator)
    key = uuid.uuid4()
    judgments.submit(first, presented_captions(first), answer(presented_captions(first), [5, 5, 5]), client_uuid=key)
    second = next_assignment(project, annotator)
    with pytest.raises(judgments.SubmissionConflict):
        judgments.submit(
            second, presented_captions(second), answer(presented_captions(second), [5, 5, 5]), client_uuid=key
        )


def test_resubmission_replaces_the_answer_and_keeps_the_history(taken):
    found, presented = taken
    old = judgments.submit(found, presented, answer(presented, [2, 2, 2]), client_uuid=uuid.uuid4()).submission
    new = judgments.submit(
        found, presented, answer(presented, [4, 4, 4], {(1, 0): [(0, 1)]}), client_uuid=uuid.uuid4()
    ).submission
    old.refresh_from_db()
    assert not old.is_current and new.is_current
    assert Submission.objects.filter(assignment=found).count() == 2
    assert set(ParagraphJudgment.objects.filter(submission=old).values_list("score", flat=True)) == {2}
    current = judgments.current_answer(found, presented)["answer"]
    assert [p["score"] for p in current["paragraphs"]] == [4, 4, 4]
    assert current["paragraphs"][1]["sentences"][0] == {"error": 1, "spans": [[0, 1]]}


def test_closed_projects_refuse_new_answers_but_return_stored_ones(taken):
    found, presented = taken
    key = uuid.uuid4()
    judgments.submit(found, presented, answer(presented, [5, 5, 5]), client_uuid=key)
    projects.set_status(found.project, Project.Status.CLOSED)
    found.project.refresh_from_db()
    assert not judgments.submit(found, presented, answer(presented, [5, 5, 5]), client_uuid=key).created
    with pytest.raises(judgments.ProjectClosed):
        judgments.submit(found, presented, answer(presented, [1, 1, 1]), client_uuid=uuid.uuid4())
    with pytest.raises(judgments.ProjectClosed):
        judgments.save_draft(found, {"answer": {}})


def test_missing_scores_and_bare_flags_need_confirmation(taken):
    found, presented = taken
    data = answer(presented, [None, 4, 3], {(1, 0): []})
    with pytest.raises(judgments.NeedsConfirmation) as refused:
        judgments.submit(found, presented, data, client_uuid=uuid.uuid4())
    assert [(p.code, p.paragraph, p.sentence) for p in refused.value.problems] == [
        ("missing_score", 0, None),
        ("flagged_without_spans", 1, 0),
    ]
    assert refused.value.problems[0].message == "Paragraph A has no score yet."
    assert "Paragraph B, sentence 1 is flagged" in refused.value.problems[1].message
    assert not Submission.objects.exists()
    result = judgments.submit(found, presented, data, client_uuid=uuid.uuid4(), confirm=True)
    assert result.submission.confirmed_incomplete
    assert ParagraphJudgment.objects.get(submission=result.submission, caption=presented[0][0]).score is None


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda a: a["paragraphs"].pop(), "must list 3 paragraphs"),
        (lambda a: a["paragraphs"][0].update(score=6), "from 1 to 5, not 6"),
        (lambda a: a["paragraphs"][0].update(score="4"), "not '4'"),
        (lambda a: a["paragraphs"][0]["sentences"].append({"error": 0}), "must list its"),
        (lambda a: a["paragraphs"][0]["sentences"][0].update(error=1, spans=[[0, 99]]), "outside the sentence"),
        (lambda a: a["paragraphs"][0]["sentences"][0].update(error=1, spans=[[0, 2], [1, 3]]), "overlap"),
        (lambda a: a["paragraphs"][0]["sentences"][0].update(spans=[[0, 1]]), "not flagged"),
        (lambda a: a["paragraphs"][0]["sentences"][0].update(error=2), "error must be 0 or 1"),
        (lambda a: a["paragraphs"][0]["sentences"][0].update(error=1.0), "error must be 0 or 1"),  # was a flag
        (lambda a: a["paragraphs"][0]["sentences"][0].update(error=0.0), "error must be 0 or 1"),
        (lambda a: a.clear(), "must list 3 paragraphs"),
    ],
)
def test_invalid_answers_are_refused_even_when_confirmed(taken, mutate, message):
    found, presented = taken
    data = answer(presented, [3, 3, 3])
    mutate(data)
    with pytest.raises(judgments.AnswerInvalid, match=message):
        judgments.submit(found, presented, data, client_uuid=uuid.uuid4(), confirm=True)
    assert not Submission.objects.exists()


def test_a_malformed_uuid_is_refused(taken):
    found, presented = taken
    with pytest.raises(judgments.AnswerInvalid, match="UUID"):
        judgments.submit(found, presented, answer(presented, [3, 3, 3]), client_uuid="twice")


def test_drafts_are_kept_and_cleared_by_submitting(taken):
    found, presented = taken
    judgments.save_draft(found, {"answer": {"paragraphs": [{"score": 4}]}, "time_spent": 12.5, "video_played": 1})
    found.refresh_from_db()
    assert found.draft == {"answer": {"paragraphs": [{"score": 4}]}, "time_spent": 12.5, "video_played": True}
    with pytest.raises(judgments.AnswerInvalid):
        judgments.save_draft(found, {"answer": "x" * 10})
    with pytest.raises(judgments.AnswerInvalid, match="too large"):
        judgments.save_draft(found, {"answer": {"x": "y" * 300_000}})
    judgments.submit(found, presented, answer(presented, [3, 3, 3]), client_uuid=uuid.uuid4())
    found.refresh_from_db()
    assert found.draft is None


def _wide_dataset(name, captions, sentences):
    objects = [
        {"video_id": "w1", "system": f"S{c}", "sentences": [f"sentence {s} of caption {c} ." for s in range(sentences)]}
        for c in range(captions)
    ]
    return import_jsonl(lines(*objects), name)


@pytest.mark.parametrize("captions, sentences", [(2, 1), (12, 8)])
def test_submit_uses_a_constant_number_of_queries(annotator_accounts, django_assert_num_queries, captions, sentences):
    dataset = _wide_dataset(f"wide{captions}", captions, sentences)
    [annotator] = annotator_accounts(1)
    project = projects.create_project(projects.ProjectSpec(name=f"q{captions}", dataset=dataset))
    projects.add_member(project, annotator)
    found = next_assignment(project, annotator)
    found = type(found).objects.select_related("project", "project_video").get(pk=found.pk)
    presented = presented_captions(found)
    data = answer(presented, [3] * captions, {(p, 0): [(0, 1)] for p in range(captions)})
    # savepoint, lock, lookup (which also finds a current answer: none), 4 bulk inserts, assignment update,
    # release (10 before: a lookup of the UUID before the transaction too; 11 before that: the history update
    # ran even with nothing to mark)
    with django_assert_num_queries(9):
        judgments.submit(found, presented, data, client_uuid=uuid.uuid4())
    stored = Submission.objects.get().client_uuid
    with django_assert_num_queries(4):  # a retry: savepoint, lock, lookup, release
        judgments.submit(found, presented, data, client_uuid=stored)
    with django_assert_num_queries(10):  # a new answer replacing the current one: the history update as well
        judgments.submit(found, presented, data, client_uuid=uuid.uuid4())
    assert Submission.objects.filter(assignment=found, is_current=True).count() == 1


def test_a_submit_locks_and_reads_without_joining_the_project_or_the_annotator(taken):
    """The models' default orderings (assignment: project, annotator; submission: assignment) made the lock
    ``SELECT ... JOIN project JOIN annotator ... FOR UPDATE`` (on PostgreSQL it locked the project's row: every
    submission of a project waited for every other one) and each submission lookup a four-table join."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    found, presented = taken
    key = uuid.uuid4()
    with CaptureQueriesContext(connection) as captured:
        judgments.submit(found, presented, answer(presented, [3, 3, 3]), client_uuid=key)
        judgments.submit(found, presented, answer(presented, [3, 3, 3]), client_uuid=key)  # a retry
    statements = [sent_sql(q["sql"]) for q in captured.captured_queries]
    assert len([s for s in statements if s.startswith("SELECT")]) == 4  # lock, lookup; the retry's lock, lookup
    assert not [s for s in statements if " JOIN " in s]
