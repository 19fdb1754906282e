"""Faults injected while participants work (``run.py --fault KIND@WHEN``) and by tests/reliability/. WHEN is
seconds after the participants start (``gunicorn-kill@10``) or a share of the run's planned submissions
acknowledged (``gunicorn-kill@40%``): the second keeps a fault in the middle of the work however fast the machine
is (a fault timed in seconds can land after a quick machine has finished the work); a share never reached before
the participants stop is logged as not injected.

- ``gunicorn-kill``: SIGKILL one gunicorn worker process (its in-flight requests die; the master starts another);
- ``db-drop``: every connection of the platform to its database is cut and new ones are refused for
  ``DB_OUTAGE`` seconds (PostgreSQL: ``ALLOW_CONNECTIONS false`` + ``pg_terminate_backend`` on this database only,
  which is what clients see of a server restart without disturbing other databases of the server);
  ``pg-restart`` restarts the whole PostgreSQL cluster instead (disturbs every database on it: benchmarks only);
  ``db-lock`` (SQLite) has another process hold the database's write lock for ``DB_OUTAGE`` seconds;
- ``celery-kill:qc``, ``celery-kill:metrics``, ``celery-kill:payments``: start that job, SIGKILL the Celery worker
  (main process and pool) while it runs, then start a new one, which gets the unacknowledged message again after
  the broker's visibility timeout (``jobs.py``: the jobs and what "done exactly once" means for each).
"""

import asyncio
import subprocess
import time

KINDS = (
    "gunicorn-kill",
    "db-drop",
    "pg-restart",
    "db-lock",
    "celery-kill:qc",
    "celery-kill:metrics",
    "celery-kill:payments",
)
DB_OUTAGE = 2.0


def database_name():
    from django.db import connection

    return connection.settings_dict["NAME"]


def maintenance_connection():
    """A psycopg2 connection to the server's ``postgres`` database (a database cannot refuse connections to
    itself from a session inside it)."""
    import psycopg2
    from django.db import connection

    settings = connection.settings_dict
    if connection.vendor != "postgresql":
        raise RuntimeError("this fault needs PostgreSQL (DATABASE_URL)")
    link = psycopg2.connect(
        dbname="postgres",
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
    )
    link.autocommit = True
    return link


def cut_database(seconds=DB_OUTAGE):
    """Refuse new connections to this database, terminate the open ones, wait, allow again. Returns how many
    backends were terminated. PostgreSQL only; other databases of the server are not touched."""
    name = database_name()
    link = maintenance_connection()
    try:
        with link.cursor() as cursor:
            cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            try:
                cursor.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", [name]
                )
                killed = cursor.fetchone()[0]
                time.sleep(seconds)
            finally:
                cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    finally:
        link.close()
    return killed


def lock_sqlite(seconds=DB_OUTAGE):
    """Hold the SQLite database's exclusive lock from another connection for ``seconds``."""
    import sqlite3

    from django.db import connection

    if connection.vendor != "sqlite":
        raise RuntimeError("db-lock is the SQLite fault; use db-drop on PostgreSQL")
    link = sqlite3.connect(connection.settings_dict["NAME"], timeout=30, isolation_level=None)
    try:
        link.execute("BEGIN EXCLUSIVE")
        time.sleep(seconds)
        link.execute("ROLLBACK")
    finally:
        link.close()


def restart_postgresql():
    import os

    version = sorted(os.listdir("/etc/postgresql"))[0]
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True, timeout=120)


def parse_when(text):
    """``"10"`` -> ("s", 10.0) seconds after the start; ``"40%"`` -> ("%", 40.0) of the planned submissions."""
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 <= share <= 100:
                raise ValueError
            return ("%", share)
        return ("s", float(text))
    except ValueError:
        raise SystemExit(
            f"a fault's time is seconds (10) or a share of the planned submissions (40%), not {text!r}"
        ) from None


class Injector:
    """Runs the faults at their times during a load run and keeps a log of what it did."""

    def __init__(self, specs):
        self.stack = None
        self.made = None
        self.plan = []
        for spec in specs:
            kind, _, at = spec.partition("@")
            if kind not in KINDS:
                raise SystemExit(f"unknown fault {kind!r}: one of {', '.join(KINDS)}")
            self.plan.append(parse_when(at or "5") + (kind,))
        self.plan.sort()
        self.planned_submissions = 0
        self.log = []
        self.jobs = None
        if any(kind.startswith("celery-kill") for _, _, kind in self.plan):
            from . import jobs

            self.jobs = jobs.FaultJobs(None)

    def server_environment(self):
        """What the stack's processes need for these faults (the fake payment platform's address)."""
        if self.jobs is not None and any(kind == "celery-kill:payments" for _, _, kind in self.plan):
            return self.jobs.start_fake_platform()
        return {}

    def attach(self, the_stack, made):
        self.stack, self.made = the_stack, made
        self.planned_submissions = made["planned_submissions"]
        if self.jobs is not None:
            self.jobs.made = made
            self.jobs.prepare({kind.split(":", 1)[1] for _, _, kind in self.plan if kind.startswith("celery-kill:")})

    async def run(self, recorder):
        began = time.monotonic()
        for unit, at, kind in self.plan:
            if unit == "s":
                await asyncio.sleep(max(0.0, at - (time.monotonic() - began)))
            else:
                target = at / 100 * self.planned_submissions
                while recorder.acknowledged() < target and not recorder.finished:
                    await asyncio.sleep(0.02)
                if recorder.acknowledged() < target:
                    self.log.append(
                        f"{time.monotonic() - began:5.1f} s ({recorder.acknowledged()} submissions "
                        f"acknowledged so far): {kind}: not injected, the participants stopped "
                        f"before {at:g}% of {self.planned_submissions} planned submissions"
                    )
                    continue
            stamp = time.monotonic() - began
            acked = recorder.acknowledged()
            detail = await asyncio.get_running_loop().run_in_executor(None, self.inject, kind)
            self.log.append(f"{stamp:5.1f} s ({acked} submissions acknowledged so far): {kind}: {detail}")

    def inject(self, kind):
        from django.db import connection

        if kind == "gunicorn-kill":
            return f"killed gunicorn worker {self.stack.kill_gunicorn_worker()}"
        if kind == "db-drop":
            connection.close()
            killed = cut_database()
            return f"database connections cut ({killed} terminated), refused for {DB_OUTAGE:g} s"
        if kind == "db-lock":
            lock_sqlite()
            return f"another process held the database's write lock for {DB_OUTAGE:g} s"
        if kind == "pg-restart":
            connection.close()
            began = time.monotonic()
            restart_postgresql()
            return f"PostgreSQL restarted in {time.monotonic() - began:.1f} s"
        if kind.startswith("celery-kill:"):
            return self.jobs.kill_during(self.stack, kind.split(":", 1)[1])
        raise ValueError(kind)

    def check(self):
        if self.jobs is None:
            return True, {}
        return self.jobs.check()

    def stop(self):
        if self.jobs is not None:
            self.jobs.stop()

    def remove(self):
        if self.jobs is not None:
            self.jobs.remove()
