"""Large exports go to the bucket with a presigned link: moto's S3 server on loopback, reached over HTTP."""

import csv
import io
import time
import urllib.request

import pytest

from annotation_site.crowd import exports, payments
from annotation_site.crowd.models import Policy, Study

from ..integration.test_s3_storage import BUCKET, s3_endpoint, s3_media  # noqa: F401  (fixtures)
from .conftest import FAILED, PASSED, worked

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _get(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=30) as response:
        return response.status, response.read()


def test_a_ledger_export_lands_in_the_bucket_with_a_working_presigned_link(s3_media, toy, settings):  # noqa: F811
    endpoint, client = s3_media
    settings.CROWD_EXPORT_EXPIRES = 600
    target = toy.add("t", [("1", 1), ("2", 1)])
    study = Study.objects.create(
        name="s3-study",
        provider="link",
        protocol="toy",
        object_id=target.object_id,
        target_name="t",
        status="published",
    )
    worked(toy, target, study, None, "anne", qc=PASSED)
    worked(toy, target, study, None, "ben", qc=FAILED)
    payments.record(target, payments.preview(toy, target, policy=Policy.APPROVE_PASSING), policy=Policy.APPROVE_PASSING)
    result = exports.export_ledger(study)
    assert result["key"].startswith("exports/ledgers/") and result["key"].endswith("s3-study-ledger.csv")
    assert result["url"].startswith(f"{endpoint}/{BUCKET}/exports/ledgers/")
    query = dict(part.split("=", 1) for part in result["url"].split("?", 1)[1].split("&"))
    assert "Signature" in query or "X-Amz-Signature" in query
    if "X-Amz-Expires" in query:  # SigV4
        assert query["X-Amz-Expires"] == "600"
    else:  # SigV2: an absolute expiry
        assert abs(int(query["Expires"]) - (time.time() + 600)) < 60
    status, body = _get(result["url"])
    assert status == 200 and len(body) == result["bytes"]
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert sorted((r["worker_id"], r["action"]) for r in rows) == [
        ("link:s3-study:anne", "approve"),
        ("link:s3-study:ben", "reject"),
    ]
    stored = client.get_object(Bucket=BUCKET, Key=result["key"])["Body"].read()
    assert stored == body


def test_without_a_bucket_the_error_names_the_variable(settings):
    settings.USE_S3 = False
    with pytest.raises(exports.ExportError, match="AWS_STORAGE_BUCKET_NAME"):
        exports.export_file("x", "a.csv", ["a\n"])
