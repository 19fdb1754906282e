"""Production mode (CAPTIONEVAL_MODE=production) passes Django's deployment checklist with no warning at all, and
refuses to start when a secret key is missing or DEBUG is on. Each run is a fresh subprocess, since settings are
read once per process."""

import secrets
import string

import pytest
from deployment_support import PYTHON, clean_environment, run

CHECK_DEPLOY = [PYTHON, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]


def random_key(length=60):
    alphabet = string.ascii_letters + string.digits + "!#%&()*+-.:;<=>?@[]^_{|}~"
    return "".join(secrets.choice(alphabet) for _ in range(length))


@pytest.fixture
def production(tmp_path):
    """The minimal production configuration: mode, a 60-character key, one host, SQLite in a temporary folder."""
    return {
        "CAPTIONEVAL_MODE": "production",
        "DJANGO_SECRET_KEY": random_key(),
        "DJANGO_ALLOWED_HOSTS": "example.org",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CAPTIONEVAL_VAR_DIR": str(tmp_path / "var"),
    }


def output(result):
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def test_check_deploy_passes_with_no_warning(production):
    result = run(CHECK_DEPLOY, clean_environment(**production))
    assert result.returncode == 0, output(result)
    assert "System check identified no issues" in result.stdout, output(result)
    assert "WARNING" not in result.stdout + result.stderr, output(result)


def test_check_deploy_run_fails_on_a_warning(production):
    """The same command is able to fail: switching HSTS off raises security.W004, a warning, which
    --fail-level WARNING turns into a non-zero exit."""
    result = run(CHECK_DEPLOY, clean_environment(**production, DJANGO_SECURE_HSTS_SECONDS="0"))
    assert result.returncode != 0, output(result)
    assert "security.W004" in result.stderr + result.stdout, output(result)


@pytest.mark.parametrize("key", [None, "", "short-" * 8], ids=["unset", "empty", "48-characters"])
def test_production_refuses_to_start_without_a_proper_secret_key(production, key):
    if key is None:
        del production["DJANGO_SECRET_KEY"]
    else:
        production["DJANGO_SECRET_KEY"] = key
    result = run(CHECK_DEPLOY, clean_environment(**production))
    assert result.returncode != 0, output(result)
    assert "ImproperlyConfigured" in result.stderr, output(result)
    assert "production mode needs DJANGO_SECRET_KEY (50 characters or more)" in result.stderr, output(result)


@pytest.mark.parametrize("value", ["1", "true", "on"])
def test_production_refuses_debug(production, value):
    result = run(CHECK_DEPLOY, clean_environment(**production, DJANGO_DEBUG=value))
    assert result.returncode != 0, output(result)
    assert "ImproperlyConfigured" in result.stderr, output(result)
    assert "DJANGO_DEBUG must be off in production mode" in result.stderr, output(result)


def test_the_refusals_are_specific_to_production(tmp_path):
    """Without the production switch the same incomplete environment loads (the embedded default)."""
    environment = clean_environment(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", CAPTIONEVAL_VAR_DIR=str(tmp_path / "var")
    )
    result = run([PYTHON, "manage.py", "check"], environment)
    assert result.returncode == 0, output(result)


@pytest.mark.parametrize("level", ["warning", "WARNING", " Info "])
def test_log_level_is_read_in_any_case(production, level):
    result = run(
        [PYTHON, "manage.py", "shell", "-c", "import logging; print(logging.getLevelName(logging.getLogger().level))"],
        clean_environment(**production, LOG_LEVEL=level),
    )
    assert result.returncode == 0, output(result)
    assert result.stdout.strip().splitlines()[-1] == level.strip().upper(), output(result)


def test_an_unknown_log_level_is_refused_with_a_clear_message(production):
    result = run(CHECK_DEPLOY, clean_environment(**production, LOG_LEVEL="loud"))
    assert result.returncode != 0 and "LOG_LEVEL must be one of debug, info, warning" in result.stderr, output(result)
