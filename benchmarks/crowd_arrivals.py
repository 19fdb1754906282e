#!/usr/bin/env python
"""Benchmark: 200 crowd participants arriving within one second.

Target (issue #8): every participant gets a distinct HIT; median and p99 time to the first item printed;
p99 < 1 s on PostgreSQL.

    .venv/bin/python benchmarks/crowd_arrivals.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_bench .venv/bin/python benchmarks/crowd_arrivals.py

A Direct Assessment campaign (HITs of 20 items, one worker per HIT, more HITs than participants) gets a crowd
study on the signed-link provider. The site runs under gunicorn (2 processes x 8 threads, the project's
``gunicorn.conf.py`` is not used) on loopback; 200 client threads, each its own HTTP session, arrive at times
spread evenly over one second and do what a participant's browser does: open the entry link with their id
(-> participant page) and press Start (taking a slot), which answers the rating page with its first item (a
protocol without such a page redirects to it, and the client follows). "Time to first item" runs from the arrival to the rating page's last byte.
Afterwards the database is checked: one working participation and one assignment per participant, no HIT
handed out twice. ``--warm-up N`` first sends N arrivals at once (spare HITs, not counted), so that the workers
have imported the URL conf, compiled the templates and opened database connections, as on a running site.
``--in-process N`` instead runs N arrivals one after another through Django's test client in this process and
prints the CPU of each request (``--profile FILE``: a cProfile of them). A fresh temporary SQLite database unless DATABASE_URL is set (then the benchmark's rows are
removed afterwards).
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

from da_common import REPO, Timer, generate_dataset, one_worker_campaign, setup_django

TARGET_P99 = 1.0
GUNICORN_CONFIG = REPO / "benchmarks" / "gunicorn_bench.conf.py"  # no settings: not the deployment's file


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, seconds=60):
    import requests

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server did not answer at {url}")


def participant(base, entry_path, pid, start_at, out):
    import requests

    session = requests.Session()
    session.trust_env = False  # loopback only, never a proxy
    delay = start_at - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
    began = time.perf_counter()
    try:
        home = session.get(f"{base}{entry_path}?pid={pid}", timeout=30)
        token = re.search(r"/crowd/w/([^/]+)/start/", home.text).group(1)
        pressed = time.perf_counter()
        rated = session.post(f"{base}/crowd/w/{token}/start/", timeout=30)
        elapsed = time.perf_counter() - began
        state = re.search(r'<script id="da-state" type="application/json">(.*?)</script>', rated.text, re.S)
        item = json.loads(state.group(1))["item"] if state else None
        out[pid] = {
            "seconds": elapsed,
            "from_start": time.perf_counter() - pressed,
            "status": rated.status_code,
            "url": rated.url,
            "item": item["id"] if item else None,
        }
    except Exception as exc:  # reported, not hidden
        out[pid] = {"seconds": time.perf_counter() - began, "error": repr(exc)}


def floor_client(base, start_at, out, key):
    """The same burst against /healthz (three requests each): the machine's HTTP floor, no database."""
    import requests

    session = requests.Session()
    session.trust_env = False
    delay = start_at - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
    began = time.perf_counter()
    for _ in range(3):
        session.get(f"{base}/healthz", timeout=30)
    out[key] = time.perf_counter() - began


TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pids):
    """User + system CPU seconds of these processes so far (Linux /proc; processes gone count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICKS
        except (OSError, IndexError, ValueError):
            pass
    return total


def child_pids(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def database_backends():
    """PostgreSQL backend processes serving this database (the site's connections; CONN_MAX_AGE keeps them), or
    [] on SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


def percentile(values, q):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def in_process(study, n, profile_path=None):
    """``n`` arrivals one after another through Django's WSGI handler in this process (no server, no threads):
    the process CPU of each request of an arrival, the number of requests, and optionally a cProfile of them.
    The CPU of this process includes PostgreSQL's client side but not the server's."""
    import cProfile
    import pstats

    from django.test import Client

    from annotation_site.crowd import links

    client = Client(HTTP_HOST="127.0.0.1", REMOTE_ADDR="127.0.0.1")
    entry_path = f"/crowd/s/{links.entry_token(study)}/"
    cpu = {}
    requests_made = 0
    counting = False
    profiler = cProfile.Profile(time.process_time) if profile_path else None  # CPU, not waiting for the database

    def timed(step, call):
        nonlocal requests_made
        began = time.process_time()
        if profiler and counting:
            profiler.enable()
        response = call()
        if profiler and counting:
            profiler.disable()
        cpu[step] = cpu.get(step, 0) + time.process_time() - began
        requests_made += 1
        return response

    from annotation_site.warm import warm_up

    print(f"  warm_up() as a gunicorn worker runs it: {warm_up():.2f} s")
    for i in range(-1, n):  # the first arrival (database connection, what warm_up leaves) is not counted
        if i == 0:
            print(f"  first arrival after it: CPU {sum(cpu.values()) * 1000:.0f} ms")
            cpu.clear()
            requests_made, counting = 0, True
        pid = f"q{i + 1:04d}"
        home = timed("entry", lambda pid=pid: client.get(entry_path, {"pid": pid}))
        token = re.search(r"/crowd/w/([^/]+)/start/", home.content.decode()).group(1)
        response = timed("start", lambda token=token: client.post(f"/crowd/w/{token}/start/"))
        if response.status_code == 302:
            location = response["Location"]
            response = timed("rating page", lambda location=location: client.get(location))
        assert b'id="da-state"' in response.content, response.status_code
    per = {step: seconds * 1000 / n for step, seconds in cpu.items()}
    print(
        f"  in-process, {n} arrivals one after another: {requests_made / n:g} requests per arrival; CPU per "
        f"arrival {sum(per.values()):.1f} ms (" + ", ".join(f"{k} {v:.1f} ms" for k, v in per.items()) + ")"
    )
    if profiler:
        profiler.dump_stats(profile_path)
        stats = pstats.Stats(profile_path)
        print(f"  cProfile: {stats.total_calls / n:,.0f} function calls per arrival (written to {profile_path})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--window", type=float, default=1.0, help="Seconds over which they arrive.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument(
        "--warm-up",
        type=int,
        default=0,
        metavar="N",
        help="N arrivals at once before the burst, not counted (workers as on a running site).",
    )
    parser.add_argument(
        "--in-process",
        type=int,
        default=0,
        metavar="N",
        help="Instead of the burst: N arrivals one after another in this process (Django's test "
        "client, no server), printing the CPU of each request.",
    )
    parser.add_argument("--profile", metavar="FILE", help="With --in-process: write a cProfile of the requests.")
    args = parser.parse_args()
    if args.in_process:  # one address for every arrival, as in the burst below: lift the per-address limits
        os.environ.update(
            CAPTIONEVAL_THROTTLE_ENTRY_IP="1000000/60", CAPTIONEVAL_THROTTLE_SUBMIT_IP="1000000/60", LOG_LEVEL="WARNING"
        )
    vendor = setup_django()

    from annotation_site.corpus.models import Dataset
    from annotation_site.crowd import links
    from annotation_site.crowd.models import Participation, Study
    from assessment.models import Assignment, Worker

    name = "benchmark-crowd-arrivals"
    Study.objects.filter(name=name).delete()
    Dataset.objects.filter(name=name).delete()
    Worker.objects.filter(external_id__startswith=f"link:{name}:").delete()  # every arrival is a newcomer
    timer = Timer()
    n_hits = int(args.participants * 1.1) + 1 + args.warm_up
    print(
        f"database: {vendor}; {args.participants} participants within {args.window:g} s; "
        f"gunicorn {args.workers} x {args.threads} threads"
    )
    with timer("set up a campaign and a study (not timed)"):
        dataset, systems = generate_dataset(name, n_videos=(n_hits * 15) // 4 + 10, n_systems=4)
        campaign = one_worker_campaign(name, dataset, systems)
        study = Study.objects.create(
            name=name,
            provider="link",
            protocol="da",
            object_id=campaign.pk,
            target_name=campaign.name,
            status="published",
            id_parameter="pid",
        )
    hits = campaign.hits.count()
    print(f"  {hits} HITs of 20 items, 1 worker each")
    if args.in_process:
        try:
            in_process(study, min(args.in_process, hits - 1), args.profile)
        finally:
            cleanup(name, study, campaign)
        return
    port = free_port()
    # every simulated participant comes from 127.0.0.1: lift the per-address limits (docs/reliability.md)
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="annotation_site.settings",
        LOG_LEVEL="WARNING",
        CAPTIONEVAL_THROTTLE_ENTRY_IP="1000000/60",
        CAPTIONEVAL_THROTTLE_SUBMIT_IP="1000000/60",
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "annotation_site.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(args.workers),
            "--threads",
            str(args.threads),
            "--worker-class",
            "gthread",
            "--log-level",
            "warning",
            "--config",
            str(GUNICORN_CONFIG),
        ],
        cwd=REPO,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    results = {}
    try:
        wait_for(f"{base}/healthz")
        entry_path = f"/crowd/s/{links.entry_token(study)}/"
        workers = child_pids(server.pid)
        warm_cpu = cpu_seconds(workers)
        if args.warm_up:
            # a running site's workers have imported the URL conf, compiled the templates and opened their database
            # connections: a few arrivals at once (spare HITs, not counted) reach every worker and most threads
            warm = {}
            threads = [
                threading.Thread(target=participant, args=(base, entry_path, f"warm{i:03d}", 0, warm))
                for i in range(args.warm_up)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            print(
                f"  warm-up: {args.warm_up} arrivals at once (not counted), web CPU "
                f"{(cpu_seconds(workers) - warm_cpu) * 1000:.0f} ms in all"
            )
        # backends already open (the warm-up's) count from now; those opened during the burst count whole
        database_before = {pid: cpu_seconds([pid]) for pid in database_backends()}
        before = {"web": cpu_seconds(workers), "clients": time.process_time()}
        each_before = [cpu_seconds([w]) for w in workers]
        start = time.perf_counter() + 0.5
        threads = [
            threading.Thread(
                target=participant,
                args=(base, entry_path, f"p{i:04d}", start + args.window * i / args.participants, results),
            )
            for i in range(args.participants)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        backends = database_backends()
        print(
            "  web CPU of each worker process during the burst: "
            + ", ".join(f"{(cpu_seconds([w]) - b):.2f} s" for w, b in zip(workers, each_before))
        )
        cpu = {
            "web": cpu_seconds(workers) - before["web"],
            "clients": time.process_time() - before["clients"],
            "database": sum(cpu_seconds([pid]) - database_before.get(pid, 0) for pid in backends),
        }
        floor = {}
        start = time.perf_counter() + 0.5
        threads = [
            threading.Thread(target=floor_client, args=(base, start + args.window * i / args.participants, floor, i))
            for i in range(args.participants)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.terminate()
        server.wait(timeout=30)
    errors = {pid: r for pid, r in results.items() if "error" in r or r.get("status") != 200 or r.get("item") is None}
    seconds = [r["seconds"] for r in results.values() if "error" not in r]
    working = Participation.objects.filter(study=study, status="working", participant__platform_id__startswith="p")
    units = list(working.values_list("unit_key", flat=True))
    assignments = Assignment.objects.filter(hit__campaign=campaign)
    per_hit = max(
        (assignments.filter(hit_id=h).count() for h in set(assignments.values_list("hit_id", flat=True))), default=0
    )
    distinct = len(units) == len(set(units)) == args.participants and per_hit <= 1
    print(
        f"  {len(results) - len(errors)} of {args.participants} reached their first item; "
        f"{len(set(units))} distinct HITs for {len(units)} working participants; "
        f"assignments per HIT at most {per_hit}"
    )
    for pid, r in sorted(errors.items())[:5]:
        print(f"  problem: {pid}: {r}")
    from_start = [r["from_start"] for r in results.values() if "from_start" in r]
    to_home = [r["seconds"] - r["from_start"] for r in results.values() if "from_start" in r]
    print(
        f"  arrival to the participant page (the entry): median {statistics.median(to_home) * 1000:.0f} ms, "
        f"p99 {percentile(to_home, 0.99) * 1000:.0f} ms, {sum(t > 0.9 for t in to_home)} over 0.9 s"
    )
    print(
        f"  from pressing Start (taking the slot) to the first item: median "
        f"{statistics.median(from_start) * 1000:.0f} ms, p99 {percentile(from_start, 0.99) * 1000:.0f} ms"
    )
    print(
        f"  the machine's floor, same burst of 3 requests each to /healthz (no database): median "
        f"{statistics.median(floor.values()) * 1000:.0f} ms, p99 {percentile(list(floor.values()), 0.99) * 1000:.0f} ms"
    )
    per = 1000 / args.participants
    print(
        f"  CPU per participant: web (gunicorn workers) {cpu['web'] * per:.1f} ms, "
        + (f"PostgreSQL backends {cpu['database'] * per:.1f} ms, " if backends else "")
        + f"this process (the clients) {cpu['clients'] * per:.1f} ms"
    )
    median, p99 = statistics.median(seconds), percentile(seconds, 0.99)
    print(
        f"time to first item: median {median * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms "
        f"(target p99 < {TARGET_P99:.0f} s on PostgreSQL): "
        f"{'OK' if p99 < TARGET_P99 and distinct and not errors else 'FAILED'}"
    )
    cleanup(name, study, campaign)


def cleanup(name, study, campaign):
    """Remove the benchmark's rows from a database that stays (DATABASE_URL)."""
    from annotation_site.corpus.models import Dataset
    from annotation_site.crowd.models import Participant, Participation, Study
    from assessment.models import Campaign, Worker

    if os.environ.get("DATABASE_URL"):
        Participation.objects.filter(study=study).delete()
        Participant.objects.filter(namespace=f"link:{name}").delete()
        Study.objects.filter(pk=study.pk).delete()
        Campaign.objects.filter(pk=campaign.pk).delete()
        Worker.objects.filter(external_id__startswith=f"link:{name}:").delete()
        Dataset.objects.filter(name=name).delete()


if __name__ == "__main__":
    main()
