"""Web workers warm up before they take requests (gunicorn's post_worker_init): the URL conf, the modules the
participants' pages import on first use, and every template, so that a worker started or restarted in a burst
of crowd arrivals does not make them wait (docs/crowd.md, "Performance")."""

import runpy
import sys
from pathlib import Path

from django.template import engines

from annotation_site import warm

REPO = Path(__file__).resolve().parents[2]


def test_warm_up_imports_the_lazy_modules_and_caches_every_template():
    assert warm.warm_up() > 0
    assert all(name in sys.modules for name in warm.LAZY_IMPORTS)
    loader = engines["django"].engine.template_loaders[0]  # the cached loader
    cached = set(loader.get_template_cache)
    assert {"crowd/start.html", "assessment/rate.html", "base.html", "crowd/participant_base.html"} <= cached


def test_both_gunicorn_configurations_warm_each_worker(monkeypatch):
    called = []
    monkeypatch.setattr(warm, "warm_up", lambda: called.append(1) or 0.5)

    class Worker:
        class log:  # noqa: N801  (gunicorn's worker.log)
            @staticmethod
            def info(*args):
                called.append(args)

    for path in (REPO / "gunicorn.conf.py", REPO / "benchmarks" / "gunicorn_bench.conf.py"):
        called.clear()
        runpy.run_path(str(path))["post_worker_init"](Worker())
        assert called[0] == 1 and "warmed up" in called[1][0]
