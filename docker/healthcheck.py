"""Health check of the ``web`` container: ``GET /healthz`` on the local gunicorn must answer 200 "ok".

Standard library only and no Django import, so it costs a few milliseconds. The request carries a Host
header Django accepts (the first entry of ``DJANGO_ALLOWED_HOSTS``; a bare ``localhost`` would be rejected
in production) and ``X-Forwarded-Proto: https``, as the proxy in front would send it.

Exit status 0 when healthy, 1 otherwise (what Docker's HEALTHCHECK expects).
"""

import http.client
import os
import sys


def allowed_host():
    hosts = [h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h.strip()]
    for host in hosts:
        if host != "*":
            return host.lstrip(".")  # ".example.org" also matches example.org itself
    return "localhost"


def main():
    port = int(os.environ.get("PORT", "8000"))
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/healthz", headers={"Host": allowed_host(), "X-Forwarded-Proto": "https"})
        response = connection.getresponse()
        body = response.read(64)
    except OSError as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1
    if response.status == 200 and body.strip() == b"ok":
        return 0
    print(f"unhealthy: HTTP {response.status} {body[:64]!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
