#!/usr/bin/env python
"""Benchmark: a factuality project of ActivityNet-Fact size, annotated by three simulated annotators.

Imports the FactVC release (or a generated folder), creates a project over all its videos and systems with three
annotators per video, and has three simulated annotators judge every video through the same services the pages
use (next video, submit), answering from the release's labels with noise. Prints the time and query count of
each step (per video and in total), the aggregation, the agreement report (alpha per level), the raw-label
export / import and the FactVC export.

    .venv/bin/python benchmarks/factuality_project.py                  # ../shared/datasets/factvc/activitynet
    .venv/bin/python benchmarks/factuality_project.py --generate 300   # a generated folder of 300 videos
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval .venv/bin/python benchmarks/factuality_project.py

Runs against a fresh temporary SQLite database unless DATABASE_URL is set (then it uses that database and
removes what it made afterwards).
"""

import argparse
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def noisy_answer(presented, gold, seed):
    """An annotator's answer: the release's labels with some disagreement (scores off by one, flipped
    sentences, spans a word longer or shorter); the same for the same annotator whatever the order."""
    scores, errors, spans = gold
    paragraphs = []
    for caption, sentences in presented:
        rng = random.Random(seed * 1_000_003 + caption.pk)
        score = scores.get(caption.pk, 3)
        if rng.random() < 0.3:
            score = min(5, max(1, score + rng.choice((-1, 1))))
        out = []
        for sentence in sentences:
            error = errors.get(sentence.pk, False)
            marked = list(spans.get(sentence.pk, []))
            if rng.random() < 0.1:
                error = not error
                marked = [] if not error else [(0, 1)]
            if error and marked and rng.random() < 0.3:
                start, end = marked[0]
                marked[0] = (start, min(len(sentence.tokens), end + 1))
            if error and not marked:
                marked = [(0, 1)]
            out.append({"error": int(error), "spans": [list(s) for s in marked] if error else []})
        paragraphs.append({"score": score, "sentences": out})
    return {"paragraphs": paragraphs}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "folder", nargs="?", default=str(REPO.parent / "shared" / "datasets" / "factvc" / "activitynet")
    )
    parser.add_argument("--generate", type=int, metavar="N", help="use a generated folder of N videos instead")
    args = parser.parse_args()

    from da_common import django_workdir

    workdir = django_workdir()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from import_factvc import generate_folder

    from annotation_site.corpus.models import Dataset
    from annotation_site.factuality import aggregation, agreement, judgments, projects, raw_labels
    from annotation_site.factuality.assignment import next_assignment, presented_captions
    from annotation_site.factuality.models import ErrorSpan, ParagraphLabel, Project, SentenceLabel
    from annotation_site.interchange import formats
    from annotation_site.interchange.services import import_bundle, project_factvc_text

    folder = generate_folder(workdir / "generated", args.generate) if args.generate else Path(args.folder)
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; folder: {folder}")
    name = "benchmark-factuality"
    Project.objects.filter(name__in=[name, name + "-copy"]).delete()
    Dataset.objects.filter(name=name).delete()
    dataset = import_bundle(
        formats.read_path("factvc", folder, youtube=False), name=name, source_format="factvc"
    ).dataset
    gold_set = dataset.label_sets.get()
    gold = (
        dict(ParagraphLabel.objects.filter(label_set=gold_set).values_list("caption_id", "score")),
        dict(SentenceLabel.objects.filter(label_set=gold_set).values_list("sentence_id", "error")),
        {},
    )
    for sentence_id, start, end in ErrorSpan.objects.filter(sentence_label__label_set=gold_set).values_list(
        "sentence_label__sentence_id", "start", "end"
    ):
        gold[2].setdefault(sentence_id, []).append((start, end))

    started = time.perf_counter()
    project = projects.create_project(projects.ProjectSpec(name=name, dataset=dataset))
    print(
        f"create project: {project.project_videos.count()} videos, {project.systems.count()} systems, "
        f"{time.perf_counter() - started:.3f} s"
    )
    User = get_user_model()
    annotators = []
    for i in range(3):
        username = f"bench-annotator-{i}"
        User.objects.filter(username=username).delete()
        User.objects.create_user(username, password="x")
        annotators.append(projects.invite_to_project(project, username).annotator)

    take_times, submit_times, take_queries, submit_queries = [], [], set(), set()
    page_queries = set()
    client = Client(HTTP_HOST="localhost")
    for seed, annotator in enumerate(annotators, start=1):
        client.force_login(annotator.user)
        while True:
            reset_queries()  # the query log keeps 9000 entries: counts are taken on a fresh one
            mark = time.perf_counter()
            with CaptureQueriesContext(connection) as taking:
                found = next_assignment(project, annotator)
            take_times.append(time.perf_counter() - mark)
            take_queries.add(len(taking))
            if found is None:
                break
            if len(submit_times) % 50 == 0:
                reset_queries()
                with CaptureQueriesContext(connection) as page:
                    client.get(f"/factuality/assignments/{found.pk}/")
                page_queries.add(len(page))
            presented = presented_captions(found)
            data = noisy_answer(presented, gold, seed)
            reset_queries()
            mark = time.perf_counter()
            with CaptureQueriesContext(connection) as submitting:
                judgments.submit(found, presented, data, client_uuid=uuid.uuid4(), confirm=True, time_spent=60)
            submit_times.append(time.perf_counter() - mark)
            submit_queries.add(len(submitting))
    reset_queries()
    ms = lambda values: f"median {1000 * statistics.median(values):.1f} ms, max {1000 * max(values):.1f} ms"  # noqa: E731
    print(f"next video ({len(take_times)} requests): {ms(take_times)}; queries {sorted(take_queries)}")
    print(f"submit ({len(submit_times)} videos): {ms(submit_times)}; queries {sorted(submit_queries)}")
    print(f"annotation page: queries {sorted(page_queries)}")

    mark = time.perf_counter()
    run = aggregation.write_label_set(project, aggregation.aggregate_project(project))
    print(
        f"aggregate + write label set: {time.perf_counter() - mark:.3f} s ({run.captions} captions, "
        f"{run.sentences} sentences, {run.spans} spans, {run.errors_without_spans} errors without spans)"
    )
    for word_units in ("tokens", "words"):
        mark = time.perf_counter()
        with CaptureQueriesContext(connection) as reporting:
            report = agreement.project_report(project, word_units=word_units)
        summary = agreement.command_summary(agreement.jsonable(report))
        print(
            f"agreement report (word units: {word_units}): {time.perf_counter() - mark:.3f} s, {len(reporting)} queries"
        )
        for level, values in summary.items():
            print(
                f"  {level}: "
                + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items())
            )
    mark = time.perf_counter()
    text = raw_labels.export_lines(project)
    print(f"raw export: {time.perf_counter() - mark:.3f} s, {text.count(chr(10))} lines, {len(text) / 1e6:.1f} MB")
    mark = time.perf_counter()
    _, counts = raw_labels.import_lines(text, project_name=name + "-copy", dataset=dataset)
    print(f"raw import (validate + one transaction): {time.perf_counter() - mark:.3f} s, {counts}")
    mark = time.perf_counter()
    exported = project_factvc_text(project)
    print(f"factvc export: {time.perf_counter() - mark:.3f} s, {len(exported) / 1e6:.2f} MB")

    Project.objects.filter(name__in=[name, name + "-copy"]).delete()
    Dataset.objects.filter(name=name).delete()
    User.objects.filter(username__startswith="bench-annotator-").delete()


if __name__ == "__main__":
    main()
