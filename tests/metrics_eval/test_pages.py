"""The metric pages: the report table, figures and downloads, escaping of untrusted names, staff-only access,
a constant number of queries whatever the dataset size, and the compute/import forms."""

import json
import re

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation_site.jobs.models import Job
from metrics_eval import analysis, loaders, reports, services
from metrics_eval.models import Metric, Report
from tests.conftest import wait_until
from tests.metrics_eval.conftest import import_jsonl, scores_csv

pytestmark = pytest.mark.django_db


def synthetic_dataset(name, videos, systems=("S1", "S2", "S3"), evil=False):
    """A labelled dataset of ``videos`` x systems captions with imported scores of two metrics."""
    rng = np.random.default_rng(len(name) + videos)
    systems = list(systems) + (["<script>alert('system')</script>"] if evil else [])
    lines, rows = [], []
    for v in range(videos):
        video = f"{name}-v{v:03d}"
        lines.append({"type": "video", "video_id": video})
        lines.append({"type": "reference", "video_id": video, "reference_set": "gt", "text": "a man walks a dog ."})
        for system in systems:
            score = int(rng.integers(1, 6))
            error = int(score < 4)
            lines.append(
                {
                    "video_id": video,
                    "system": system,
                    "paragraph_score": score,
                    "sentences": [{"text": "a man walks a dog .", "error": error, "spans": [[3, 5]] if error else []}],
                }
            )
            rows.append((video, system, score))
    dataset = import_jsonl("".join(json.dumps(line) + "\n" for line in lines), name)
    metrics = {"m_good": lambda r, s: s + r.normal(), "m_noise": lambda r, s: r.normal()}
    if evil:
        metrics["<b>evil</b>"] = None
    text = scores_csv(rows, {k: v for k, v in metrics.items() if v})
    services.import_scores(dataset, text, "scores.csv")
    return dataset


def test_report_page_shows_the_table_and_figures(staff_client, tiny_scores):
    response = staff_client.get("/metrics/datasets/tiny/")
    assert response.status_code == 200
    html = response.content.decode()
    report = Report.objects.get()
    assert 'id="correlations"' in html and 'data-metric="good"' in html and 'data-metric="noise"' in html
    assert html.count('class="num metrics-best"') >= 1  # the best metric of a column is marked
    good = report.result["metrics"]["good"]["paragraph"]
    assert f"{good['r']:.3f}" in html
    for figure in ("correlations", "scatter", "ranking"):
        assert f"/metrics/reports/{report.pk}/figures/{figure}.svg" in html
    assert 'id="ranking-paragraph"' in html
    # a metric named twice in the address is one column (was a 500)
    twice = staff_client.get("/metrics/datasets/tiny/?metrics=good&metrics=good")
    assert twice.status_code == 200 and twice.content.decode().count('data-metric="good"') == html.count(
        'data-metric="good"'
    )


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
@pytest.mark.parametrize("figure", ["correlations", "scatter", "ranking"])
def test_figures_in_every_format(staff_client, tiny_scores, figure, fmt, magic):
    staff_client.get("/metrics/datasets/tiny/")
    report = Report.objects.get()
    response = staff_client.get(f"/metrics/reports/{report.pk}/figures/{figure}.{fmt}?download=1")
    assert response.status_code == 200
    assert response.content.startswith(magic)
    assert response["Content-Disposition"].endswith(f'-{figure}.{fmt}"')
    if fmt == "svg":  # an SVG opened on its own may run scripts: every one carries a locked-down policy
        assert response["Content-Security-Policy"].startswith("default-src 'none'")
    assert staff_client.get(f"/metrics/reports/{report.pk}/figures/violin.{fmt}").status_code == 404


def test_a_figure_is_cached_by_the_level_it_draws_not_by_the_query(staff_client, tiny_scores, monkeypatch):
    """A ``human`` level the report does not have draws its first level (the ranking) or nothing different (the
    other figures draw every level): it is not a figure of its own, neither rendered again nor cached under a key
    as long as the query (found by the query-value test: Django warned that such keys break memcached)."""
    import warnings

    from django.core.cache import CacheKeyWarning

    from metrics_eval import charts

    staff_client.get("/metrics/datasets/tiny/")
    report = Report.objects.get()
    first = report.result["humans"][0]
    rendered, real = [], charts.render
    monkeypatch.setattr(
        charts, "render", lambda *args, **kw: rendered.append((args[1], kw["human"])) or real(*args, **kw)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheKeyWarning)
        for figure in ("ranking", "correlations"):
            for query in ("", "?human=nope", "?human=" + "x" * 400, f"?human={first}"):
                response = staff_client.get(f"/metrics/reports/{report.pk}/figures/{figure}.svg{query}")
                assert response.status_code == 200
    assert rendered == [("ranking", first), ("correlations", None)]


def test_csv_and_json_downloads(staff_client, tiny_scores):
    staff_client.get(
        "/metrics/datasets/tiny/?method=kendall_b&level=segment&group_by=video&resamples=100&seed=3&confidence=0.9"
    )
    report = Report.objects.get()
    assert report.parameters["method"] == "kendall_b" and report.parameters["group_by"] == "video"
    text = staff_client.get(f"/metrics/reports/{report.pk}/table.csv").content.decode()
    assert text.startswith(f"# CaptionEval report {report.pk}: factuality on tiny; method kendall_b")
    assert "90% CI" in text.splitlines()[0]
    body = json.loads(staff_client.get(f"/metrics/reports/{report.pk}/report.json").content)
    assert body["snapshot"]["hashes"]["data"] == report.data_hash and body["versions"]["scipy"]
    page = staff_client.get(f"/metrics/reports/{report.pk}/")
    assert page.status_code == 200 and b'id="correlations"' in page.content


def test_untrusted_names_are_escaped_in_pages_and_figures(staff_client):
    synthetic_dataset("evil", 6, evil=True)
    html = staff_client.get("/metrics/datasets/evil/?level=system").content.decode()
    assert "<script>alert('system')</script>" not in html
    assert "&lt;script&gt;alert(&#x27;system&#x27;)&lt;/script&gt;" in html
    report = Report.objects.get()
    svg = staff_client.get(f"/metrics/reports/{report.pk}/figures/ranking.svg").content.decode()
    assert "<script>" not in svg and "&lt;script&gt;alert(" in svg  # (long names are shortened in figures)


def test_pages_are_for_staff_only(crowd_worker, annotator, outsider, tiny_scores):
    assert crowd_worker.client.get("/metrics/datasets/tiny/").status_code == 302
    for persona in (annotator, outsider):
        for url in ("/metrics/", "/metrics/datasets/tiny/"):
            response = persona.client.get(url)
            assert response.status_code == 302 and "/login/" in response["Location"], (persona.name, url)


def test_report_page_queries_do_not_grow_with_the_dataset(staff_client, django_assert_max_num_queries):
    small = synthetic_dataset("small", 5)
    large = synthetic_dataset("large", 60, systems=("S1", "S2", "S3", "S4", "S5"))
    assert small.videos.count() * 3 < large.videos.count() * 5
    for dataset in (small, large):
        with django_assert_max_num_queries(18):  # first view: computes and stores the report (1: pair sets)
            assert staff_client.get(f"/metrics/datasets/{dataset.name}/").status_code == 200
        with django_assert_max_num_queries(17):  # again: the stored report is reused
            assert staff_client.get(f"/metrics/datasets/{dataset.name}/").status_code == 200
        report = Report.objects.filter(dataset=dataset).get()
        with django_assert_max_num_queries(5):
            assert staff_client.get(f"/metrics/reports/{report.pk}/").status_code == 200


def test_import_form(staff_client, tiny_dataset):
    from django.core.files.uploadedfile import SimpleUploadedFile

    good = SimpleUploadedFile("emscore.csv", b"video_id,system,metric,score\nvid-a,Alpha,emscore,0.4\n")
    response = staff_client.post("/metrics/datasets/tiny/import/", {"file": good}, follow=True)
    assert "Imported 1 emscore scores" in response.content.decode()
    bad = SimpleUploadedFile("bad.csv", b"video_id,system,metric,score\nvid-q,Alpha,x,1\n")
    response = staff_client.post("/metrics/datasets/tiny/import/", {"file": bad}, follow=True)
    assert "bad.csv, line 2, video_id: unknown video &#x27;vid-q&#x27;" in response.content.decode()
    assert list(Metric.objects.values_list("name", flat=True)) == ["emscore"]


@pytest.mark.django_db(transaction=True)  # the job is sent when the request's transaction commits
def test_compute_form_runs_the_job_and_reports_failures(staff_client, tiny_dataset, eager_tasks, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)  # no Java: the job fails with the clear message
    response = staff_client.post("/metrics/datasets/tiny/compute/", {"metrics": ["bleu4"]})
    assert response.status_code == 302  # answered at once; the job runs off the request
    finished_job()  # (a thread on the embedded default: the page is read once it is done, see wait_until)
    html = staff_client.get(response["Location"]).content.decode()
    assert "Computing the metrics in the background" in html
    assert "needs Java" in html
    assert re.search(r'id="compute-job"[^>]*data-status="failed"', html)
    response = staff_client.post("/metrics/datasets/tiny/compute/", {}, follow=True)
    assert "Choose the metrics to compute." in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_compute_form_stores_scores(java, staff_client, tiny_dataset, eager_tasks):
    response = staff_client.post("/metrics/datasets/tiny/compute/", {"metrics": ["bleu4", "cider"]})
    assert response.status_code == 302
    assert finished_job().status == Job.Status.SUCCEEDED  # before any page reads the database (see wait_until)
    response = staff_client.get("/metrics/datasets/tiny/")
    assert sorted(Metric.objects.values_list("name", flat=True)) == ["bleu4", "cider"]
    assert 'data-metric="cider"' in response.content.decode()  # the report uses the new scores


@pytest.mark.django_db(transaction=True)
def test_compute_form_reads_no_job_once_its_thread_may_write(staff_client, tiny_dataset, eager_tasks, monkeypatch):
    """On the embedded default the job's thread starts when the form's transaction commits and writes its job at
    once. A read of ``jobs_job`` by the request after that moment met the write now and then: on the suite's
    in-memory SQLite the write then fails at once ("database table is locked") and the job with it. Here the
    thread is held, not started, and the request's statements after the commit are checked for the job table."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation_site.jobs import services as job_services

    held = []
    with CaptureQueriesContext(connection) as queries:

        class HeldThread:  # stands for threading.Thread in enqueue_off_request: notes when it would have started
            def __init__(self, **kwargs):
                self.kwargs = kwargs

            def start(self):
                held.append(len(queries.captured_queries))

        monkeypatch.setattr(job_services, "threading", type("threading", (), {"Thread": HeldThread}))
        response = staff_client.post("/metrics/datasets/tiny/compute/", {"metrics": ["bleu4", "cider"]})
    assert response.status_code == 302 and len(held) == 1  # the job's thread was due to start once
    after_commit = [q["sql"] for q in queries.captured_queries[held[0] :]]
    assert not [sql for sql in after_commit if "jobs_job" in sql], after_commit
    assert Job.objects.get(kind=services.COMPUTE_KIND).status == Job.Status.QUEUED


def finished_job():
    """The latest metric job, once it has finished (it runs off the request)."""
    return wait_until(
        lambda: (
            Job.objects.filter(kind=services.COMPUTE_KIND, status__in=["succeeded", "failed"])
            .order_by("-created_at")
            .first()
        ),
        timeout=120,
        what="the metric job to finish",
    )


def test_index_lists_datasets_and_reports(staff_client, tiny_scores):
    staff_client.get(reverse("metrics-dataset", args=["tiny"]))
    html = staff_client.get("/metrics/").content.decode()
    assert 'href="/metrics/datasets/tiny/"' in html and "good, noise" in html
    assert f'href="/metrics/reports/{Report.objects.get().pk}/"' in html


def test_an_unknown_campaigns_page_is_not_found(staff_client):
    """/metrics/campaigns/NAME/ of no campaign answered 200 with "no DA campaign named ..."; a page named by an
    unknown name is 404, like an unknown dataset's (with analysis options too). Without the assessment app the
    page says DA results are not available."""
    try:
        import assessment.results  # noqa: F401
    except ImportError:
        response = staff_client.get("/metrics/campaigns/pilot/")
        assert (
            response.status_code == 200 and "Direct Assessment results are not available" in response.content.decode()
        )
    else:
        assert staff_client.get("/metrics/campaigns/pilot/").status_code == 404
        assert staff_client.get("/metrics/campaigns/pilot/?method=spearman&level=system").status_code == 404
        assert staff_client.get("/metrics/datasets/pilot/").status_code == 404


def test_pairwise_accuracy_is_on_the_dataset_page(staff_client, tiny_scores):
    """Correct/foil pairs imported on the page; the page shows each metric's pairwise ranking accuracy (counted
    here pair by pair from the stored scores), its interval and the pairs scored, with the stored report's
    downloads; the same report as `correlate --human pairs` (reused, not computed twice)."""
    page = staff_client.get("/metrics/datasets/tiny/").content.decode()
    assert 'id="no-pairs"' in page and 'id="pairs-form"' in page and 'id="id_pairs-file"' in page
    text = "video_id,correct,foil\n" + "".join(f"{v},Alpha,Gamma\n" for v in ["vid-a", "vid-b", "vid-c", "vid-d"])
    text += "vid-a,Beta,Gamma\nvid-b,Beta,Gamma\n"
    upload = SimpleUploadedFile("foil.csv", text.encode())
    response = staff_client.post(
        "/metrics/datasets/tiny/pairs/", {"pairs-file": upload, "pairs-pair_set": "foil"}, follow=True
    )
    html = response.content.decode()
    assert "Imported 6 correct/foil pairs as pair set foil." in html
    assert response.redirect_chain[-1][0].endswith("/metrics/datasets/tiny/#pairs")

    scores = loaders.metric_scores(tiny_scores, ["good", "noise"])
    keys = loaders.captions(tiny_scores).set_index(["video_id", "system"])["caption_id"]
    pairs = [line.split(",") for line in text.strip().splitlines()[1:]]
    table = re.search(r'<table[^>]*id="pairs-foil".*?</table>', html, re.DOTALL).group(0)
    for name in ("good", "noise"):
        outcomes = []
        for video, correct, foil in pairs:
            a, b = scores.loc[keys[(video, correct)], name], scores.loc[keys[(video, foil)], name]
            outcomes.append(1.0 if a > b else 0.5 if a == b else 0.0)
        row = re.search(rf'<tr data-metric="{name}">(.*?)</tr>', table, re.DOTALL).group(1)
        value = float(re.search(r'data-value="([^"]+)"', row).group(1))
        assert value == pytest.approx(np.mean(outcomes), abs=1e-12)
        assert '<td class="num">6</td>' in row  # pairs scored
    assert "Pair set foil · 6 pairs" in html
    report = Report.objects.get(kind=Report.Kind.PAIRS)
    assert f'href="/metrics/reports/{report.pk}/table.csv"' in table or f"/metrics/reports/{report.pk}/" in html
    staff_client.get("/metrics/datasets/tiny/")
    assert Report.objects.filter(kind=Report.Kind.PAIRS).count() == 1  # stored once, reused

    bad = SimpleUploadedFile("bad.csv", b"video_id,correct,foil\nvid-z,Alpha,Gamma\n")
    html = staff_client.post(
        "/metrics/datasets/tiny/pairs/", {"pairs-file": bad, "pairs-pair_set": "other"}, follow=True
    ).content.decode()
    assert "bad.csv, line 2" in html and 'id="pairs-other"' not in html


def test_a_grouping_at_system_level_is_a_form_error_on_the_page(staff_client, tiny_scores):
    """The page computed the system-level table without the grouping asked for; it shows the form's error on
    the grouping and computes no table."""
    page = staff_client.get("/metrics/datasets/tiny/?level=system&group_by=video&resamples=100")
    assert page.status_code == 200
    form = page.context["form"]
    assert list(form.errors) == ["group_by"]
    assert "grouping by video applies to the segment level only" in form.errors["group_by"][0]
    assert "grouping by video applies to the segment level only" in page.content.decode()
    assert not Report.objects.filter(kind="factuality").exists()
    fine = staff_client.get("/metrics/datasets/tiny/?level=system&resamples=100")
    assert not fine.context["form"].errors and Report.objects.get(kind="factuality").parameters["group_by"] == "none"


def test_a_pairs_report_offers_only_its_figures_and_names_its_level_and_test(staff_client, tiny_scores):
    """A pairs report's scatter.png drew empty axes titled with a correlation, its ranking.png "no system-level
    data"; its table.csv said "level segment" where report.json says "pairs", and its stored parameters said the
    Williams test where the paired bootstrap was used."""
    text = "video_id,correct,foil\n" + "".join(f"{v},Alpha,Gamma\n" for v in ["vid-a", "vid-b", "vid-c", "vid-d"])
    services.import_pairs(tiny_scores, text, "foil.csv", pair_set="foil")
    report, _ = reports.pairs_report(tiny_scores, "foil", params=analysis.Parameters(resamples=100))
    base = f"/metrics/reports/{report.pk}/"
    for fmt in ("png", "svg"):
        assert staff_client.get(f"{base}figures/correlations.{fmt}").status_code == 200
        assert staff_client.get(f"{base}figures/scatter.{fmt}").status_code == 404
        assert staff_client.get(f"{base}figures/ranking.{fmt}").status_code == 404
    page = staff_client.get(base).content.decode()
    assert "figures/correlations." in page and "figures/scatter." not in page and "figures/ranking." not in page
    assert ", level pairs, " in staff_client.get(f"{base}table.csv").content.decode().splitlines()[0]
    assert json.loads(staff_client.get(f"{base}report.json").content)["parameters"]["test"] == "bootstrap"
    assert report.parameters["test"] == report.result["parameters"]["test"] == "bootstrap"
    assert "ranking_accuracy, pairs level" in staff_client.get("/metrics/").content.decode()
