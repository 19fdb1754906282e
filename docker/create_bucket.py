"""One-shot job: make sure the media bucket exists on the S3 store (the ``createbucket`` service).

Uses boto3 from the application image, so it works with any S3-compatible store (the bundled one, AWS S3,
another server) and needs no extra client image. Safe to run any number of times: an existing bucket owned by
these credentials is left as it is. The bucket stays private; browsers read videos through presigned URLs.

Environment:
- ``AWS_STORAGE_BUCKET_NAME``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_S3_REGION_NAME``
  (default us-east-1): as for the application.
- ``S3_BOOTSTRAP_ENDPOINT_URL``: the address this job reaches the store at (inside the compose network,
  ``http://s3:9000``); defaults to ``AWS_ENDPOINT_URL_S3``; empty means AWS itself.
- ``S3_BOOTSTRAP_TIMEOUT``: seconds to keep retrying while the store starts (default 60).
"""

import os
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError


def client():
    endpoint = os.environ.get("S3_BOOTSTRAP_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_S3") or None
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=os.environ.get("AWS_S3_REGION_NAME") or "us-east-1",
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID") or None,
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY") or None,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
    )


def ensure_bucket(s3, bucket, region):
    """Create ``bucket`` unless it exists. Returns "exists" or "created"; raises on any other answer."""
    try:
        s3.head_bucket(Bucket=bucket)
        return "exists"
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket", "NotFound"):
            raise  # 403: the name belongs to someone else, or the credentials are wrong
    arguments = {"Bucket": bucket}
    if region != "us-east-1":
        arguments["CreateBucketConfiguration"] = {"LocationConstraint": region}
    try:
        s3.create_bucket(**arguments)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "BucketAlreadyOwnedByYou":
            return "exists"
        raise
    return "created"


def _retryable(error):
    """Connection failures and 5xx answers (a store still initialising) are worth another try."""
    if isinstance(error, ClientError):
        return error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500
    return True


def main():
    bucket = os.environ.get("AWS_STORAGE_BUCKET_NAME", "")
    if not bucket:
        print("AWS_STORAGE_BUCKET_NAME is not set", file=sys.stderr)
        return 2
    region = os.environ.get("AWS_S3_REGION_NAME") or "us-east-1"
    deadline = time.monotonic() + float(os.environ.get("S3_BOOTSTRAP_TIMEOUT", "60"))
    s3 = client()
    while True:
        try:
            outcome = ensure_bucket(s3, bucket, region)
        except (BotoCoreError, ClientError) as error:
            if not _retryable(error) or time.monotonic() > deadline:
                print(f"could not ensure bucket {bucket!r}: {error}", file=sys.stderr)
                return 1
            time.sleep(2)  # the store is still starting
            continue
        print(f"bucket {bucket!r} {outcome}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
