"""Fixtures of the deployment tests (helpers live in deployment_support.py)."""

import copy

import pytest
import yaml
from deployment_support import COMPOSE_FILE, OPERATOR_ENV, clean_environment, interpolate


@pytest.fixture(scope="session")
def compose_text():
    return COMPOSE_FILE.read_text()


@pytest.fixture(scope="session")
def _compose_raw(compose_text):
    return yaml.safe_load(compose_text)


@pytest.fixture
def compose_raw(_compose_raw):
    """The compose document as loaded (anchors and merge keys resolved, variables not interpolated)."""
    return copy.deepcopy(_compose_raw)


@pytest.fixture
def compose(compose_raw):
    """The compose document interpolated with the operator's variables, as `docker compose config` shows it."""
    return interpolate(compose_raw, OPERATOR_ENV)


@pytest.fixture
def production_environment(compose, tmp_path):
    """The environment the compose file gives the application containers, with the parts that need the other
    containers replaced by local equivalents: SQLite in a temporary folder instead of PostgreSQL, static and
    var folders in the temporary folder instead of the image's /app."""
    environment = dict(compose["services"]["web"]["environment"])
    environment.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CAPTIONEVAL_VAR_DIR=str(tmp_path / "var"),
        STATIC_ROOT=str(tmp_path / "static"),
    )
    return clean_environment(**environment)
