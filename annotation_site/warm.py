"""Warm a web worker before it takes requests (gunicorn's ``post_worker_init``, in ``gunicorn.conf.py``): import
the URL conf (and with it every view module) and compile the templates, which Django otherwise does on the
first requests. A fresh worker (started, or restarted after ``max_requests``) then answers its first requests
as fast as the others: in a burst of crowd arrivals a cold worker spent about half a second of CPU on this
while arrivals queued behind it (docs/crowd.md, "Performance")."""

import logging
import time
from pathlib import Path

log = logging.getLogger(__name__)

# Modules that the participants' pages import on first use (the crowd providers, boto3 with MTurk's)
LAZY_IMPORTS = (
    "annotation_site.crowd.providers.link",
    "annotation_site.crowd.providers.mturk",
    "annotation_site.crowd.providers.prolific",
)


def warm_up():
    """Import the URL conf (and build its reverse map), the modules of ``LAZY_IMPORTS``, the static files storage,
    and compile every template of the project's template folders; returns seconds."""
    import importlib

    from django.conf import settings
    from django.contrib.staticfiles.storage import staticfiles_storage
    from django.template import TemplateDoesNotExist, TemplateSyntaxError
    from django.template.loader import get_template
    from django.urls import get_resolver

    began = time.perf_counter()
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018  (imports the URL conf and the views)
    resolver.reverse_dict  # noqa: B018  (what {% url %} and reverse() read)
    for name in LAZY_IMPORTS:
        importlib.import_module(name)
    staticfiles_storage.url("css/app.css")
    for folder in (Path(d) for engine in settings.TEMPLATES for d in engine.get("DIRS", [])):
        for path in sorted(folder.rglob("*.html")):
            try:
                get_template(path.relative_to(folder).as_posix())  # the cached loader keeps it
            except (TemplateDoesNotExist, TemplateSyntaxError) as exc:  # reported, never fatal to the worker
                log.warning("warm-up: template %s: %s", path, exc)
    return time.perf_counter() - began
