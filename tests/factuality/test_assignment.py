"""Handing out whole videos: never the same video twice, stopping at the overlap, a fixed per-annotator caption
order, and no double allocation of the last slot when annotators arrive at the same moment."""

import threading
import time

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection, connections

from annotation_site.factuality import assignment as assigning
from annotation_site.factuality import projects
from annotation_site.factuality.models import Assignment, Project, ProjectVideo
from annotation_site.prepared_queries import sent_sql

from .conftest import thread_database

pytestmark = pytest.mark.django_db


def test_each_annotator_gets_every_video_once_until_the_overlap(make_project, annotator_accounts):
    annotators = annotator_accounts(4)
    project = make_project(annotators=annotators, annotators_per_video=3)
    taken = {a.pk: [] for a in annotators}
    for _ in range(4):
        for annotator in annotators:
            found = assigning.next_assignment(project, annotator)
            if found is not None:
                taken[annotator.pk].append(found.project_video.video.external_id)
                Assignment.objects.filter(pk=found.pk).update(status=Assignment.Status.SUBMITTED)
    videos = [v for ids in taken.values() for v in ids]
    assert sorted(videos) == ["v1"] * 3 + ["v2"] * 3 + ["v3"] * 3  # 3 annotators per video, then it stops
    assert all(len(ids) == len(set(ids)) for ids in taken.values())  # never the same video twice
    assert list(ProjectVideo.objects.filter(project=project).values_list("assigned", flat=True)) == [3, 3, 3]
    assert all(assigning.next_assignment(project, a) is None for a in annotators)


def test_an_unfinished_video_comes_back_instead_of_a_new_one(make_project, annotator_accounts):
    [annotator] = annotator_accounts(1)
    project = make_project(annotators=[annotator])
    first = assigning.next_assignment(project, annotator)
    assert assigning.next_assignment(project, annotator) == first
    assert Assignment.objects.count() == 1


def test_only_invited_annotators_while_open(make_project, annotator_accounts):
    member, stranger = annotator_accounts(2)
    project = make_project(annotators=[member])
    with pytest.raises(PermissionDenied):
        assigning.next_assignment(project, stranger)
    projects.set_status(project, Project.Status.CLOSED)
    with pytest.raises(assigning.ProjectClosed):
        assigning.next_assignment(project, member)


def test_caption_order_is_shuffled_per_annotator_and_stable(make_project, annotator_accounts):
    annotators = annotator_accounts(12)
    project = make_project(annotators=annotators, annotators_per_video=12, videos=["v1"])
    orders = set()
    for annotator in annotators:
        found = assigning.next_assignment(project, annotator)
        order = tuple(c.system.name for c, _ in assigning.presented_captions(found))
        assert order == tuple(c.system.name for c, _ in assigning.presented_captions(found))  # a reload
        assert sorted(order) == ["Alpha", "Beta", "Gamma"]
        orders.add(order)
    assert len(orders) > 1
    unshuffled = make_project(name="plain", annotators=annotators[:1], shuffle_systems=False, videos=["v1"])
    found = assigning.next_assignment(unshuffled, annotators[0])
    assert [c.system.name for c, _ in assigning.presented_captions(found)] == ["Alpha", "Beta", "Gamma"]


def test_progress_numbers_and_paragraph_letters(make_project, annotator_accounts):
    a, b = annotator_accounts(2)
    project = make_project(annotators=[a, b], annotators_per_video=1)
    first = assigning.next_assignment(project, a)
    assert assigning.position_of(first) == (1, 3, False)  # video 1 of 3 (all three still open to a)
    assigning.next_assignment(project, b)  # b takes v2: a can now have at most 2 in all
    assert assigning.position_of(first) == (1, 2, False)
    assert [assigning.paragraph_letter(i) for i in (0, 1, 25, 26, 27)] == ["A", "B", "Z", "AA", "AB"]


def test_release_gives_the_slot_back(make_project, annotator_accounts):
    a, b = annotator_accounts(2)
    project = make_project(annotators=[a, b], annotators_per_video=1, videos=["v1"])
    found = assigning.next_assignment(project, a)
    assert assigning.next_assignment(project, b) is None
    assert assigning.release(found)
    assert assigning.next_assignment(project, b).project_video.video.external_id == "v1"


def test_next_assignment_uses_a_constant_number_of_queries(
    make_project, annotator_accounts, django_assert_max_num_queries
):
    annotators = annotator_accounts(2)
    project = make_project(annotators=annotators)
    with django_assert_max_num_queries(7):
        assigning.next_assignment(project, annotators[0])
    with django_assert_max_num_queries(7):
        assigning.next_assignment(project, annotators[0])  # already has one: fewer


def _race(project_pk, annotator_pks, use, hold=0.0, barrier=None):
    """Each thread asks for a video for its annotator at the same moment; returns {annotator: (video or None,
    seconds waited)}. With ``hold``, the first thread to lock keeps its transaction open that long."""
    results, errors, first = {}, [], threading.Lock()
    locked = threading.Event()
    original = assigning._after_lock

    def after_lock():
        if hold and first.acquire(blocking=False):
            locked.set()
            time.sleep(hold)

    def worker(annotator_pk, delay):
        use()
        try:
            from annotation_site.annotators.models import Annotator

            project = Project.objects.get(pk=project_pk)
            annotator = Annotator.objects.get(pk=annotator_pk)
            if barrier is not None:
                barrier.wait(timeout=10)
            if delay:
                locked.wait(timeout=10)
            started = time.monotonic()
            found = assigning.next_assignment(project, annotator)
            results[annotator_pk] = (found.project_video_id if found else None, time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    assigning._after_lock = after_lock
    try:
        threads = [
            threading.Thread(target=worker, args=(pk, bool(hold) and i > 0)) for i, pk in enumerate(annotator_pks)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        assigning._after_lock = original
    assert not errors, errors
    return results


def _assigned_rows(use, project_pk):
    out = {}

    def read():
        use()
        try:
            out["assignments"] = sorted(
                Assignment.objects.filter(project_id=project_pk).values_list("project_video_id", "annotator_id")
            )
            out["counters"] = dict(ProjectVideo.objects.filter(project_id=project_pk).values_list("pk", "assigned"))
        finally:
            connections.close_all()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    return out


def _racing_project(dataset, annotators, name, videos, per_video, early=()):
    project = projects.create_project(
        projects.ProjectSpec(name=name, dataset=dataset, videos=videos, annotators_per_video=per_video)
    )
    for annotator in list(annotators) + list(early):
        projects.add_member(project, annotator)
    for annotator in early:
        assigning.next_assignment(project, annotator)
    return project


@pytest.mark.django_db(transaction=True)
def test_two_annotators_arriving_together_cannot_both_take_the_last_slot(small_dataset, annotator_accounts):
    """One video with one slot left; two annotators ask at once, the first holding its transaction open for a
    second. Exactly one of them gets the video, and the counter says 2 (PostgreSQL: row locks and the
    conditional update; SQLite, a file as in production: IMMEDIATE transactions serialise the two)."""
    early, a, b = annotator_accounts(3)
    project = _racing_project(small_dataset, [a, b], "race", ["v1"], 2, early=[early])
    with thread_database() as use:
        results = _race(project.pk, [a.pk, b.pk], use, hold=1.0)
        rows = _assigned_rows(use, project.pk)
    winners = [pk for pk, (video, _) in results.items() if video is not None]
    assert len(winners) == 1
    assert len(rows["assignments"]) == 2 and set(rows["counters"].values()) == {2}


@pytest.mark.django_db(transaction=True)
def test_an_annotator_arriving_meanwhile_takes_another_video(small_dataset, annotator_accounts):
    """Two videos with one free slot each; while the first annotator's transaction holds video 1, the second
    takes video 2. PostgreSQL: select_for_update(skip_locked) skips the locked row, so the second does not
    wait for the first's 2 s. SQLite: it waits for the first transaction (writers are serialised), then takes video 2."""
    a, b = annotator_accounts(2)
    project = _racing_project(small_dataset, [a, b], "skip", ["v1", "v2"], 1)
    with thread_database() as use:
        results = _race(project.pk, [a.pk, b.pk], use, hold=2.0)
        rows = _assigned_rows(use, project.pk)
    videos = dict(ProjectVideo.objects.filter(project=project).values_list("video__external_id", "pk"))
    assert results[a.pk][0] == videos["v1"] and results[b.pk][0] == videos["v2"]
    waited = results[b.pk][1]
    if connection.vendor == "postgresql":
        assert waited < 1.0, f"the second annotator waited {waited:.2f} s instead of skipping the locked row"
    else:
        assert waited > 1.0, f"the second annotator waited only {waited:.2f} s: writers were not serialised"
    assert rows["counters"] == {videos["v1"]: 1, videos["v2"]: 1}


@pytest.mark.django_db(transaction=True)
def test_many_annotators_at_once_never_overfill_a_video(small_dataset, annotator_accounts):
    annotators = annotator_accounts(8)
    project = projects.create_project(projects.ProjectSpec(name="crowd", dataset=small_dataset, annotators_per_video=3))
    for annotator in annotators:
        projects.add_member(project, annotator)
    with thread_database() as use:
        barrier = threading.Barrier(len(annotators))
        results = _race(project.pk, [a.pk for a in annotators], use, barrier=barrier)
        rows = _assigned_rows(use, project.pk)
    taken = [video for video, _ in results.values() if video is not None]
    assert len(taken) == 8  # 3 videos x 3 slots = 9 >= 8: everybody gets one
    per_video = {}
    for video, annotator in rows["assignments"]:
        per_video.setdefault(video, []).append(annotator)
    assert all(len(who) <= 3 and len(who) == len(set(who)) for who in per_video.values())
    assert rows["counters"] == {video: len(who) for video, who in per_video.items()} | {
        pk: 0 for pk in rows["counters"] if pk not in per_video
    }


def test_presented_sentences_are_exactly_those_of_the_presented_captions(make_project, annotator_accounts):
    """The sentences are read by a query compiled once (through the caption's video and the project's systems):
    for every video and for a project of fewer systems they are the presented captions' own, in order."""
    from annotation_site.corpus.models import Sentence

    [annotator] = annotator_accounts(1)
    full = make_project(annotators=[annotator], annotators_per_video=1)
    fewer = make_project(name="two", annotators=[annotator], annotators_per_video=1, systems=["Alpha", "Gamma"])
    for project, systems in ((full, 3), (fewer, 2)):
        while (found := assigning.next_assignment(project, annotator)) is not None:
            presented = assigning.presented_captions(found)
            assert len(presented) == systems
            for caption, sentences in presented:
                assert sentences == list(Sentence.objects.filter(caption=caption).order_by("index"))
                assert sentences and all(s.caption_id == caption.pk for s in sentences)
            Assignment.objects.filter(pk=found.pk).update(status=Assignment.Status.SUBMITTED)


def _position_by_lists(assignment):
    """position_of as it was: the annotator's assignments as a list, and assignable_count."""
    mine = list(
        Assignment.objects.filter(project_id=assignment.project_id, annotator_id=assignment.annotator_id)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)
    )
    return (
        mine.index(assignment.pk) + 1,
        len(mine) + assigning.assignable_count(assignment.project, assignment.annotator),
        False,
    )


def test_position_of_is_one_query_and_agrees_with_the_lists(
    make_project, annotator_accounts, django_assert_num_queries
):
    annotators = annotator_accounts(3)
    project = make_project(annotators=annotators, annotators_per_video=2)
    other = make_project(name="other", annotators=annotators, annotators_per_video=1)
    taken = []
    for _ in range(3):
        for annotator in annotators:
            for unit in (project, other):
                found = assigning.next_assignment(unit, annotator)
                if found is not None:
                    taken.append(found)
                    Assignment.objects.filter(pk=found.pk).update(status=Assignment.Status.SUBMITTED)
            for found in taken:
                expected = _position_by_lists(found)
                with django_assert_num_queries(1):
                    assert assigning.position_of(found) == expected
    assert {assigning.position_of(found)[0] for found in taken} == {1, 2}  # 6 slots of "fact", 2 each


def test_next_assignment_locks_the_member_row_with_its_compiled_query(make_project, annotator_accounts):
    """The member lock and the open-assignment read are compiled once per connection: the lock stays a
    ``FOR UPDATE`` of the member's row (PostgreSQL), the second request finds the open assignment again."""
    from django.test.utils import CaptureQueriesContext

    a, b = annotator_accounts(2)
    project = make_project(annotators=[a, b])
    first = assigning.next_assignment(project, a)
    with CaptureQueriesContext(connection) as captured:
        assert assigning.next_assignment(project, a) == first
        assert assigning.next_assignment(project, b) not in (None, first)
    locks = [s for s in (sent_sql(q["sql"]) for q in captured.captured_queries) if "projectmember" in s]
    assert len(locks) == 2
    if connection.vendor == "postgresql":
        assert all('FOR UPDATE OF "factuality_projectmember"' in sql for sql in locks)
