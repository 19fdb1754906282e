#!/usr/bin/env python
"""Benchmark: importing the items of a judgment task (validate the whole file, then write it in one
transaction), and the answers of a VideoQA model for them.

Target (issue #10): 10,000 items with 20 list elements each import in under 10 s on the project machine.

    .venv/bin/python benchmarks/task_import.py                       # a temporary SQLite database
    .venv/bin/python benchmarks/task_import.py --items 2000 --elements 50
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_NAME .venv/bin/python benchmarks/task_import.py

The items are FIFA fact-verification items (20 yes/no questions each, ``--preset`` for another). Against
DATABASE_URL it uses that database and removes what it made afterwards. Prints one line per run and phase,
the best of the runs, and the verdict.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TARGET_SECONDS = 10.0
WORDS = "is there a man woman dog ball kitchen red blue running jumping holding the on in near".split()


def text(rng, low=5, high=12):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + "?"


def item_lines(definition, n_items, n_elements, videos, seed=0):
    rng = random.Random(seed)
    lines = []
    for i in range(n_items):
        obj = {"item_id": f"item-{i:06d}", "video_id": videos[i % len(videos)], "subset": ["T2V", "V2T"][i % 2]}
        for field in definition["fields"]:
            obj[field["name"]] = text(rng, 10, 30)
        for entry in definition["lists"]:
            obj[entry["name"]] = [text(rng) for _ in range(n_elements)]
        lines.append(json.dumps(obj))
    return "\n".join(lines) + "\n"


def answer_lines(n_items, n_elements, seed=1):
    rng = random.Random(seed)
    return "".join(
        json.dumps(
            {
                "item_id": f"item-{i:06d}",
                "model": "Video-LLaVA",
                "answers": {"answer": [rng.choice(("yes", "no")) for _ in range(n_elements)]},
            }
        )
        + "\n"
        for i in range(n_items)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--elements", type=int, default=20, help="elements per list (default 20)")
    parser.add_argument("--preset", default="fifa-verification")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from da_common import django_workdir

    django_workdir()
    from django.core.management import call_command
    from django.db import connection

    from annotation_site.corpus.models import Dataset, Video
    from annotation_site.judgment_tasks import imports, services

    call_command("migrate", verbosity=0)
    name = "benchmark-tasks"
    Dataset.objects.filter(name=name).delete()
    dataset = Dataset.objects.create(name=name)
    videos = [f"v{i:05d}" for i in range(2000)]
    Video.objects.bulk_create([Video(dataset=dataset, external_id=v, position=i) for i, v in enumerate(videos)])
    print(f"database: {connection.vendor}; {args.items:,} items x {args.elements} elements per list ({args.preset})")
    best = {}
    try:
        for run in range(args.repeat):
            task = services.create_task(name=f"{name}-{run}", dataset=dataset, preset=args.preset)
            items = item_lines(task.definition, args.items, args.elements, videos, seed=run)
            answers = answer_lines(args.items, args.elements) if args.preset == "fifa-verification" else None
            timings = {}
            started = time.perf_counter()
            counts = imports.import_items(task, items, filename="items.jsonl")
            timings["items: validate + write"] = time.perf_counter() - started
            if answers:
                mark = time.perf_counter()
                imports.import_model_answers(task, answers, filename="answers.jsonl")
                timings["model answers"] = time.perf_counter() - mark
            for key, value in timings.items():
                best[key] = min(best.get(key, value), value)
            print(
                f"run {run + 1}: {counts['items']:,} items, {counts['elements']:,} elements, {len(items) / 1e6:.1f} MB; "
                + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
            )
            task.delete()
    finally:
        Dataset.objects.filter(name=name).delete()
    print(f"best of {args.repeat}: " + ", ".join(f"{k} {v:.2f} s" for k, v in best.items()))
    seconds = best["items: validate + write"]
    print(
        f"target: {args.items:,} items imported under {TARGET_SECONDS:.0f} s -> "
        f"{'PASS' if seconds < TARGET_SECONDS else 'FAIL'} ({seconds:.2f} s)"
    )


if __name__ == "__main__":
    main()
