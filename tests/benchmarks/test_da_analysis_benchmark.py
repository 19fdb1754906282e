"""benchmarks/da_analysis.py on a configured database (issue #9, item 4): it removes what it made (dataset,
campaign and its simulated workers), so a second run works instead of failing on the workers' unique ids."""

import importlib.util
import io
from contextlib import redirect_stdout

import pytest

from annotation_site.corpus.models import Dataset
from assessment.models import Campaign, Judgment, Worker
from tests.conftest import REPO

pytestmark = pytest.mark.django_db


def load_benchmark():
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))  # the benchmark imports its da_common helper
    try:
        spec = importlib.util.spec_from_file_location("da_analysis_benchmark", REPO / "benchmarks" / "da_analysis.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return module


def test_two_runs_in_a_row_leave_the_database_as_they_found_it():
    benchmark = load_benchmark()
    Worker.objects.create(external_id="someone-else", source="link")
    for _ in range(2):
        out = io.StringIO()
        with redirect_stdout(out):
            figures = benchmark.run(videos=24, systems=2, workers=12, hits_per_worker=1, repeat=1)
        assert figures["workers"] == 12 and figures["judgments"] > 0
        assert "full analysis:" in out.getvalue()
        assert not Dataset.objects.exists() and not Campaign.objects.exists() and not Judgment.objects.exists()
        assert list(Worker.objects.values_list("external_id", flat=True)) == ["someone-else"]


def test_workers_left_by_an_interrupted_run_are_removed_first():
    benchmark = load_benchmark()
    Worker.objects.create(external_id=f"{benchmark.WORKER_PREFIX}-000000-diligent", source="simulation")
    with redirect_stdout(io.StringIO()):
        benchmark.run(videos=24, systems=2, workers=4, hits_per_worker=1, repeat=1)
    assert not Worker.objects.exists()
