"""Gunicorn configuration for CaptionEval (used by the ``web`` service in docker-compose.yml).

Every value can be changed through the environment, so scaling the web tier needs no new image:

- ``PORT``               listening port (default 8000; the compose file publishes it).
- ``GUNICORN_WORKERS``   worker processes (default: CPUs available to the process + 1, at most 8: with threads,
                         more processes than that only share the same cores, and under load each costs CPU per
                         request; docs/reliability.md has the measurements).
- ``GUNICORN_THREADS``   threads per worker (default 4). Each thread may hold one database connection
                         (``CONN_MAX_AGE``), so one web container uses up to workers x threads connections.
- ``GUNICORN_WORKER_CLASS`` ``gthread`` (default: threads, keep-alive connections) or ``sync`` (one request at a
                         time per process, no keep-alive). docs/reliability.md has what each gave under load.
- ``GUNICORN_TIMEOUT``   seconds before a silent worker is restarted (default 120: dataset uploads are up to
                         50 MB and imports validate them in the request).
- ``GUNICORN_MAX_REQUESTS`` requests after which a worker is replaced (default 20000, plus up to 10 % at random):
                         a new worker costs a second or more of CPU to start and its first requests are slow, so
                         under load (300 requests/s) 2000 replaced a worker every few seconds.
- ``LOG_LEVEL``          shared with Django's logging (default INFO; any case: ``warning`` or ``WARNING``).

Videos never pass through gunicorn in production: pages link to presigned S3 URLs. Static files are served
by WhiteNoise from the image. ``X-Forwarded-Proto`` from the proxy in front is read by Django
(``SECURE_PROXY_SSL_HEADER``); gunicorn's own ``forwarded_allow_ips`` keeps its default unless the standard
``FORWARDED_ALLOW_IPS`` variable is set.
"""

import os


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


bind = f"0.0.0.0:{int(os.environ.get('PORT', '8000'))}"
workers = int(os.environ.get("GUNICORN_WORKERS", min(_cpus() + 1, 8)))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so that slow memory growth (pandas, numpy) cannot accumulate.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = max_requests // 10
# Heartbeat files on tmpfs: a container's overlay filesystem can stall them and get workers killed.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "INFO").strip().lower()


def post_worker_init(worker):
    """Warm each worker before it takes requests (URL conf, templates: annotation_site/warm.py), so that a worker
    started or restarted (``max_requests``) in the middle of a burst of arrivals answers as fast as the others."""
    from annotation_site.warm import warm_up

    worker.log.info("warmed up in %.2f s", warm_up())
