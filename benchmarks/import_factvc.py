#!/usr/bin/env python
"""Benchmark: import (validate + write) and export of a full FactVC release folder.

Target (issue #2): importing the full ActivityNet-Fact annotation takes under 5 s on the project machine.

    .venv/bin/python benchmarks/import_factvc.py                    # ../shared/datasets/factvc/activitynet
    .venv/bin/python benchmarks/import_factvc.py --generate 2000    # a generated folder of 2,000 videos
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval .venv/bin/python benchmarks/import_factvc.py

Runs against a fresh temporary SQLite database unless DATABASE_URL is set (then it uses that database and
removes the benchmark dataset afterwards). Prints one line per phase and the verdict.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TARGET_SECONDS = 5.0
WORDS = "a man woman group people is are playing standing the on in of with ball court kitchen cuts onion".split()


def generate_folder(path, n_videos, n_systems=6, seed=0):
    """A FactVC-layout folder with the shape of ActivityNet-Fact (about 3.2 sentences of 13 words per caption)."""
    rng = random.Random(seed)
    data = {}
    for v in range(n_videos):
        video = data.setdefault(f"v_{v:011d}", {})
        for s in range(n_systems):
            sentences = []
            for _ in range(rng.choice((2, 3, 3, 4, 5))):
                words = [rng.choice(WORDS) for _ in range(rng.randint(6, 20))] + ["."]
                if rng.random() < 0.5:
                    start = rng.randrange(len(words) - 1)
                    end = min(len(words) - 1, start + rng.randint(1, 3))
                    words[start] = "[" + words[start]
                    words[end - 1] += "]"
                sentences.append(" ".join(words))
            video[f"System{s}"] = {"paragraph_score": rng.randint(1, 5), "sentences": sentences}
    path.mkdir(parents=True, exist_ok=True)
    (path / "factuality_annotation.json").write_text(json.dumps(data, indent=4))
    (path / "vids.txt").write_text("\n".join(data) + "\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "folder", nargs="?", default=str(REPO.parent / "shared" / "datasets" / "factvc" / "activitynet")
    )
    parser.add_argument("--generate", type=int, metavar="N", help="benchmark a generated folder of N videos instead")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from da_common import django_workdir

    workdir = django_workdir()
    from django.core.management import call_command
    from django.db import connection

    from annotation_site.corpus.models import Dataset
    from annotation_site.interchange import formats
    from annotation_site.interchange.services import default_label_set, export_bundle, import_bundle

    folder = generate_folder(workdir / "generated", args.generate) if args.generate else Path(args.folder)
    if not (folder / "factuality_annotation.json").is_file():
        sys.exit(f"no factuality_annotation.json in {folder} (use --generate N for a generated folder)")
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; folder: {folder}")

    name = "benchmark-import"
    best = {}
    for run in range(args.repeat):
        timings = {}
        started = time.perf_counter()
        bundle = formats.read_path("factvc", folder)
        timings["read + validate"] = time.perf_counter() - started
        mark = time.perf_counter()
        result = import_bundle(bundle, name=name, source_format="factvc", replace=True)
        timings["write (one transaction)"] = time.perf_counter() - mark
        timings["import total"] = time.perf_counter() - started
        mark = time.perf_counter()
        text = formats.render("factvc", export_bundle(result.dataset, label_set=default_label_set(result.dataset)))
        timings["export"] = time.perf_counter() - mark
        exact = text.encode() == (folder / "factuality_annotation.json").read_bytes()
        for key, value in timings.items():
            best[key] = min(best.get(key, value), value)
        print(f"run {run + 1}: " + ", ".join(f"{k} {v:.3f} s" for k, v in timings.items()) + f", exact={exact}")
    Dataset.objects.filter(name=name).delete()
    counts = ", ".join(f"{n} {what}" for what, n in bundle.counts().items())
    print(f"size: {counts}")
    print(f"best of {args.repeat}: " + ", ".join(f"{k} {v:.3f} s" for k, v in best.items()))
    verdict = "PASS" if best["import total"] < TARGET_SECONDS else "FAIL"
    print(f"target: import under {TARGET_SECONDS:.0f} s -> {verdict} ({best['import total']:.2f} s)")


if __name__ == "__main__":
    main()
