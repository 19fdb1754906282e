#!/usr/bin/env python
"""Load benchmark: N participants (default 200) doing Direct Assessment items, factuality videos and judgment-task
items at once against gunicorn + the database + a real Celery worker, over real HTTP on loopback.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_load CELERY_BROKER_URL=redis://127.0.0.1:6379/8 \\
    CACHE_URL=redis://127.0.0.1:6379/7 .venv/bin/python benchmarks/load/run.py   # 200 participants, at most 60 s
    .venv/bin/python benchmarks/load/run.py --participants 20 --seconds 15   # embedded SQLite, eager tasks
    GUNICORN_WORKERS=3 GUNICORN_THREADS=8 .venv/bin/python benchmarks/load/run.py --think 0   # saturation

It makes a campaign, a project and a task named ``load-<run id>`` (see work.py), starts gunicorn with the
deployment's ``gunicorn.conf.py`` (``GUNICORN_*`` variables choose the worker model) and a Celery worker when
CELERY_BROKER_URL is set, lets the participants work (client.py) until their work, ``--seconds`` or
``--max-requests`` runs out, and prints throughput and p50 / p95 / p99 of page loads, next-item requests and
submissions. Then it checks in the database that every acknowledged submission is stored exactly once and
nothing else is (verify.py), removes the run's rows (unless ``--keep``) and exits 1 if anything was lost,
duplicated or invented. ``--fault`` injects faults during the run (faults.py). Stops by itself: every request
has a timeout, every participant a bounded amount of work, the run a deadline.

``CACHE_URL`` is passed on to gunicorn: set it to Redis as the deployment does (docker-compose.yml), or the rate
limits count per process in local memory, which costs less than production does (0.5 ms of CPU per DA submission
measured, docs/reliability.md).

Participants pause ``--think`` seconds on average before each action (a person reading and rating takes far
longer; 0 gives a closed loop that measures the server's saturation throughput). Their number over the
response time bounds what a closed loop can do (Little's law): 200 participants without pause and p99 < 200 ms
would need more than 1000 submissions/s.
"""

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from load import client, faults, stack, verify, work  # noqa: E402

# Every participant of the run comes from 127.0.0.1, which the per-address rate limits (annotation_site/throttling,
# CAPTIONEVAL_THROTTLE_<SCOPE>_IP) would take for one abusive client: the run raises those, explicitly; the limits
# per token, assignment and account stay as deployed (each participant is one person). --server-env overrides.
ONE_ADDRESS_LIMITS = {f"CAPTIONEVAL_THROTTLE_{scope}_IP": "1000000/60" for scope in ("SUBMIT", "ENTRY", "ACCOUNT")}
TARGET_RATE = 300
TARGET_P99 = 0.200


def setup_django():
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("CAPTIONEVAL_VAR_DIR", tempfile.mkdtemp(prefix="captioneval-load-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    return connection.vendor


def parse_mix(text):
    mix = []
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name not in ("da", "factuality", "task"):
            raise argparse.ArgumentTypeError(f"unknown protocol {name!r} in --mix (da, factuality, task)")
        mix.append((name, int(weight or 1)))
    return tuple(mix)


def summary_rows(recorder):
    rows = []
    kinds = sorted({kind for _, kind in recorder.latencies}, key=["page", "next", "submit"].index)
    for kind in kinds:
        values = [v for (p, k), vs in recorder.latencies.items() if k == kind for v in vs]
        rows.append(("all", kind, values))
        for (protocol, k), vs in sorted(recorder.latencies.items()):
            if k == kind:
                rows.append((protocol, kind, vs))
    return rows


def ms(value):
    return f"{value * 1000:7.0f}"


def report(recorder, wall, checked, args, environment):
    acked = sum(len(v) for v in recorder.acked.values())
    span = (recorder.last - recorder.first) if recorder.first is not None else wall
    rate = acked / span if span else 0.0
    print(
        f"\n{recorder.requests} requests in {span:.1f} s ({recorder.requests / span:.0f}/s); "
        f"{acked} acknowledged submissions: {rate:.0f}/s; {recorder.retries} retries"
    )
    print(f"answers: {', '.join(f'{k}: {n}' for k, n in sorted(recorder.statuses.items(), key=str))}")
    print(f"{'protocol':<11} {'kind':<7} {'n':>6} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    figures = {}
    for protocol, kind, values in summary_rows(recorder):
        if not values:
            continue
        p50, p95, p99 = (client.percentile(values, q) for q in (50, 95, 99))
        print(f"{protocol:<11} {kind:<7} {len(values):>6} {ms(p50)} {ms(p95)} {ms(p99)} {ms(max(values))}")
        figures[f"{protocol}/{kind}"] = {"n": len(values), "p50": p50, "p95": p95, "p99": p99, "max": max(values)}
    for line in recorder.problems[:8]:
        print(f"  problem: {line}")
    if len(recorder.problems) > 8:
        print(f"  ... {len(recorder.problems) - 8} more problems")
    ok = True
    print("database check:")
    for protocol, entry in checked.items():
        ok &= entry["ok"]
        print(
            f"  {protocol:<11} acknowledged {entry['acknowledged']:>6}, stored {entry['stored']:>6} "
            f"(of which sent but unanswered {entry['unacked_stored']}); lost {entry['n_lost']}, duplicates "
            f"{len(entry['duplicates'])}, not sent by any client {len(entry['unexpected'])}"
            + (f", wrong scores {len(entry['wrong_score'])}" if "wrong_score" in entry else "")
            + ("  OK" if entry["ok"] else "  FAILED")
        )
    drifted = mix_drift(recorder, args)
    for line in drifted:
        print(f"  note: {line}")
    submit = figures.get("all/submit")
    target = bool(submit) and rate >= TARGET_RATE and submit["p99"] < TARGET_P99
    print(
        f"target (>= {TARGET_RATE} submissions/s, submit p99 < {TARGET_P99 * 1000:.0f} ms at "
        f"{args.participants} participants): {'met' if target else 'NOT met'} "
        f"({rate:.0f}/s, p99 {submit['p99'] * 1000:.0f} ms)"
        + (" - the mix was not sustained (notes above): not a measurement of the target" if drifted else "")
        if submit
        else "no submission measured"
    )
    print(f"nothing lost, duplicated or invented: {'yes' if ok else 'NO'}")
    return ok, {
        "requests": recorder.requests,
        "seconds": span,
        "acknowledged": acked,
        "rate": rate,
        "retries": recorder.retries,
        "statuses": {str(k): v for k, v in recorder.statuses.items()},
        "latency": figures,
        "check": checked,
        "ok": ok,
        "problems": recorder.problems[:50],
        "participants": args.participants,
        "mix_not_sustained": drifted,
        "think": args.think,
        "environment": environment,
    }


QUOTA_OPTION = {"da": "--hit-size", "factuality": "--videos-each", "task": "--items-each"}


def mix_drift(recorder, args):
    """Why the run's mix was not the one asked for, as lines (none when it was): a protocol whose participants
    (more than a tenth of them) ran out of work while the run still had time changed the mix under the figures
    (the rest of the run has fewer of them, and throughput and CPU per submission are of another mix)."""
    counts = work.Plan(participants=args.participants, mix=args.mix).counts()
    lines = []
    for protocol, times in sorted(recorder.ran_out.items()):
        if counts.get(protocol) and len(times) > counts[protocol] / 10:
            lines.append(
                f"{len(times)} of {counts[protocol]} {protocol} participants ran out of work before the run's end "
                f"(the first after {min(times):.1f} s): give them more ({QUOTA_OPTION[protocol]}) for a sustained mix"
            )
    return lines


def reconnect():
    """Drop this thread's database connection (a database fault may have cut it); the next query opens one."""
    from django.db import connection

    try:
        connection.close()
    except Exception:  # already cut by the fault
        connection.connection = None


def warm_up(base, specs, rounds=4):
    """Load each kind of page a few times first, so every gunicorn worker has imported the views and compiled
    the templates before anything is timed (GETs only: they change nothing)."""
    import urllib.request

    seen = {}
    for spec in specs:
        seen.setdefault(spec["protocol"], spec)
    for _ in range(rounds):
        for spec in seen.values():
            path = spec["start"].replace("/start/", "/work/") if "start" in spec else spec["url"]
            request = urllib.request.Request(base + path)
            if "session" in spec:
                request.add_header("Cookie", f"{spec['session_cookie']}={spec['session']}")
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument(
        "--mix",
        type=parse_mix,
        default=(("da", 2), ("factuality", 1), ("task", 1)),
        help="protocol weights, e.g. da=2,factuality=1,task=1 (default) or da=1",
    )
    parser.add_argument("--seconds", type=float, default=60, help="stop starting requests after this (default 60)")
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--think", type=float, default=0.5, help="mean pause before each action, s (default 0.5)")
    parser.add_argument("--ramp", type=float, default=2.0, help="participants arrive over this many seconds")
    parser.add_argument("--hit-size", type=int, default=work.DA_HIT_SIZE)
    parser.add_argument("--videos-each", type=int, default=5, help="factuality videos per participant")
    parser.add_argument("--items-each", type=int, default=10, help="task items per participant")
    parser.add_argument("--task-preset", default="fifa-faithfulness")
    parser.add_argument("--task-definition", type=Path, help="a task definition (JSON) instead of the preset")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND@WHEN",
        help=f"inject a fault during the run: {', '.join(faults.KINDS)}; WHEN is seconds (10) or a share of "
        "the planned submissions (40%%) (repeatable)",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment of gunicorn and the worker (e.g. raised throttle limits)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the run's rows in the database")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--log-dir", type=Path, default=None)
    args = parser.parse_args(argv)

    injector = faults.Injector(args.fault) if args.fault else None
    if any(f.startswith("celery-kill") for f in args.fault):
        # a killed worker's job comes back after the broker's visibility timeout (6 h by default): short here
        os.environ.setdefault("CELERY_VISIBILITY_TIMEOUT", "8")
        # and the payment lease a killed run leaves behind ends soon after (15 min by default)
        os.environ.setdefault("CROWD_PAYMENTS_LEASE_SECONDS", "15")
    vendor = setup_django()
    run = uuid.uuid4().hex[:8]
    plan = work.Plan(
        participants=args.participants,
        mix=args.mix,
        hit_size=args.hit_size,
        videos_each=args.videos_each,
        items_each=args.items_each,
        task_preset=args.task_preset,
        task_definition=json.loads(args.task_definition.read_text()) if args.task_definition else None,
    )
    environment = {
        k: os.environ[k]
        for k in (
            "DATABASE_URL",
            "CELERY_BROKER_URL",
            "CACHE_URL",  # redis://... as deployed (docker-compose.yml): the rate limits' counters are shared
            "CAPTIONEVAL_VAR_DIR",
            "CELERY_TASK_DEFAULT_QUEUE",
            "CELERY_VISIBILITY_TIMEOUT",
            "CROWD_PAYMENTS_LEASE_SECONDS",
        )
        if os.environ.get(k)
    }
    environment.update(ONE_ADDRESS_LIMITS)
    environment.update(dict(item.split("=", 1) for item in args.server_env))
    if injector:
        environment.update(injector.server_environment())
    server = {k: v for k, v in os.environ.items() if k.startswith("GUNICORN_")}
    print(
        f"database {vendor}; {'Celery worker on ' + os.environ['CELERY_BROKER_URL'] if os.environ.get('CELERY_BROKER_URL') else 'eager tasks (no broker)'}; "
        f"gunicorn.conf.py with {server or 'its defaults'}; {args.participants} participants "
        f"{dict(plan.counts())}, think {args.think:g} s, at most {args.seconds:g} s / {args.max_requests} requests; "
        f"run {run}"
    )
    began = time.perf_counter()
    made = work.make_work(run, plan)
    print(f"set up the work in {time.perf_counter() - began:.1f} s (not timed)")
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="captioneval-load-logs-"))
    the_stack = stack.Stack(environment, log_dir)
    ok = False
    try:
        the_stack.start()
        warm_up(the_stack.base, made["participants"])
        if injector:
            injector.attach(the_stack, made)
        from django.db import connection

        meter = stack.CpuMeter(the_stack, connection.settings_dict["NAME"] if vendor == "postgresql" else None)
        recorder, wall = asyncio.run(
            client.drive(
                the_stack.base,
                made["participants"],
                seconds=args.seconds,
                max_requests=args.max_requests,
                think=args.think,
                ramp=args.ramp,
                during=injector.run if injector else None,
            )
        )
        cpu = meter.used()
        reconnect()
        if injector:
            for line in injector.log:
                print(f"  fault: {line}")
        checked = verify.verify(made, recorder)
        ok, figures = report(recorder, wall, checked, args, server)
        figures["cpu"] = cpu
        cores = os.cpu_count() or 1
        print(
            f"CPU over the run ({cpu['wall']:.0f} s, {cores} cores = {cores * cpu['wall']:.0f} core-seconds; machine busy "
            f"{cpu['machine']:.1f}): load client {cpu['client']:.1f}, gunicorn {cpu['web']:.1f}, Celery "
            f"{cpu['celery']:.1f}, PostgreSQL backends {cpu['database']:.1f}, everything else on the machine "
            f"{cpu['others']:.1f} core-seconds"
        )
        if figures["acknowledged"]:
            print(
                f"  per submission: gunicorn {cpu['web'] / figures['acknowledged'] * 1000:.1f} ms, database "
                f"{cpu['database'] / figures['acknowledged'] * 1000:.1f} ms, client "
                f"{cpu['client'] / figures['acknowledged'] * 1000:.1f} ms of CPU (all requests included)"
            )
        if injector:
            figures["faults"] = injector.log
            jobs_ok, jobs_report = injector.check()
            figures["jobs"] = jobs_report
            for kind, entry in jobs_report.items():
                print(
                    f"  job {kind}: {'OK' if entry['ok'] else 'FAILED'} "
                    f"{ {k: v for k, v in entry.items() if k != 'ok'} }"
                )
            ok &= jobs_ok
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2, default=str))
    finally:
        the_stack.stop()
        if injector:
            injector.stop()
        reconnect()
        print(f"server logs: {log_dir}")
        if not args.keep:
            if injector:
                injector.remove()
            work.remove(made)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
