"""The commands docker-compose.yml runs, run here as plain processes with the environment the compose file gives
the containers (SQLite and temporary folders standing in for PostgreSQL and the image's /app): the migrate job,
the image's collectstatic step, gunicorn with gunicorn.conf.py plus the web health check, the Celery worker and
beat, and the bucket job against an S3 server (moto)."""

import http.client
import json
import signal
import subprocess
import time

import boto3
import pytest
from deployment_support import OPERATOR_ENV, PYTHON, REPO, clean_environment, free_port, interpolate, run


def output(result):
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


class Process:
    """A long-running command started for one test, stopped (SIGTERM, then SIGKILL) at the end."""

    def __init__(self, arguments, environment, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(arguments, cwd=REPO, env=environment, stdout=self.log, stderr=subprocess.STDOUT)

    def text(self):
        self.log.flush()
        return self.log_path.read_text()

    def wait_for(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.process.poll() is not None:
                pytest.fail(f"exited with {self.process.returncode} before {what}:\n{self.text()}")
            time.sleep(0.3)
        pytest.fail(f"no {what} within {timeout} s:\n{self.text()}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def processes():
    started = []
    yield started
    for process in reversed(started):
        process.stop()


# --- one-shot jobs -------------------------------------------------------------------------------------------------


def test_migrate_job_command_migrates_and_runs_the_deploy_check(compose, production_environment):
    """The job succeeds and logs Django's deployment checklist (that the checklist has no warning at all is
    test_deployment_settings.py's business; here warnings are logged, only errors would stop the start-up)."""
    result = run(compose["services"]["migrate"]["command"], production_environment, timeout=300)
    assert result.returncode == 0, output(result)
    assert "Applying contenttypes.0001_initial... OK" in result.stdout, output(result)
    assert "System check identified" in result.stdout + result.stderr, output(result)
    # A second run (every `docker compose up`) is a no-op that still succeeds.
    again = run(compose["services"]["migrate"]["command"], production_environment, timeout=300)
    assert again.returncode == 0 and "No migrations to apply." in again.stdout, output(again)


def test_migrate_job_fails_when_the_database_is_unreachable(compose, production_environment):
    """...so that web and worker (service_completed_successfully) do not start against a missing schema."""
    environment = {
        **production_environment,
        "DATABASE_URL": f"postgres://captioneval:secret@127.0.0.1:{free_port()}/captioneval",
    }
    result = run(compose["services"]["migrate"]["command"], environment, timeout=120)
    assert result.returncode != 0, output(result)
    assert "OperationalError" in result.stderr, output(result)


def _dockerfile_collectstatic_environment():
    """The variables the Dockerfile's collectstatic step sets (production mode and a build-only key)."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if "collectstatic" in line)
    words = line.split()
    assert words[0] == "RUN"
    assignments = [word for word in words[1 : words.index("python")] if "=" in word]
    return dict(assignment.split("=", 1) for assignment in assignments)


@pytest.fixture(scope="module")
def collected_static(tmp_path_factory):
    """The image's collectstatic step, run with the Dockerfile's own variables into a temporary STATIC_ROOT."""
    root = tmp_path_factory.mktemp("image")
    variables = _dockerfile_collectstatic_environment()
    assert variables["CAPTIONEVAL_MODE"] == "production"
    environment = clean_environment(**variables, STATIC_ROOT=root / "static", CAPTIONEVAL_VAR_DIR=root / "var")
    result = run([PYTHON, "manage.py", "collectstatic", "--noinput"], environment, timeout=300)
    assert result.returncode == 0, output(result)
    return root / "static"


def test_image_collectstatic_step_writes_the_manifest_production_serves_from(collected_static):
    manifest = json.loads((collected_static / "staticfiles.json").read_text())
    hashed = manifest["paths"]["admin/css/base.css"]
    assert hashed != "admin/css/base.css" and (collected_static / hashed).is_file()


# --- web -----------------------------------------------------------------------------------------------------------


def _request(port, path, host, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers={"Host": host, **(headers or {})})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response, body


def test_web_command_serves_behind_a_proxy_and_passes_its_health_check(
    compose, production_environment, collected_static, processes, tmp_path
):
    web = compose["services"]["web"]
    port = free_port()
    environment = {
        **production_environment,
        "STATIC_ROOT": str(collected_static),
        "PORT": str(port),
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "2",
    }
    healthcheck = web["healthcheck"]["test"][1:]  # ["CMD", ...] -> the command

    def healthy():
        return run(healthcheck, environment, timeout=30).returncode == 0

    server = Process(web["command"], environment, tmp_path / "gunicorn.log")
    processes.append(server)
    server.wait_for(healthy, 60, "healthy answer from docker/healthcheck.py")
    log = server.text()
    assert f"Listening at: http://0.0.0.0:{port}" in log and "gthread" in log, log

    host = compose["services"]["web"]["environment"]["DJANGO_ALLOWED_HOSTS"]
    proxied = {"X-Forwarded-Proto": "https"}
    # static files from the image, served by WhiteNoise under their hashed names, cached for long
    hashed = json.loads((collected_static / "staticfiles.json").read_text())["paths"]["admin/css/base.css"]
    response, body = _request(port, f"/static/{hashed}", host, proxied)
    assert response.status == 200 and b"{" in body
    assert "max-age=315360000" in response.getheader("Cache-Control", "")
    # production hardening is on: plain HTTP is redirected, HSTS is sent over HTTPS, unknown hosts refused
    response, _ = _request(port, "/accounts/login/", host)
    assert response.status == 301 and response.getheader("Location") == f"https://{host}/accounts/login/"
    response, _ = _request(port, "/healthz", host, proxied)
    assert response.status == 200 and "max-age=31536000" in response.getheader("Strict-Transport-Security", "")
    response, _ = _request(port, "/healthz", "attacker.example", proxied)
    assert response.status == 400

    # The health check is able to fail: a host Django refuses, and a port where nothing listens.
    wrong_host = run(healthcheck, {**environment, "DJANGO_ALLOWED_HOSTS": "other.example"}, timeout=30)
    assert wrong_host.returncode == 1 and "HTTP 400" in wrong_host.stderr, output(wrong_host)
    nothing = run(healthcheck, {**environment, "PORT": str(free_port())}, timeout=30)
    assert nothing.returncode == 1 and "unhealthy" in nothing.stderr, output(nothing)


def test_web_boots_with_a_lower_case_log_level(compose, production_environment, collected_static, processes, tmp_path):
    """LOG_LEVEL is shared by gunicorn (any case) and Django's logging: "warning" must not stop the workers."""
    web = compose["services"]["web"]
    port = free_port()
    environment = {
        **production_environment,
        "STATIC_ROOT": str(collected_static),
        "PORT": str(port),
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "1",
        "LOG_LEVEL": "warning",
    }
    healthcheck = web["healthcheck"]["test"][1:]
    server = Process(web["command"], environment, tmp_path / "gunicorn.log")
    processes.append(server)
    server.wait_for(
        lambda: run(healthcheck, environment, timeout=30).returncode == 0, 60, "healthy answer with LOG_LEVEL=warning"
    )
    assert "Worker failed to boot" not in server.text()


# --- Celery ----------------------------------------------------------------------------------------------------------


def _celery_environment(production_environment, **extra):
    # An in-memory broker stands in for Redis; the worker and beat start the same way.
    return {**production_environment, "CELERY_BROKER_URL": "memory://", **extra}


def test_worker_command_starts_a_worker_with_the_configured_concurrency(
    compose_raw, processes, tmp_path, production_environment
):
    command = interpolate(
        compose_raw["services"]["worker"]["command"], {**OPERATOR_ENV, "CELERY_WORKER_CONCURRENCY": "3"}
    )
    assert command[command.index("--concurrency") + 1] == "3"
    worker = Process(command, _celery_environment(production_environment), tmp_path / "worker.log")
    processes.append(worker)
    worker.wait_for(lambda: " ready." in worker.text(), 90, "'ready' from the worker")
    log = worker.text()
    assert "concurrency: 3 (prefork)" in log, log
    assert "annotation_site.corpus.tasks.probe_pending_videos" in log, log  # tasks were discovered


def test_beat_command_starts_and_keeps_its_schedule_file(compose, processes, tmp_path, production_environment):
    command = [word.replace("/app/var", str(tmp_path)) for word in compose["services"]["beat"]["command"]]
    beat = Process(command, _celery_environment(production_environment), tmp_path / "beat.log")
    processes.append(beat)
    beat.wait_for(lambda: "beat: Starting..." in beat.text(), 60, "'beat: Starting...'")
    beat.wait_for(lambda: any(tmp_path.glob("celerybeat-schedule*")), 30, "schedule file")


# --- S3 bucket job -----------------------------------------------------------------------------------------------


@pytest.fixture
def s3_server(processes, tmp_path):
    """A local S3 API (moto's server) standing in for the compose file's `s3` service."""
    port = free_port()
    server = Process(["moto_server", "-H", "127.0.0.1", "-p", str(port)], clean_environment(), tmp_path / "moto.log")
    processes.append(server)

    def answering():
        try:
            _request(port, "/", "127.0.0.1")
            return True
        except OSError:
            return False

    server.wait_for(answering, 30, "answer from moto_server")
    return f"http://127.0.0.1:{port}"


def test_createbucket_job_creates_the_bucket_once(compose, s3_server):
    job = compose["services"]["createbucket"]
    environment = clean_environment(**{**job["environment"], "S3_BOOTSTRAP_ENDPOINT_URL": s3_server})
    first = run(job["command"], environment, timeout=60)
    assert first.returncode == 0 and "created" in first.stdout, output(first)
    second = run(job["command"], environment, timeout=60)
    assert second.returncode == 0 and "exists" in second.stdout, output(second)
    s3 = boto3.client(
        "s3", endpoint_url=s3_server, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    assert job["environment"]["AWS_STORAGE_BUCKET_NAME"] in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_createbucket_job_fails_when_the_store_never_answers(compose):
    job = compose["services"]["createbucket"]
    environment = clean_environment(
        **{
            **job["environment"],
            "S3_BOOTSTRAP_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
            "S3_BOOTSTRAP_TIMEOUT": "1",
        }
    )
    result = run(job["command"], environment, timeout=60)
    assert result.returncode == 1 and "could not ensure bucket" in result.stderr, output(result)
