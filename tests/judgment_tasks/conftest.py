"""Fixtures of the judgment-task tests: a dataset of videos imported the way users import one, tasks made from
the presets, items written as JSONL, member annotators, and helpers that work through a task as annotators do
(next item, then an answer built by a function of the item)."""

import json
import uuid

import pytest

from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle
from annotation_site.judgment_tasks import imports, services
from annotation_site.judgment_tasks.answers import submit
from annotation_site.judgment_tasks.assignment import next_assignment


def lines(*objects):
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def question_quality_items(n):
    """``n`` items of the fifa-question-quality preset (q0, q1, ... on videos c1, c2, ...): three facts, two
    questions."""
    return [
        {
            "item_id": f"q{i}",
            "video_id": f"c{i + 1}",
            "tuples": ["a man", "a dog", "a ball"],
            "questions": ["Is there a man?", "Is there a dog?"],
        }
        for i in range(n)
    ]


@pytest.fixture
def videos(db):
    """Dataset "clips" with videos c1..c40 (declared, no files)."""
    text = lines(*[{"type": "video", "video_id": f"c{i}", "duration": 5.0} for i in range(1, 41)])
    return import_bundle(jsonl.read(text, filename="clips.jsonl"), name="clips", source_format="jsonl").dataset


@pytest.fixture
def make_task(videos):
    def make(name, preset, items, *, members=(), per_item=3, definition=None):
        task = services.create_task(
            name=name, dataset=videos, preset=preset, definition=definition, annotators_per_item=per_item
        )
        imports.import_items(task, lines(*items), filename=f"{name}.jsonl")
        for annotator in members:
            services.add_member(task, annotator)
        return task

    return make


def work_through(task, annotator, answer_for, *, confirm=False):
    """Take items one by one and answer each with ``answer_for(item) -> answers``; returns the items done."""
    done = []
    while True:
        assignment = next_assignment(task, annotator)
        if assignment is None:
            return done
        submit(
            assignment,
            answer_for(assignment.item),
            client_uuid=uuid.uuid4(),
            confirm=confirm,
            time_spent=30,
            video_played=True,
        )
        done.append(assignment.item)
