#!/usr/bin/env python
"""Run the load benchmark once per server configuration, alternating them ``--repeat`` times (so a busy
machine weighs on each alike), and print one line per configuration with the median of the repeats.

    .venv/bin/python benchmarks/load/compare.py --repeat 2 \\
        "gthread 5x4" "sync 5:GUNICORN_WORKER_CLASS=sync,GUNICORN_WORKERS=5" \\
        "gthread 3x8:GUNICORN_WORKERS=3,GUNICORN_THREADS=8" -- --mix da=1 --think 0 --seconds 20

A configuration is ``label[:NAME=VALUE,...]`` (environment of gunicorn and the worker); what follows ``--`` goes
to run.py. DATABASE_URL and CELERY_BROKER_URL come from the environment as for run.py.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv):
    if "--" in argv:
        split = argv.index("--")
        argv, extra = argv[:split], argv[split + 1 :]
    else:
        extra = []
    repeat = 1
    if argv[:1] == ["--repeat"]:
        repeat, argv = int(argv[1]), argv[2:]
    configs = []
    for spec in argv:
        label, _, env = spec.partition(":")
        configs.append((label, dict(item.split("=", 1) for item in env.split(",") if item)))
    results = {label: [] for label, _ in configs}
    for round_ in range(repeat):
        for label, env in configs:
            out = Path(tempfile.mkstemp(suffix=".json")[1])
            done = subprocess.run(
                [sys.executable, str(HERE / "run.py"), "--json", str(out), *extra],
                env=dict(os.environ, **env),
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if done.returncode != 0 or not out.stat().st_size:
                print(f"{label}: run failed\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}", flush=True)
                continue
            figures = json.loads(out.read_text())
            results[label].append(figures)
            submit = figures["latency"].get("all/submit", {})
            print(
                f"  round {round_ + 1} {label:<24} {figures['rate']:6.0f} submissions/s, submit p50 "
                f"{submit.get('p50', 0) * 1000:5.0f} p99 {submit.get('p99', 0) * 1000:6.0f} ms",
                flush=True,
            )
    print(
        f"{'configuration':<24} {'subm/s':>7} {'req/s':>6} {'page p99':>9} {'next p99':>9} {'submit p50':>11} "
        f"{'submit p99':>11}   (median of {repeat})"
    )
    for label, runs in results.items():
        if not runs:
            continue

        def median(key, kind=None, runs=runs):
            values = [r["latency"].get(f"all/{kind}", {}).get(key, 0) * 1000 if kind else r[key] for r in runs]
            return statistics.median(values)

        requests = statistics.median(r["requests"] / r["seconds"] for r in runs)
        print(
            f"{label:<24} {median('rate'):7.0f} {requests:6.0f} {median('p99', 'page'):9.0f} "
            f"{median('p99', 'next'):9.0f} {median('p50', 'submit'):11.0f} {median('p99', 'submit'):11.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
