"""Helpers of the deployment tests: the compose file, Compose-style variable interpolation, and a clean
environment for running the application in production mode in a subprocess (no Docker engine needed)."""

import os
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
PYTHON = sys.executable
VENV_BIN = Path(sys.executable).parent

APP_SERVICES = ("web", "worker", "beat", "migrate")
ALL_SERVICES = {"db", "redis", "s3", "createbucket", "migrate", "web", "worker", "beat"}

# Values an operator would export before `docker compose up` (the variables marked `:?` in the file).
OPERATOR_ENV = {
    "DJANGO_SECRET_KEY": "Vq3-"
    + "".join(secrets.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(56)),
    "DJANGO_ALLOWED_HOSTS": "captions.example.org",
    "POSTGRES_PASSWORD": "pgSecret4711",
    "AWS_ACCESS_KEY_ID": "captioneval-admin",
    "AWS_SECRET_ACCESS_KEY": "s3Secret4711abcd",
    "AWS_ENDPOINT_URL_S3": "https://media.example.org",
}

# Variables the application reads; stripped from the environment of subprocesses so that the developer's own
# shell cannot change what a test sees.
_APP_PREFIXES = (
    "DJANGO_",
    "CAPTIONEVAL_",
    "DATABASE_",
    "CELERY_",
    "AWS_",
    "S3_",
    "GUNICORN_",
    "STATIC_ROOT",
    "MEDIA_ROOT",
    "LOG_LEVEL",
    "TIME_ZONE",
    "PORT",
    "FORWARDED_ALLOW_IPS",
)


class InterpolationError(Exception):
    """What `docker compose` reports for a `${VAR:?message}` whose variable is missing."""


_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<operator>:?[-?+])(?P<argument>[^}]*))?\}"
    r"|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)


def interpolate_string(text, environment):
    """Compose's variable interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error},
    ${VAR?error}, ${VAR:+alternative}, ${VAR+alternative} (the compose specification, "Interpolation")."""

    def replace(match):
        if match.group("escaped"):
            return "$"
        name = match.group("braced") or match.group("named")
        operator, argument = match.group("operator"), match.group("argument")
        value = environment.get(name)
        unset_or_empty = value is None or value == ""
        if operator is None:
            return value or ""
        if operator == ":-":
            return argument if unset_or_empty else value
        if operator == "-":
            return argument if value is None else value
        if operator == ":?":
            if unset_or_empty:
                raise InterpolationError(f"required variable {name} is missing a value: {argument}")
            return value
        if operator == "?":
            if value is None:
                raise InterpolationError(f"required variable {name} is missing a value: {argument}")
            return value
        if operator == ":+":
            return "" if unset_or_empty else argument
        return "" if value is None else argument  # "+"

    return _VARIABLE.sub(replace, text)


def interpolate(data, environment):
    """Interpolate every string value (not keys) of a loaded compose document, as Compose does."""
    if isinstance(data, dict):
        return {key: interpolate(value, environment) for key, value in data.items()}
    if isinstance(data, list):
        return [interpolate(value, environment) for value in data]
    if isinstance(data, str):
        return interpolate_string(data, environment)
    return data


def compose_variables(data):
    """Every variable name referenced in the compose document ($$ escapes excluded)."""
    names = set()

    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            for match in _VARIABLE.finditer(node):
                name = match.group("braced") or match.group("named")
                if name:
                    names.add(name)

    walk(data)
    return names


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_environment(**values):
    """os.environ without anything the application reads, plus ``values``; the venv's bin first on PATH."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(_APP_PREFIXES)}
    environment["PATH"] = f"{VENV_BIN}{os.pathsep}{environment.get('PATH', '')}"
    environment.update({key: str(value) for key, value in values.items()})
    return environment


def run(arguments, environment, timeout=180, cwd=REPO):
    return subprocess.run(arguments, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)
