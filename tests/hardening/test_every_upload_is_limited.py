"""Every route that takes an uploaded file refuses one over its size limit with a message naming the limit, and
imports nothing (issue #11, "Resource limits"): imported files are checked against CAPTIONEVAL_MAX_UPLOAD_BYTES,
video files (stored, not parsed) against CAPTIONEVAL_MAX_VIDEO_BYTES. An API answers the refusal in the one error
shape (issue #12): ``detail`` and the refusal among ``problems`` (``UploadRefused.as_json``, answered for every
API by ``annotation_site.api_errors``; the task imports once answered it as a field error instead).

The routes are found from the URL resolver: a view whose code (its classes included) reads ``request.FILES``, or
binds ``request.data`` to a serializer with a FileField, or creates objects through one (a viewset), takes
uploads. A new upload route fails ``test_every_upload_route_is_covered`` until it is added to
UPLOADS below, so none can be forgotten (the pairs import page once read its file without any check)."""

import inspect

import pytest
from django import forms
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework import serializers

from tests.security.world import World, without_rate_limits

# route name -> (the file's form field, other fields, the limit that applies); URL parameters come from World,
# except those given under "kwargs".
UPLOADS = {
    "dataset-import": {"data": {"name": "limited", "format": "jsonl"}},
    "api-dataset-import": {"data": {"name": "limited", "format": "jsonl"}},
    "factuality-import-raw": {},
    "da-judgments-import": {"data": {"campaign": "limited"}},
    "api-da-campaign-judgments": {},
    "api-factuality-labels": {},
    "tasks-import": {"field": "items-file", "kwargs": {"what": "items"}},
    "api-tasks-items": {},
    "api-tasks-model-answers": {},
    "metrics-import": {},
    "api-metrics-import": {},
    "metrics-pairs-import": {"field": "pairs-file", "data": {"pairs-pair_set": "limited"}},
    "api-metrics-pairs": {"data": {"pair_set": "limited"}},
    "crowd-mturk-file": {"data": {"action": "import"}},
    "api-crowd-study-action": {"kwargs": {"action": "mturk-results"}},
    "video-add": {
        "data": {"external_id": "limited"},
        "limit": "CAPTIONEVAL_MAX_VIDEO_BYTES",
        "filename": "limited.mp4",
    },
    "video-list": {
        "data": {"external_id": "limited"},
        "dataset": True,
        "limit": "CAPTIONEVAL_MAX_VIDEO_BYTES",
        "filename": "limited.mp4",
    },
}
# Routes of a view already covered under another name (the same view class behind a router's other routes).
SAME_VIEW = {"video-detail": "video-list"}
LIMIT = 64  # bytes; every file below is larger


def _file_classes():
    """Names of the project's forms and serializers that have a FileField."""
    found = set()
    for base, field_type in ((forms.Form, forms.FileField), (serializers.Serializer, serializers.FileField)):
        stack = list(base.__subclasses__())
        while stack:
            cls = stack.pop()
            stack.extend(cls.__subclasses__())
            if not cls.__module__.startswith(("annotation_site", "assessment", "metrics_eval")):
                continue
            fields = getattr(cls, "base_fields", None) or getattr(cls, "_declared_fields", {})
            if any(isinstance(f, field_type) for f in fields.values()):
                found.add(cls.__name__)
    return found


def upload_routes():
    """(route name, route) of every project view that takes an uploaded file."""
    for config in apps.get_app_configs():  # import every app's forms / serializers
        for module in ("forms", "api"):
            try:
                __import__(f"{config.name}.{module}")
            except ModuleNotFoundError:
                pass
    classes = _file_classes()

    def walk(patterns, prefix):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
                continue
            assert isinstance(pattern, URLPattern)
            view = pattern.callback
            target = inspect.unwrap(getattr(view, "view_class", None) or getattr(view, "cls", None) or view)
            if not target.__module__.startswith(("annotation_site", "assessment", "metrics_eval")):
                continue
            source = "".join(
                inspect.getsource(cls)
                for cls in getattr(target, "__mro__", [target])
                if cls.__module__.startswith(("annotation_site", "assessment", "metrics_eval"))
            )
            writes = getattr(target, "serializer_class", None) and hasattr(target, "create")
            if (
                "request.FILES" in source
                or ("request.data" in source and any(name in source for name in classes))
                or (writes and target.serializer_class.__name__ in classes)
            ):
                yield pattern.name, prefix + str(pattern.pattern)

    return sorted(set(walk(get_resolver().url_patterns, "")))


def test_every_upload_route_is_covered():
    names = {SAME_VIEW.get(name, name) for name, _ in upload_routes()}
    assert names == set(UPLOADS), (
        f"routes that take files but are not checked here: {sorted(names - set(UPLOADS))}; "
        f"listed here but not found: {sorted(set(UPLOADS) - names)}"
    )


def _counts():
    from annotation_site.corpus.models import Dataset, Video
    from annotation_site.factuality.models import Project
    from annotation_site.judgment_tasks.models import Item, ModelAnswer
    from metrics_eval.models import CaptionPair, Metric

    return {
        model.__name__: model.objects.count()
        for model in (Dataset, Video, Project, Item, ModelAnswer, Metric, CaptionPair)
    }


@pytest.mark.django_db
def test_a_file_over_the_limit_is_refused_on_every_upload_route(client, settings):
    without_rate_limits(settings)
    settings.CAPTIONEVAL_MAX_UPLOAD_BYTES = LIMIT
    settings.CAPTIONEVAL_MAX_VIDEO_BYTES = LIMIT
    world = World()
    client.force_login(world.users["staff"])
    routes = dict(upload_routes())
    before = _counts()
    failures = []
    for name, spec in UPLOADS.items():
        params = [p for p in ("name", "what", "action") if f"<str:{p}>" in routes.get(name, "")]
        kwargs = {**world.kwargs(name, params), **spec.get("kwargs", {})}
        data = dict(spec.get("data", {}))
        if spec.get("dataset"):
            data["dataset"] = world.dataset.name
        filename = spec.get("filename", "big.jsonl")
        data[spec.get("field", "file")] = SimpleUploadedFile(filename, b'{"video_id": "v1"}\n' * 20)
        response = client.post(reverse(name, kwargs=kwargs), data, follow=True)
        text = response.content.decode()
        setting = spec.get("limit", "CAPTIONEVAL_MAX_UPLOAD_BYTES")
        if response.status_code >= 500 or f"at most {LIMIT} bytes are accepted ({setting})" not in text:
            failures.append(f"{name}: {response.status_code} {text[:300]!r}")
        elif name.startswith("api-"):  # the APIs' one error shape: a file refused whole is one of the problems
            body = response.json()
            if not any(f"at most {LIMIT} bytes" in p for p in body.get("problems", [])):
                failures.append(f"{name}: the refusal is not among the problems of {body}")
    assert not failures, "\n".join(failures)
    assert _counts() == before
