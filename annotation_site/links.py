"""Absolute links for places without a request (management commands print worker and invitation links).

Pages build links from the request (``request.build_absolute_uri``); commands take the platform's public
address from ``--base-url`` or the ``CAPTIONEVAL_BASE_URL`` setting (default ``http://127.0.0.1:8000``)."""

from django.conf import settings


def absolute_url(path, base_url=None):
    """``path`` (from ``reverse``) on the platform's public address."""
    return (base_url or settings.CAPTIONEVAL_BASE_URL).rstrip("/") + path
