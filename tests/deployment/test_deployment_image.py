"""The Dockerfile, .dockerignore and gunicorn.conf.py, checked as text and data (no Docker engine here)."""

import fnmatch
import json
import re

import pytest
from deployment_support import REPO


def instructions():
    """The Dockerfile as (INSTRUCTION, arguments) pairs: comments dropped, continuation lines joined."""
    lines = [line for line in (REPO / "Dockerfile").read_text().splitlines() if not line.lstrip().startswith("#")]
    text = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    result = []
    for line in text.splitlines():
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            result.append((keyword.upper(), arguments.strip()))
    return result


def test_base_image_is_python_311_slim():
    froms = [arguments for name, arguments in instructions() if name == "FROM"]
    assert froms == ["python:3.11-slim"]


def test_the_locked_requirements_are_copied_and_installed_before_the_code():
    steps = instructions()
    copy_requirements = next(
        i for i, (name, args) in enumerate(steps) if name == "COPY" and "requirements.lock" in args
    )
    install = next(
        i
        for i, (name, args) in enumerate(steps)
        if name == "RUN" and re.search(r"\bpip install\b.*-r requirements\.lock", args)
    )
    copy_code = next(i for i, (name, args) in enumerate(steps) if name == "COPY" and args.split() == [".", "."])
    assert copy_requirements < install < copy_code


def test_runs_as_an_unprivileged_user():
    steps = instructions()
    users = [(index, arguments) for index, (name, arguments) in enumerate(steps) if name == "USER"]
    assert users, "no USER instruction: the container would run as root"
    index, user = users[-1]
    name = user.split(":")[0]
    assert name not in ("root", "0")
    created = [arguments for name_, arguments in steps[:index] if name_ == "RUN" and "useradd" in arguments]
    assert created and re.search(rf"\b{name}\b", created[0])
    # nothing after USER switches back or installs anything
    assert not [s for s in steps[index + 1 :] if s[0] in ("USER", "RUN")]


def test_command_is_the_web_server_the_compose_file_runs(compose):
    commands = [arguments for name, arguments in instructions() if name in ("CMD", "ENTRYPOINT")]
    assert commands, "neither CMD nor ENTRYPOINT"
    cmd = json.loads([arguments for name, arguments in instructions() if name == "CMD"][-1])  # exec form
    assert cmd == compose["services"]["web"]["command"]


def test_static_files_are_collected_at_build_time_in_production_mode():
    runs = [arguments for name, arguments in instructions() if name == "RUN" and "collectstatic" in arguments]
    assert len(runs) == 1 and "CAPTIONEVAL_MODE=production" in runs[0] and "--noinput" in runs[0]
    environment = " ".join(arguments for name, arguments in instructions() if name == "ENV")
    assert "STATIC_ROOT=" in environment
    assert "DJANGO_SECRET_KEY" not in environment  # the build-only key is not baked into the environment


def test_nothing_is_downloaded_outside_the_package_registries():
    """pip and Debian's apt are registries; no raw downloads, no tool that fetches its own binaries."""
    text = (REPO / "Dockerfile").read_text() + "".join(
        p.read_text() for p in (REPO / "docker").iterdir() if p.is_file()
    )
    assert not re.search(r"\b(curl|wget)\b|ADD\s+https?://|playwright install", text)


def test_java_is_installed_for_the_caption_metrics():
    runs = " ".join(arguments for name, arguments in instructions() if name == "RUN")
    assert re.search(r"apt-get install -y --no-install-recommends default-jre-headless", runs)


def dockerignore_patterns():
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(path):
    for pattern in dockerignore_patterns():
        pattern = pattern.rstrip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if any(
            fnmatch.fnmatch(prefix, candidate) or fnmatch.fnmatch(parts[-1], candidate)
            for candidate in candidates
            for prefix in prefixes
        ):
            return True
    return False


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".venv/bin/python",
        ".git/config",
        "var/captioneval.sqlite3",
        "annotation_site/__pycache__/settings.cpython-311.pyc",
        "tests/conftest.py",
    ],
)
def test_local_state_and_secrets_stay_out_of_the_build_context(path):
    assert ignored(path)


@pytest.mark.parametrize(
    "path",
    [
        "manage.py",
        "requirements.txt",
        "requirements.lock",
        "gunicorn.conf.py",
        "docker/healthcheck.py",
        "docker/create_bucket.py",
        "annotation_site/settings.py",
        "templates/base.html",
        "static/css",
        "annotation_site/corpus/migrations/0001_initial.py",
    ],
)
def test_what_the_containers_run_is_in_the_build_context(path):
    assert (REPO / path).exists(), path
    assert not ignored(path), path


def test_gunicorn_configuration_is_accepted_by_gunicorn(monkeypatch):
    from gunicorn.config import Config

    for name in ("PORT", "GUNICORN_WORKERS", "GUNICORN_THREADS", "GUNICORN_TIMEOUT", "LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GUNICORN_WORKERS", "5")
    namespace = {"__file__": str(REPO / "gunicorn.conf.py")}
    exec(compile((REPO / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)
    config = Config()
    for key, value in namespace.items():
        if key in config.settings:
            config.set(key, value)  # runs gunicorn's own validators
    assert config.bind == ["0.0.0.0:8000"]
    assert config.workers == 5
    assert config.worker_class_str == "gthread" and config.threads == 4
    assert config.timeout == 120
    assert config.accesslog == "-" and config.errorlog == "-"
    unknown = {
        key
        for key in namespace
        if not key.startswith("_") and key not in config.settings and not callable(namespace[key]) and key != "os"
    }
    assert not unknown, f"not gunicorn settings: {unknown}"
