"""The platform as it runs in production, on loopback: gunicorn serving the Django project and, when a broker is
configured, one Celery worker process; both started here as child processes and stopped by ``Stack.stop``.
The load benchmark (``run.py``) and the fault tests (tests/reliability/) share it.

The gunicorn configuration is the deployment's own ``gunicorn.conf.py`` (worker class, processes, threads
from ``GUNICORN_*`` variables), bound to a free loopback port.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url, seconds=300, process=None):
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before answering at {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer at {url} within {seconds} s")


def children(pid):
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after the last ")"
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return sorted(found)


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid, *, reaped=False):
    """User + system CPU seconds a process has used (0 when it is gone); ``reaped``: with the CPU of its children
    that have exited and been waited for (a gunicorn master's recycled or killed workers)."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    return (own + (int(fields[13]) + int(fields[14]) if reaped else 0)) / TICKS


def processes_matching(text):
    """Pids whose command line contains ``text`` (PostgreSQL backends show their database there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def machine_busy_seconds():
    """CPU seconds the whole machine has been busy (every core, every process), from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICKS


class CpuMeter:
    """CPU used during a run by: this process (the load client), gunicorn (master and workers), the Celery
    worker, the database's server processes serving ``database`` (PostgreSQL backends), and the machine."""

    def __init__(self, the_stack, database=None):
        self.stack = the_stack
        self.database = database
        self.start = self.sample()

    def pids(self):
        web = [self.stack.web.pid] + self.stack.gunicorn_workers() if self.stack.web else []
        worker = ([self.stack.worker.pid] + children(self.stack.worker.pid)) if self.stack.worker_alive() else []
        database = processes_matching(f" {self.database} ") if self.database else []
        return {"web": web, "celery": worker, "database": database}

    def sample(self):
        # the masters' figures include their exited workers (gunicorn recycles workers after max_requests)
        masters = {self.stack.web.pid if self.stack.web else None, self.stack.worker.pid if self.stack.worker else None}
        out = {
            group: {pid: cpu_seconds(pid, reaped=pid in masters) for pid in pids} for group, pids in self.pids().items()
        }
        out["client"] = time.process_time()
        out["machine"] = machine_busy_seconds()
        out["wall"] = time.monotonic()
        return out

    def used(self):
        end = self.sample()
        report = {
            "wall": end["wall"] - self.start["wall"],
            "client": end["client"] - self.start["client"],
            "machine": end["machine"] - self.start["machine"],
        }
        for group in ("web", "celery", "database"):
            report[group] = sum(v - self.start[group].get(pid, 0.0) for pid, v in end[group].items())
        report["others"] = report["machine"] - sum(report[g] for g in ("client", "web", "celery", "database"))
        return report


class Stack:
    """gunicorn (+ a Celery worker when ``environment`` has CELERY_BROKER_URL) for the given environment.

    ``environment``: what the processes get on top of os.environ (DATABASE_URL, CELERY_BROKER_URL,
    CAPTIONEVAL_VAR_DIR, GUNICORN_*...). ``log_dir``: where their output goes (one file each)."""

    def __init__(self, environment, log_dir, *, celery_concurrency=1):
        self.environment = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="annotation_site.settings",
            LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"),
            **environment,
        )
        self.environment.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.celery_concurrency = celery_concurrency
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.web = None
        self.worker = None
        self._worker_runs = 0

    @property
    def has_worker(self):
        return bool(self.environment.get("CELERY_BROKER_URL"))

    def _log(self, name):
        return open(self.log_dir / name, "ab")

    def start(self):
        env = dict(self.environment, PORT=str(self.port))
        self.web = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "annotation_site.wsgi",
                "--config",
                str(REPO / "gunicorn.conf.py"),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--access-logfile",
                "/dev/null",
            ],
            cwd=REPO,
            env=env,
            stdout=self._log("gunicorn.log"),
            stderr=subprocess.STDOUT,
        )
        if self.has_worker:
            self.start_worker()
        wait_for_http(f"{self.base}/healthz", process=self.web)
        return self

    def start_worker(self):
        self._worker_runs += 1
        self.worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "annotation_site",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                str(self.celery_concurrency),
                "--loglevel",
                "WARNING",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                f"load{self._worker_runs}-{os.getpid()}@%h",
            ],
            cwd=REPO,
            env=self.environment,
            stdout=self._log("celery.log"),
            stderr=subprocess.STDOUT,
        )
        return self.worker

    # --- faults -------------------------------------------------------------------------------------------

    def gunicorn_workers(self):
        return children(self.web.pid)

    def kill_gunicorn_worker(self):
        """SIGKILL one gunicorn worker process (the master starts a new one). Returns its pid."""
        pids = self.gunicorn_workers()
        if not pids:
            raise RuntimeError("gunicorn has no worker process")
        os.kill(pids[0], signal.SIGKILL)
        return pids[0]

    def kill_worker(self):
        """SIGKILL the whole Celery worker (main process and pool), as a crashed machine or the OOM killer
        would: nothing is acknowledged, nothing is handed back. Returns the pids killed."""
        if self.worker is None or self.worker.poll() is not None:
            return []
        pids = [self.worker.pid] + children(self.worker.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.worker.wait(timeout=30)
        return pids

    def worker_alive(self):
        return self.worker is not None and self.worker.poll() is None

    def web_alive(self):
        return self.web is not None and self.web.poll() is None

    def stop(self):
        for process in (self.worker, self.web):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in (self.worker, self.web):
            if process is None:
                continue
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
