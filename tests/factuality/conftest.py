"""Fixtures of the factuality tests: a small dataset imported the way users import one (JSONL), invited
annotators with accounts, projects, answers built from compact descriptions, and a database for thread races."""

import json
import shutil
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection, connections

from annotation_site.factuality import projects
from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.judgments import submit
from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle


def lines(*objects):
    return "".join(json.dumps(obj) + "\n" for obj in objects)


# Three videos, three systems; each caption has one to three sentences (tokens: whitespace split).
SMALL = lines(
    {"type": "video", "video_id": "v1", "duration": 10.0},
    {"type": "video", "video_id": "v2", "duration": 8.0},
    {"type": "video", "video_id": "v3", "duration": 6.0},
    {"video_id": "v1", "system": "Alpha", "sentences": ["a man is cooking in a kitchen .", "he cuts an onion ."]},
    {"video_id": "v1", "system": "Beta", "sentences": ["a woman is riding a horse ."]},
    {"video_id": "v1", "system": "Gamma", "sentences": ["a man stands .", "he holds a knife .", "UNK is playing ."]},
    {"video_id": "v2", "system": "Alpha", "sentences": ["a dog runs on the beach .", "it catches a frisbee ."]},
    {"video_id": "v2", "system": "Beta", "sentences": ["a cat sleeps on a sofa ."]},
    {"video_id": "v2", "system": "Gamma", "sentences": ["a dog is running .", "the man throws a ball ."]},
    {"video_id": "v3", "system": "Alpha", "sentences": ["a girl plays the piano ."]},
    {"video_id": "v3", "system": "Beta", "sentences": ["a boy plays a guitar .", "he sings loudly ."]},
    {"video_id": "v3", "system": "Gamma", "sentences": ["a girl is dancing ."]},
)


def import_jsonl(text, name):
    return import_bundle(jsonl.read(text, filename=f"{name}.jsonl"), name=name, source_format="jsonl").dataset


@pytest.fixture
def small_dataset(db):
    return import_jsonl(SMALL, "small")


@pytest.fixture
def make_project(small_dataset):
    def make(name="fact", annotators=(), **options):
        spec = projects.ProjectSpec(name=name, dataset=options.pop("dataset", small_dataset), **options)
        project = projects.create_project(spec)
        for annotator in annotators:
            projects.add_member(project, annotator)
        return project

    return make


def answer(presented, scores, errors=None):
    """An answer for ``presented`` (as shown): ``scores`` per paragraph; ``errors``: {(p, s): [(start, end)]}
    for flagged sentences (an empty list: flagged without spans)."""
    errors = errors or {}
    return {
        "paragraphs": [
            {
                "score": scores[p],
                "sentences": [
                    {"error": int((p, s) in errors), "spans": [list(span) for span in errors.get((p, s), [])]}
                    for s in range(len(sentences))
                ],
            }
            for p, (_, sentences) in enumerate(presented)
        ]
    }


def by_system(presented):
    """{system name: paragraph index} of a presented video (tests only: annotators never see names)."""
    return {caption.system.name: i for i, (caption, _) in enumerate(presented)}


def complete_video(project, annotator, plan, *, uuid=None):
    """Take the annotator's next video and answer it by system: ``plan(video_id) -> {system: (score,
    {sentence index: [(start, end)]})}``. Returns the submission, or None when no video is left."""
    import uuid as uuid_module

    assignment = next_assignment(project, annotator)
    if assignment is None:
        return None
    presented = presented_captions(assignment)
    where = by_system(presented)
    wanted = plan(assignment.project_video.video.external_id)
    scores = [None] * len(presented)
    errors = {}
    for system, (score, spans) in wanted.items():
        p = where[system]
        scores[p] = score
        for s, sentence_spans in spans.items():
            errors[(p, s)] = sentence_spans
    return submit(
        assignment,
        presented,
        answer(presented, scores, errors),
        client_uuid=uuid or uuid_module.uuid4(),
        time_spent=42.5,
        video_played=True,
    ).submission


@contextmanager
def thread_database():
    """Yields ``use()``, to call first thing in each racing thread, so that it talks to a database where writers
    really compete: PostgreSQL as configured; for SQLite, a file copy of the test database opened with the
    production options (WAL, IMMEDIATE transactions, busy timeout). Django's in-memory test database uses a
    shared cache whose table locks fail at once instead of waiting, which production never does."""
    if connection.vendor != "sqlite":

        def use():
            return None

        yield use
        return
    from django.db.backends.sqlite3.base import DatabaseWrapper

    folder = tempfile.mkdtemp(prefix="captioneval-race-")
    path = Path(folder) / "race.sqlite3"
    connection.ensure_connection()
    import sqlite3

    target = sqlite3.connect(path)
    connection.connection.backup(target)
    target.execute("PRAGMA journal_mode=WAL")  # once, before the racing threads connect (see sqlite_wal.py)
    target.close()
    settings_dict = dict(connection.settings_dict, NAME=str(path))
    settings_dict["OPTIONS"] = dict(settings_dict.get("OPTIONS", {}), transaction_mode="IMMEDIATE", timeout=20)

    def use():  # each thread closes its connection when done (connections.close_all())
        wrapper = DatabaseWrapper(settings_dict, alias="default")
        connections["default"] = wrapper
        return wrapper

    try:
        yield use
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def race(work, calls, *, use=None, wait_timeout=30, join_timeout=120):
    """Runs ``work(ready, *args)`` for each ``args`` of ``calls`` in a thread of its own: each thread calls ``use()``
    first (thread_database's), ``work`` calls ``ready()`` right before the step that races (all threads are
    released together) and the thread closes its connections at the end. Returns (each call's result in the
    order of ``calls``, None where it raised; the exceptions raised)."""
    barrier = threading.Barrier(len(calls))
    results, errors = {}, []

    def run(index, args):
        if use is not None:
            use()
        try:
            results[index] = work(lambda: barrier.wait(timeout=wait_timeout), *args)
        except BaseException as exc:  # noqa: BLE001 - the caller asserts there are none (pytest.fail's too)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, args)) for i, args in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=join_timeout)
    return [results.get(i) for i in range(len(calls))], errors


def in_thread(use, read):
    """``read()``'s result, read in a thread after ``use()`` (on SQLite the racing database is a file copy that only
    the threads open)."""
    out = {}

    def run():
        use()
        try:
            out["value"] = read()
        finally:
            connections.close_all()

    reader = threading.Thread(target=run)
    reader.start()
    reader.join()
    return out["value"]


# What each annotator answers, by video and system: (paragraph score, {sentence index: [spans]}).
PLANS = {
    "ann1": {
        "v1": {
            "Alpha": (4, {1: [(2, 4)]}),
            "Beta": (1, {0: [(1, 2), (4, 6)]}),
            "Gamma": (2, {1: [(3, 4)], 2: [(0, 1)]}),
        },
        "v2": {"Alpha": (5, {}), "Beta": (1, {0: [(1, 2)]}), "Gamma": (3, {1: [(1, 2), (3, 5)]})},
        "v3": {"Alpha": (4, {0: [(4, 5)]}), "Beta": (2, {0: [(1, 2), (3, 5)], 1: [(1, 3)]}), "Gamma": (5, {})},
    },
    "ann2": {
        "v1": {"Alpha": (4, {1: [(3, 4)]}), "Beta": (1, {0: [(1, 2), (4, 6)]}), "Gamma": (3, {2: [(0, 1)]})},
        "v2": {"Alpha": (5, {}), "Beta": (2, {0: [(1, 2)]}), "Gamma": (3, {1: [(1, 2)]})},
        "v3": {"Alpha": (5, {}), "Beta": (1, {0: [(1, 2), (3, 5)], 1: [(1, 3)]}), "Gamma": (4, {0: [(3, 4)]})},
    },
    "ann3": {
        "v1": {"Alpha": (3, {1: [(2, 4)]}), "Beta": (2, {0: [(4, 6)]}), "Gamma": (2, {1: [(3, 4)], 2: [(0, 1)]})},
        "v2": {"Alpha": (4, {1: [(3, 4)]}), "Beta": (1, {0: [(1, 2)]}), "Gamma": (4, {1: [(3, 5)]})},
        "v3": {"Alpha": (4, {0: [(4, 5)]}), "Beta": (2, {0: [(3, 5)]}), "Gamma": (5, {})},
    },
}


@pytest.fixture
def completed(make_project, annotator_accounts):
    """Project "anet-mini" on the small dataset, every video judged by ann1..ann3 as PLANS says."""
    annotators = annotator_accounts(3)
    project = make_project(name="anet-mini", annotators=annotators)
    for annotator in annotators:
        plan = PLANS[annotator.user.username]
        while complete_video(project, annotator, lambda video_id, plan=plan: plan[video_id]) is not None:
            pass
    return project
