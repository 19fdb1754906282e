"""Per-installation secrets for development and demo installs (no Django imports: settings use it).

Outside production mode no ``DJANGO_SECRET_KEY`` is required, but the key must still be secret: it signs
sessions, assignment and entry links and completion codes. So each installation makes its own random key on
first run and keeps it in ``VAR_DIR/secret_key`` (mode 0600). The repository holds no key at all.
"""

import os
import secrets
import tempfile
from pathlib import Path

KEY_FILE = "secret_key"
MIN_LENGTH = 50


class SecretKeyError(Exception):
    pass


def installation_secret_key(var_dir):
    """The key stored under ``var_dir``, made (64 random URL-safe bytes) on first call.

    Creation is atomic (written to a private temporary file, then hard-linked into place): two processes
    starting together agree on one key, and nobody ever reads a half-written file."""
    var_dir = Path(var_dir)
    path = var_dir / KEY_FILE
    key = _read(path)
    if key is not None:
        return key
    try:
        var_dir.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".secret_key-", dir=var_dir)  # created 0600
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(64) + "\n")
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process won the race: use its key
        finally:
            os.unlink(temporary)
    except OSError as error:
        raise SecretKeyError(
            f"cannot keep the installation's secret key in {path}: {error}. Make {var_dir} "
            "writable, or set DJANGO_SECRET_KEY (50 characters or more)"
        ) from error
    key = _read(path)
    if key is None:
        raise SecretKeyError(
            f"{path} holds no usable secret key (50 characters or more): delete it to make a "
            "new one, or set DJANGO_SECRET_KEY"
        )
    return key


def _read(path):
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        return None
    if len(key) < MIN_LENGTH:
        raise SecretKeyError(
            f"{path} holds no usable secret key (50 characters or more): delete it to make a new "
            "one, or set DJANGO_SECRET_KEY"
        )
    return key
