# CaptionEval application image: one image for the web server (gunicorn), the Celery worker, Celery beat and
# the one-shot jobs (migrate, createbucket). See docs/deployment.md.
#
# Everything the container needs is installed here, at build time: Python packages come from
# requirements.lock, the pinned full tree of requirements.txt (imageio-ffmpeg's wheel carries its own ffmpeg binary), static files are collected into
# the image, and nothing is downloaded when a container starts.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CAPTIONEVAL_VAR_DIR=/app/var \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app

# An unprivileged account; the home folder holds gunicorn's control socket.
RUN groupadd --system --gid 10001 captioneval \
    && useradd --system --uid 10001 --gid captioneval --create-home --home-dir /home/captioneval \
       --shell /usr/sbin/nologin captioneval

# Java runs the coco-caption tools (PTB tokenizer, METEOR) that metrics_eval calls to compute caption metrics.
RUN apt-get update \
    && apt-get install -y --no-install-recommends default-jre-headless \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so code changes do not reinstall them.
COPY requirements.txt requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock

COPY . .

# Static files are part of the image: every web replica, on any machine, serves the same hashed files with
# WhiteNoise and needs no shared volume. Production mode selects the manifest storage the site runs with; the
# key below exists only for this build step (settings refuse to load in production mode without one) and is
# not stored in the image's environment.
RUN CAPTIONEVAL_MODE=production \
    DJANGO_SECRET_KEY=build-time-only-collectstatic-key-not-used-by-any-running-container \
    python manage.py collectstatic --noinput \
    && rm -rf /app/var \
    && mkdir -p /app/var \
    && chown captioneval:captioneval /app/var

USER captioneval:captioneval

EXPOSE 8000

CMD ["gunicorn", "--config", "gunicorn.conf.py", "annotation_site.wsgi"]
