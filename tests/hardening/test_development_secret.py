"""Outside production mode the secret key is random per installation, made on first run and kept under var/;
the repository holds no key (issue #11, "Development secret"). Settings are read once per process, so each
check runs manage.py in a fresh subprocess."""

import os
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRINT_KEY = [sys.executable, "manage.py", "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)"]


def settings_key(var_dir):
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CAPTIONEVAL_", "DATABASE_", "CELERY_"))
    }
    environment.update(CAPTIONEVAL_VAR_DIR=str(var_dir), DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}")
    result = subprocess.run(PRINT_KEY, cwd=REPO, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_each_installation_gets_its_own_random_key_kept_under_var(tmp_path):
    first, second = tmp_path / "install-a", tmp_path / "install-b"
    key_a = settings_key(first)
    assert len(key_a) >= 50
    assert settings_key(second) != key_a  # no shared constant: another install cannot forge this one's links
    assert settings_key(first) == key_a  # kept: sessions and links survive a restart
    stored = first / "secret_key"
    assert stored.read_text().strip() == key_a
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600


def test_a_damaged_key_file_is_refused_not_replaced_silently(tmp_path):
    (tmp_path / "secret_key").write_text("short\n")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CAPTIONEVAL_", "DATABASE_"))}
    environment.update(CAPTIONEVAL_VAR_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    result = subprocess.run(PRINT_KEY, cwd=REPO, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "holds no usable secret key" in result.stderr and "DJANGO_SECRET_KEY" in result.stderr


def test_the_repository_holds_no_development_key():
    settings_text = (REPO / "annotation_site" / "settings.py").read_text()
    assert "django-insecure" not in settings_text
    assert 'SECRET_KEY = env("DJANGO_SECRET_KEY", default="")' in settings_text
