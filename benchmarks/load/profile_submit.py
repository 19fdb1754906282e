#!/usr/bin/env python
"""CPU per submission in one process, through the whole Django stack (middleware, URL routing, REST framework,
the service, the database), without HTTP and without other processes competing: the number the load target
depends on (docs/reliability.md, "Load").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_x .venv/bin/python benchmarks/load/profile_submit.py
    ... profile_submit.py --protocol factuality --profile 25      # and the 25 most expensive functions

It makes a run's work (work.py: a campaign, a project, a task named ``load-<run id>``), opens the pages with
Django's test client (not measured), then measures each submission: process CPU (``time.process_time``) and
wall time per submit, medians and means, and the SQL statements per submit. ``--profile N`` runs cProfile
around the submits (or, with ``--profiled page|next``, the page loads or next-item requests) and prints the N functions with the most cumulative time. The run's rows are removed.
"""

import argparse
import cProfile
import json
import os
import pstats
import random
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from load import work  # noqa: E402
from load.client import factuality_answer, json_script, task_answer  # noqa: E402

SHOW_SQL = False
PROFILED = "submit"  # which requests --profile covers: submit, page, next


def setup():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation_site.settings")
    # the load run's setting: one loopback address stands for every participant
    for scope in ("SUBMIT", "ENTRY", "ACCOUNT"):
        os.environ.setdefault(f"CAPTIONEVAL_THROTTLE_{scope}_IP", "1000000/60")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


class Measured:
    def __init__(self):
        self.cpu, self.wall, self.queries = [], [], []
        self.pages = []  # CPU of each page load (GET)
        self.nexts = []  # CPU of each next-item request (factuality and task: POST ... -> 302)

    def summary(self):
        n = len(self.cpu)
        return (
            f"{n} submits: CPU per submit median {statistics.median(self.cpu) * 1000:.2f} ms, mean "
            f"{statistics.fmean(self.cpu) * 1000:.2f} ms; wall median {statistics.median(self.wall) * 1000:.2f} "
            f"ms; SQL statements per submit {min(self.queries)}-{max(self.queries)}"
            + (f"; page CPU median {statistics.median(self.pages) * 1000:.2f} ms" if self.pages else "")
            + (f"; next-item CPU median {statistics.median(self.nexts) * 1000:.2f} ms" if self.nexts else "")
            + f" ({len(self.nexts)} next-item requests); CPU per unit of work (submit + page + next-item, mean) "
            f"{(sum(self.cpu) + sum(self.pages) + sum(self.nexts)) / n * 1000:.2f} ms"
        )


def backend_cpu():
    """CPU seconds the PostgreSQL backend serving this process's connection has used so far (None elsewhere:
    SQLite runs in this process, so its CPU is already in the process's figures)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


HANDLER = None


def new_client():
    """A test client whose handler (with its loaded middleware) is shared with the other participants' clients:
    a new handler loads the middleware on its first request (WhiteNoise alone scans every static file, about 5 ms
    of CPU), which a served page never pays."""
    from django.test import Client

    global HANDLER
    client = Client(HTTP_HOST="127.0.0.1")
    if HANDLER is None:
        HANDLER = client.handler
    else:
        client.handler = HANDLER
    return client


def timed(into, call, *args, profiler=None, what="", **kwargs):
    profiler = profiler if PROFILED == what else None
    if profiler:
        profiler.enable()
    cpu = time.process_time()
    response = call(*args, **kwargs)
    into.append(time.process_time() - cpu)
    if profiler:
        profiler.disable()
    return response


def post(client, path, body, headers, measured, profiler):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    profiler = profiler if PROFILED == "submit" else None
    with CaptureQueriesContext(connection) as captured:
        if profiler:
            profiler.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        response = client.post(path, data=json.dumps(body), content_type="application/json", headers=headers)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if profiler:
            profiler.disable()
    if response.status_code not in (200, 201):
        raise SystemExit(f"POST {path} answered {response.status_code}: {response.content[:300]!r}")
    measured.cpu.append(cpu)
    measured.wall.append(wall)
    measured.queries.append(len(captured.captured_queries))
    if SHOW_SQL and len(measured.queries) == 2:
        for query in captured.captured_queries:
            print("  SQL:", query["sql"][:300])
    return response.json()


def run_da(participant, measured, profiler, rng):
    client = new_client()
    html = timed(measured.pages, client.get, participant["url"], profiler=profiler, what="page").content.decode()
    state = json_script(html, "da-state")
    submit_url = re.search(r'data-submit-url="([^"]+)"', html).group(1)
    while state.get("item") and not state.get("complete"):
        item = state["item"]
        body = {
            "item": item["id"],
            "score": rng.randint(0, 100),
            "client_uuid": str(uuid.uuid4()),
            "elapsed_ms": rng.randint(3000, 20000),
            "played": True,
            "watched_seconds": round(rng.uniform(0.5, 1.0), 3),
        }
        state = post(client, submit_url, body, {}, measured, profiler)["state"]


def run_factuality(participant, measured, profiler, rng):
    from django.conf import settings

    client = new_client()
    client.cookies[settings.SESSION_COOKIE_NAME] = participant["session"]
    location = None  # the next page a submit's answer named (client.py: as the page does)
    for _ in range(participant["limit"]):
        if location is None:
            response = timed(measured.nexts, client.post, participant["start"], profiler=profiler, what="next")
            if response.status_code != 302:
                return
            location = response["Location"]
        if "/assignments/" not in location:
            return
        page = timed(measured.pages, client.get, location, profiler=profiler, what="page")
        config = json_script(page.content.decode(), "annotation-config")
        body = {
            "submission_uuid": str(uuid.uuid4()),
            "answer": factuality_answer(config, rng),
            "confirm": False,
            "time_spent": rng.randint(30, 200),
            "video_played": True,
            "next": True,
        }
        location = post(client, config["submitUrl"], body, {}, measured, profiler).get("next")


def run_task(participant, measured, profiler, rng):
    client = new_client()
    client.get(participant["url"])
    next_path = f"/tasks/p/{participant['token']}/next/"
    location = None  # the next page a submit's answer named (client.py: as the page does)
    while True:
        if location is None:
            response = timed(measured.nexts, client.post, next_path, profiler=profiler, what="next")
            if response.status_code != 302:
                return
            location = response["Location"]
        if "/items/" not in location:
            return
        page = timed(measured.pages, client.get, location, profiler=profiler, what="page")
        config = json_script(page.content.decode(), "annotation-config")
        body = {
            "submission_uuid": str(uuid.uuid4()),
            "answer": task_answer(config["questions"], rng),
            "confirm": False,
            "time_spent": rng.randint(20, 90),
            "video_played": True,
            "next": True,
        }
        headers = {"X-Participant-Token": config["participantToken"]}
        location = post(client, config["submitUrl"], body, headers, measured, profiler).get("next")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", choices=("da", "factuality", "task"), default="da")
    parser.add_argument("--participants", type=int, default=15, help="each does a whole HIT / 5 videos / 10 items")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N most expensive functions")
    parser.add_argument("--sort", default="cumulative", help="cProfile sort key (cumulative, tottime)")
    parser.add_argument("--sql", action="store_true", help="print the statements of one submit")
    parser.add_argument(
        "--profiled",
        choices=("submit", "page", "next"),
        default="submit",
        help="the requests --profile covers: submits, page loads (GET) or next-item requests (POST -> 302)",
    )
    args = parser.parse_args(argv)
    global SHOW_SQL, PROFILED
    SHOW_SQL, PROFILED = args.sql, args.profiled
    setup()
    run = uuid.uuid4().hex[:8]
    plan = work.Plan(participants=args.participants, mix=((args.protocol, 1),))
    made = work.make_work(run, plan)
    # timed by process CPU: waiting for the database is not counted
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    measured = Measured()
    rng = random.Random(5)
    database_cpu = None
    try:
        # the first participant warms the process up (imports, compiled templates, connection): not counted
        for index, participant in enumerate(made["participants"]):
            if index == 1:
                database_cpu = backend_cpu()
            target = measured if index else Measured()
            globals()[f"run_{args.protocol}"](participant, target, profiler if index else None, rng)
        if database_cpu is not None:
            database_cpu = backend_cpu() - database_cpu
    finally:
        work.remove(made)
    print(f"{args.protocol}: {measured.summary()}")
    if database_cpu is not None:
        print(
            f"PostgreSQL backend CPU per unit of work (submit + page + next-item): "
            f"{database_cpu / len(measured.cpu) * 1000:.2f} ms ({database_cpu:.2f} s in all, clock ticks of "
            f"{1000 / os.sysconf('SC_CLK_TCK'):.0f} ms)"
        )
    if profiler:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.profile)


if __name__ == "__main__":
    main()
