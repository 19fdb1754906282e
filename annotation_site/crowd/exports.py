"""Large exports (ledgers, judgments, datasets) written to the configured S3 bucket, answered with a presigned
download link that expires (``CROWD_EXPORT_EXPIRES`` seconds). Uses the media storage's S3 settings
(``AWS_STORAGE_BUCKET_NAME``, ``AWS_ENDPOINT_URL_S3``, keys), so any S3-compatible server works."""

import tempfile

from django.conf import settings
from django.core.files import File
from django.core.files.storage import storages
from django.utils import timezone

from annotation_site import spreadsheet_csv

from . import config


class ExportError(Exception):
    pass


def _storage():
    if not getattr(settings, "USE_S3", False):
        raise ExportError(
            "exports to S3 need AWS_STORAGE_BUCKET_NAME (and AWS_ENDPOINT_URL_S3 / keys for other "
            "servers than AWS): set the environment variable AWS_STORAGE_BUCKET_NAME"
        )
    return storages["default"]


def export_file(kind, name, chunks, content_type="text/csv"):
    """Write ``chunks`` (str or bytes pieces, so big exports never sit in memory whole) to
    ``exports/KIND/TIMESTAMP-NAME`` in the bucket; returns ``{"key", "url", "expires_in", "bytes"}``."""
    storage = _storage()
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
    key = f"exports/{kind}/{stamp}-{name}"
    size = 0
    with tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024) as spool:
        for chunk in chunks:
            data = chunk.encode() if isinstance(chunk, str) else chunk
            size += len(data)
            spool.write(data)
        spool.seek(0)
        stored = storage.save(key, File(spool, name=name))
    expires = int(config.setting("CROWD_EXPORT_EXPIRES", 24 * 3600))
    try:
        url = storage.url(stored, expire=expires)
    except TypeError:  # storages without per-call expiry
        url = storage.url(stored)
    return {"key": stored, "url": url, "expires_in": expires, "bytes": size}


def export_ledger(study):
    from .staff_views import LEDGER_COLUMNS, ledger_rows

    return export_file(
        "ledgers", f"{study.name}-ledger.csv", spreadsheet_csv.stream(LEDGER_COLUMNS, ledger_rows(study))
    )
