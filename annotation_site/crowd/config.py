"""Settings of crowd work, read from Django settings (which read them from the environment with
django-environ). A credential that is needed but missing raises ``MissingCredential`` naming the variable."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class MissingCredential(ImproperlyConfigured):
    pass


def setting(name, default=None):
    return getattr(settings, name, default)


def require(name, what):
    """The value of setting ``name``; MissingCredential (naming the environment variable) when empty."""
    value = getattr(settings, name, "")
    if not value:
        raise MissingCredential(
            f"{what} needs {name}: set the environment variable {name} (or add it to .env); see docs/crowd.md"
        )
    return value


def base_url():
    """Where participants reach this site (links made outside a request, e.g. by commands and in the Prolific
    study's URL): the platform's public address, ``CAPTIONEVAL_BASE_URL``."""
    return (setting("CAPTIONEVAL_BASE_URL") or "http://127.0.0.1:8000").rstrip("/")
