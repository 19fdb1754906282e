#!/usr/bin/env python
"""Benchmark: importing a DA judgments file (``da_import_judgments``, the import page and the API share the code):
check the whole file, then write it in one transaction and compute QC. The page and the API do it inside the
request, so a file at their limit (``CAPTIONEVAL_MAX_DA_UPLOAD_BYTES``, 10 MiB) must import well within gunicorn's
timeout (``GUNICORN_TIMEOUT``, 120 s).

    .venv/bin/python benchmarks/da_import.py                    # a file of about that limit
    .venv/bin/python benchmarks/da_import.py --megabytes 25

Measured 2026-11-28 on the 2-core project machine (quiet): 10 MiB (236,400 judgments) 26 s on SQLite, 31 s on
PostgreSQL; 25 MiB 65 s; 49 MiB (the general upload limit) 130 s, past the timeout: hence the DA limit.
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_NAME .venv/bin/python benchmarks/da_import.py

The file is TRECVID-shaped: HITs of 100 items (10 original/degraded pairs, 5 repeats, system items), 3 workers per
HIT, 6 systems and a human set. Against DATABASE_URL it uses that database and removes what it made afterwards.
Prints the file's size and rows, the time of the checks and of the writes (with QC), and the verdict.
"""

import argparse
import io
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
HEADER = "worker_id,hit_id,item_id,system,video_id,item_type,control_of,score\n"
SYSTEMS = [f"System{k}" for k in range(6)]


def judgments_file(megabytes, seed=0):
    """(text, rows): HITs of 100 items rated by 3 workers each, until the text reaches ``megabytes``."""
    rng = random.Random(seed)
    parts, size, rows, hit = [HEADER], len(HEADER), 0, 0
    while size < megabytes * 1024 * 1024:
        hit += 1
        items = []
        for k in range(10):
            items.append((f"o{k}", "refs", f"v{hit}-{k}", "original", f"d{k}"))
            items.append((f"d{k}", "refs", f"v{hit}-{k}", "degraded", f"o{k}"))
        for k in range(75):
            items.append((f"s{k}", SYSTEMS[k % len(SYSTEMS)], f"v{hit}-{10 + k // len(SYSTEMS)}", "system", ""))
        for k in range(5):
            items.append((f"r{k}", SYSTEMS[k % len(SYSTEMS)], f"v{hit}-{10 + k // len(SYSTEMS)}", "repeat", f"s{k}"))
        for w in range(3):
            worker = f"w{hit:05d}-{w}"
            lines = [
                f"{worker},h{hit},{item},{system},{video},{kind},{control},{rng.randint(0, 100)}\n"
                for item, system, video, kind, control in items
            ]
            parts += lines
            size += sum(len(line) for line in lines)
            rows += len(lines)
    return "".join(parts), rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--megabytes", type=float, default=None, help="file size (default: the page's and the API's limit)"
    )
    args = parser.parse_args()

    from da_common import django_workdir

    django_workdir()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from annotation_site.corpus.models import Dataset
    from assessment import csv_import
    from assessment.models import HIT, Campaign, Worker

    call_command("migrate", verbosity=0)
    limit = settings.CAPTIONEVAL_MAX_DA_UPLOAD_BYTES / (1024 * 1024)
    megabytes = args.megabytes or limit * 0.98
    text, rows = judgments_file(megabytes)
    name = "benchmark-da-import"
    timeout = 120

    def clean():
        # HITs a few hundred at a time: deleting the campaign at once makes Django clear the items' control_of
        # links with one UPDATE naming every item, over SQLite's limit of bound variables at some 250,000 items
        hits = list(HIT.objects.filter(campaign__name=name).values_list("pk", flat=True))
        for start in range(0, len(hits), 500):
            HIT.objects.filter(pk__in=hits[start : start + 500]).delete()
        Campaign.objects.filter(name=name).delete()
        Dataset.objects.filter(name=name).delete()
        Worker.objects.filter(external_id__regex=r"^w[0-9]{5}-[0-9]$", source="import").delete()

    clean()
    print(
        f"database: {connection.vendor}; {len(text) / 1024 / 1024:.1f} MiB, {rows:,} judgments (limit {limit:.0f} MiB)"
    )
    original = csv_import.validate
    phases = {}

    def timed_validate(*a, **k):
        started = time.perf_counter()
        checked = original(*a, **k)
        phases["check"] = time.perf_counter() - started
        return checked

    csv_import.validate = timed_validate
    try:
        started = time.perf_counter()
        summary = csv_import.import_judgments(name, io.StringIO(text, newline=""), "benchmark.csv")
        total = time.perf_counter() - started
    finally:
        csv_import.validate = original
    print(
        f"imported {summary['judgments']:,} judgments, {summary['hits']:,} HITs, {summary['workers']:,} workers: "
        f"checks {phases['check']:.1f} s, writes and QC {total - phases['check']:.1f} s, total {total:.1f} s"
    )
    print(
        f"within gunicorn's default timeout ({timeout} s) with room to spare (under half): "
        f"{'PASS' if total < timeout / 2 else 'FAIL'} ({total:.1f} s)"
    )
    clean()


if __name__ == "__main__":
    main()
