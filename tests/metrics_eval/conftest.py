"""Fixtures of the metrics_eval tests: a tiny labelled dataset (imported from JSONL, as users import), scores
imported through the score importer, Java for pycocoevalcap, and eager Celery tasks on demand."""

import json

import numpy as np
import pytest

from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle
from metrics_eval import services, text_metrics
from metrics_eval.models import MetricScore
from tests.conftest import require

# Four videos, three systems. Captions are lower-cased and space-tokenised like FactVC's; every video has one or
# two references. Paragraph scores, sentence errors and spans are chosen so the factuality scores are easy to
# check by hand (see test_human.py).
VIDEOS = {
    "vid-a": ["A man rides a brown horse across a field.", "A rider on a horse crosses the grass."],
    "vid-b": ["The cat is on the mat."],
    "vid-c": ["A woman slices onions in a kitchen and puts them in a pan."],
    "vid-d": ["Two children play football in a park.", "Kids kick a ball on the grass."],
}
CAPTIONS = [
    ("vid-a", "Alpha", 5, [("a man rides a horse across a field .", 0, [])]),
    ("vid-a", "Beta", 3, [("a man rides a bike .", 1, [[4, 5]]), ("he waves at the camera .", 0, [])]),
    ("vid-a", "Gamma", 1, [("a woman swims in the sea .", 1, [[1, 2], [5, 6]])]),
    ("vid-b", "Alpha", 4, [("the cat sat on the mat .", 0, [])]),
    ("vid-b", "Beta", 2, [("the dog sat on the mat .", 1, [[1, 2]])]),
    ("vid-b", "Gamma", 2, [("a dog is on a chair .", 1, [[1, 2]]), ("it sleeps .", 0, [])]),
    ("vid-c", "Alpha", 5, [("a woman slices onions in a kitchen .", 0, []), ("she puts them in a pan .", 0, [])]),
    ("vid-c", "Beta", 4, [("a woman cuts vegetables .", 0, []), ("she cooks them in a pot .", 1, [[5, 6]])]),
    ("vid-c", "Gamma", 1, [("a man paints a wall .", 1, [[1, 2], [3, 5]])]),
    ("vid-d", "Alpha", 3, [("children play football in a park .", 0, []), ("a dog runs .", 1, [[1, 2]])]),
    ("vid-d", "Beta", 5, [("two kids kick a ball on the grass .", 0, [])]),
    ("vid-d", "Gamma", 2, [("a man plays tennis .", 1, [[1, 2], [3, 4]])]),
]


def tiny_jsonl():
    lines = [{"type": "video", "video_id": v} for v in VIDEOS]
    for video, refs in VIDEOS.items():
        lines += [
            {"type": "reference", "video_id": video, "reference_set": f"gt_{i + 1}", "text": text}
            for i, text in enumerate(refs)
        ]
    for video, system, score, sentences in CAPTIONS:
        lines.append(
            {
                "video_id": video,
                "system": system,
                "paragraph_score": score,
                "sentences": [{"text": t, "error": e, "spans": s} for t, e, s in sentences],
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


def import_jsonl(text, name):
    return import_bundle(jsonl.read(text, filename=f"{name}.jsonl"), name=name, source_format="jsonl").dataset


@pytest.fixture
def tiny_dataset(db):
    """Dataset "tiny": 4 videos x 3 systems, references, factuality labels (label set "imported")."""
    return import_jsonl(tiny_jsonl(), "tiny")


def stored_scores(dataset, name):
    """{(video id, system name): score} of metric ``name`` as stored for ``dataset``."""
    return {
        (s.caption.video.external_id, s.caption.system.name): s.score
        for s in MetricScore.objects.filter(metric__dataset=dataset, metric__name=name).select_related(
            "caption__video", "caption__system"
        )
    }


def scores_csv(dataset_rows, metrics, seed=0):
    """A long CSV of made-up scores (``metrics``: name -> function(rng, paragraph score) -> score)."""
    rng = np.random.default_rng(seed)
    lines = ["video_id,system,metric,score"]
    for video, system, score in dataset_rows:
        for name, make in metrics.items():
            lines.append(f"{video},{system},{name},{make(rng, score):.6f}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def tiny_scores(tiny_dataset):
    """Two imported metrics on the tiny dataset: "good" follows the paragraph score, "noise" does not."""
    rows = [(video, system, score) for video, system, score, _ in CAPTIONS]
    text = scores_csv(rows, {"good": lambda rng, s: s + rng.normal(scale=0.5), "noise": lambda rng, s: rng.normal()})
    services.import_scores(tiny_dataset, text, "scores.csv")
    return tiny_dataset


@pytest.fixture(scope="session")
def java():
    ok, detail = text_metrics.java_available()
    require(ok, f"Java for pycocoevalcap's tokenizer and METEOR ({detail})")


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in the calling thread for this test, whatever CELERY_BROKER_URL says (the worker test in
    test_tasks.py covers the broker)."""
    from annotation_site.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved
