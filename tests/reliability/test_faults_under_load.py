"""Faults while participants work (issue #11, "Prove it" 2), the short version of
``benchmarks/load/run.py --fault ...``: the real stack (gunicorn with the deployment's gunicorn.conf.py, a Celery
worker process) on a database of its own, participants over real HTTP retrying with the same submission UUID,
then the database checked against what the clients were told.

- a gunicorn worker SIGKILLed twice: no acknowledged submission lost, none stored twice, none invented;
- the database gone for two seconds (PostgreSQL: every connection of the platform's database cut and new ones
  refused; SQLite: another process holds the write lock): the same, and the requests in the outage are
  answered 503 with Retry-After (never 500);
- the Celery worker SIGKILLed in the middle of a campaign's QC job, a metric computation and a payment batch
  (fake Prolific on loopback): each job done once in effect, nothing paid twice.

The stack gets its own database (PostgreSQL: ``<database>_faults`` on the server of DATABASE_URL, dropped
afterwards; SQLite: a file in a temporary folder) and its own Celery queue, so it never meets the test database
or the session's Celery worker. The Celery test needs a broker: CELERY_BROKER_URL, else Redis on loopback.
"""

import json
import os
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.conftest import REPO, redis_answers, require

pytestmark = pytest.mark.faults

RUN = REPO / "benchmarks" / "load" / "run.py"
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def _postgres_url():
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else ""


@pytest.fixture(scope="module")
def stack_environment(tmp_path_factory):
    """DATABASE_URL / CAPTIONEVAL_VAR_DIR of the stack's own database, created here and removed afterwards."""
    folder = tmp_path_factory.mktemp("faults")
    environment = {
        "CAPTIONEVAL_VAR_DIR": str(folder),
        "CELERY_TASK_DEFAULT_QUEUE": f"faults-{os.getpid()}",
        "GUNICORN_WORKERS": "2",
        "GUNICORN_THREADS": "4",
    }
    url = _postgres_url()
    if not url:
        environment["DATABASE_URL"] = f"sqlite:///{folder / 'faults.sqlite3'}"
        yield environment
        return
    import psycopg2

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_faults"
    environment["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{name}"))
    admin = psycopg2.connect(
        dbname="postgres", user=parts.username, password=parts.password, host=parts.hostname, port=parts.port
    )
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield environment
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def run_load(environment, tmp_path, *arguments, broker=""):
    """benchmarks/load/run.py in a process of its own; returns its figures (JSON) after checking it exited."""
    out = tmp_path / "figures.json"
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(environment)
    if broker:
        env["CELERY_BROKER_URL"] = broker
    command = [
        sys.executable,
        str(RUN),
        "--think",
        "0.1",
        "--ramp",
        "1",
        "--hit-size",
        "20",
        "--videos-each",
        "3",
        "--items-each",
        "5",
        "--json",
        str(out),
        "--log-dir",
        str(tmp_path / "logs"),
        *arguments,
    ]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert out.is_file(), f"the load run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    figures = json.loads(out.read_text())
    figures["output"] = done.stdout
    figures["exit"] = done.returncode
    return figures


def verdicts(figures):
    """The run's output with its verdict lines (faults, jobs, checks, targets) first: a one-line failure summary
    (CI's) then says why, where the output's first line only named the run."""
    lines = figures["output"].splitlines()
    marks = ("fault:", "job ", "FAILED", "NOT ", "lost", "nothing lost")
    first = [line.strip() for line in lines if any(mark in line for mark in marks)]
    return " | ".join(first) + "\n\n" + figures["output"]


def assert_nothing_lost(figures):
    assert figures["check"], verdicts(figures)
    for protocol, entry in figures["check"].items():
        assert entry["acknowledged"] > 0, (protocol, verdicts(figures))
        assert entry["n_lost"] == 0 and not entry["duplicates"] and not entry["unexpected"], (protocol, entry)
        assert not entry.get("wrong_score"), (protocol, entry)
    assert figures["ok"] and figures["exit"] == 0, verdicts(figures)


def acknowledged_before(line):
    return int(line.split("(", 1)[1].split(" ", 1)[0])


def test_killing_gunicorn_workers_loses_and_duplicates_nothing(stack_environment, tmp_path):
    figures = run_load(
        stack_environment,
        tmp_path,
        "--participants",
        "24",
        "--seconds",
        "25",
        "--fault",
        "gunicorn-kill@25%",
        "--fault",
        "gunicorn-kill@60%",
    )
    assert_nothing_lost(figures)
    kills = [line for line in figures["faults"] if "killed gunicorn worker" in line]
    assert len(kills) == 2, figures["faults"]
    # the kills happened while work went on: submissions were acknowledged after the last one
    assert figures["acknowledged"] > acknowledged_before(kills[-1]), verdicts(figures)


def test_a_database_outage_loses_and_duplicates_nothing(stack_environment, tmp_path):
    kind = "db-drop" if _postgres_url() else "db-lock"
    figures = run_load(stack_environment, tmp_path, "--participants", "24", "--seconds", "25", "--fault", f"{kind}@35%")
    assert_nothing_lost(figures)
    [outage] = figures["faults"]
    assert kind in outage and figures["acknowledged"] > acknowledged_before(outage), verdicts(figures)
    if kind == "db-drop":  # requests in the outage were refused with 503 (never a 500) and sent again
        assert figures["retries"] > 0 and figures["statuses"].get("503", 0) > 0, verdicts(figures)
    assert "500" not in figures["statuses"], verdicts(figures)


def test_killing_the_celery_worker_mid_job_does_each_job_once(stack_environment, tmp_path):
    from metrics_eval.text_metrics import java_available

    broker = os.environ.get("CELERY_BROKER_URL") or LOCAL_REDIS
    require(redis_answers(broker), f"a Redis broker at {broker} (CELERY_BROKER_URL)")
    require(java_available(), "Java for the metric computation (pycocoevalcap's tokenizer)")
    figures = run_load(
        stack_environment,
        tmp_path,
        "--participants",
        "24",
        "--seconds",
        "40",
        # participants who think a while are still at work while the jobs run, on a quick machine too (with 0.1
        # s they were done before the second kill)
        "--think",
        "0.5",
        "--fault",
        "celery-kill:qc@2",
        "--fault",
        "celery-kill:metrics@3",
        "--fault",
        "celery-kill:payments@4",
        broker=broker,
    )
    assert_nothing_lost(figures)
    jobs = figures["jobs"]
    assert set(jobs) == {"qc", "metrics", "payments"}, verdicts(figures)
    for kind, entry in jobs.items():
        assert entry["killed in the middle"] and entry["job"] == "succeeded" and not entry["problems"], (kind, entry)
    assert jobs["payments"]["bonuses_paid"] == jobs["payments"]["submissions"] > 0
