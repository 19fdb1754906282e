"""Analyses with nothing to correlate. A DA campaign in which no worker has passed quality control yet showed
NumPy's "zero-size array to reduction operation fmax which has no identity" on the campaign page and in
`correlate` (stats._constant took the maximum of no scores, and the ValueError's text was shown as the reason).
Now such an analysis is refused before anything is computed, in the platform's words (why, with the workers per QC
status, and what to do next), on the page, the command and the API (400 naming the field); the statistics give
NaN (undefined) on empty or all-NaN input, as for any undefined correlation; and only the platform's own refusals
are shown to people: any other error is a fault, raised, never its text as a reason."""

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation_site.factuality.models import LabelSet
from assessment import simulation
from metrics_eval import analysis, bootstrap, correlation, services, significance, stats
from metrics_eval.models import Report
from tests.assessment.conftest import make_dataset, small_campaign

QUALITY = {"human": 85, "Alpha": 70, "Beta": 50, "Gamma": 45}
NUMPY_WORDS = ("zero-size array", "reduction operation", "has no identity", "fmax")

# --- the statistics on empty and all-NaN input: NaN, n = 0, no NumPy error and no warning ----------------------

SHAPES = {
    "no items": np.empty((1, 0)),
    "no items, three rows": np.empty((3, 0)),
    "no rows": np.empty((0, 0)),
    "all missing": np.full((2, 5), np.nan),
}


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("shape", SHAPES)
def test_every_row_statistic_is_undefined_on_empty_or_missing_input(shape, no_warnings):
    values = SHAPES[shape]
    rows = values.shape[0]
    r, n = stats.pearson_rows(values, values)
    assert r.shape == (rows,) and np.isnan(r).all() and (n == 0).all()
    rho, n = stats.spearman_rows(values, values)
    assert rho.shape == (rows,) and np.isnan(rho).all() and (n == 0).all()
    for epsilon in (0.0, 0.5):
        counts = stats.pair_counts_rows(values, values, epsilon=epsilon)
        assert (counts.pairs == 0).all() and (counts.n == 0).all()
        for value in (stats.tau_b(counts), stats.tau_c(counts), stats.accuracy(counts)):
            assert value.shape == (rows,) and np.isnan(value).all()
    epsilon, accuracy = stats.tie_calibration(values, values)
    assert epsilon == 0.0 and np.isnan(accuracy)
    assert stats.ranks_rows(values).shape == values.shape


def test_the_constant_check_of_no_items_is_constant(no_warnings):
    """stats._constant took NumPy's maximum over no values: "zero-size array to reduction operation fmax"."""
    assert stats._constant(np.empty((2, 0)), np.zeros((2, 0), dtype=bool)).tolist() == [True, True]
    assert stats._constant(np.empty((0, 0)), np.zeros((0, 0), dtype=bool)).tolist() == []


def _frames():
    columns = {"video_id": object, "system": object, "caption_id": int, "h": float, "m": float, "m2": float}
    empty = pd.DataFrame({c: pd.Series([], dtype=t) for c, t in columns.items()})
    missing = pd.DataFrame(
        {
            "video_id": ["a", "a", "b", "b", "c"],
            "system": ["x", "y", "x", "y", "x"],
            "caption_id": [1, 2, 3, 4, 5],
            "h": [np.nan] * 5,
            "m": [0.1, 0.2, 0.3, 0.4, 0.5],
            "m2": [0.4, 0.1, 0.2, 0.3, 0.0],
        }
    )
    return {"no captions": empty, "no human score": missing}


@pytest.mark.parametrize("frame_name", ["no captions", "no human score"])
@pytest.mark.parametrize("method", list(correlation.METHODS))
def test_correlations_and_the_whole_analysis_are_undefined_without_data(frame_name, method, no_warnings):
    frame = _frames()[frame_name]
    for group_by in correlation.GROUPINGS:
        result = correlation.segment_correlation(frame, "h", "m", method, group_by)
        assert np.isnan(result.value) and result.n == 0 and result.groups == 0
    result = correlation.system_correlation(frame, "h", "m", method)
    assert np.isnan(result.value) and result.n == 0
    tests = ["bootstrap"] + ([] if method == "accuracy_tc" else ["permutation"])
    if method == "pearson":
        tests.append("williams")
    for level, group_by in (("segment", "none"), ("segment", "video"), ("segment", "system"), ("system", "none")):
        for test in tests:
            if test == "williams" and group_by != "none":
                continue
            params = analysis.Parameters(method=method, level=level, group_by=group_by, resamples=20, test=test)
            result = analysis.analyse(frame, ["h"], ["m", "m2"], params)
            for metric in ("m", "m2"):
                cell = result["metrics"][metric]["h"]
                assert cell["r"] is None and cell["ci"] == [None, None] and cell["n"] == 0
            assert result["best"] == {"h": []}


def test_resampling_and_tests_of_no_items_are_undefined(no_warnings):
    counts = bootstrap.video_resamples(3, 20, 0)
    frame = _frames()["no human score"]
    for method in correlation.METHODS:
        for group_by in correlation.GROUPINGS:
            samples = bootstrap.bootstrap_segment_many(
                frame, "h", ["m", "m2"], method, group_by, counts, ["a", "b", "c"]
            )
            assert all(s.shape == (20,) and np.isnan(s).all() for s in samples.values())
        assert np.isnan(bootstrap.bootstrap_system(frame, "h", "m", method, counts, ["a", "b", "c"])).all()
    assert np.isnan(bootstrap.percentile_interval(np.full(20, np.nan))).all()
    assert np.isnan(bootstrap.percentile_interval(np.array([]))).all()
    nothing = np.array([np.nan, np.nan])
    result = significance.permutation_test(nothing, np.array([1.0, 2.0]), np.array([2.0, 1.0]), n_resamples=20)
    assert np.isnan(result.pvalue)


# --- the entry points: refused up front in the platform's words ---------------------------------------------------


def correlate(*args):
    out = io.StringIO()
    call_command("correlate", *args, "--format", "json", "--resamples", "100", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


def _scores(dataset):
    lines = ["video_id,system,metric,score"]
    rng = np.random.default_rng(3)
    for video in dataset.videos.order_by("position"):
        for system in QUALITY:
            lines.append(f"{video.external_id},{system},bleu4,{rng.random():.5f}")
            lines.append(f"{video.external_id},{system},cider,{rng.random():.5f}")
    services.import_scores(dataset, "\n".join(lines) + "\n", "scores.csv")


@pytest.fixture
def unscored(db):
    """A DA campaign whose one worker rated a whole HIT: 3 pairs, fewer than the QC minimum of 6, so
    "insufficient data" and no DA scores; the dataset has metric scores."""
    dataset = make_dataset("da-empty", n_videos=12)
    campaign = small_campaign(dataset, "da-empty", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 1}, QUALITY, seed=5, hits_per_worker=1)
    _scores(dataset)
    return campaign


REASON = (
    "campaign da-empty has no DA scores yet: no worker has passed quality control (1 insufficient data). Only the "
    "judgments of workers who passed count, so scores appear once a worker passes"
)


def test_a_campaign_without_passed_workers_is_refused_by_the_command(unscored):
    with pytest.raises(CommandError) as refused:
        correlate("--campaign", "da-empty", "--human", "da", "--metrics", "bleu4,cider")
    message = str(refused.value)
    assert message.startswith("--campaign: " + REASON)
    assert not any(word in message for word in NUMPY_WORDS)
    assert not Report.objects.exists()


def test_a_campaign_without_passed_workers_is_refused_on_the_page(unscored, staff_client):
    for query in ("", "?level=system", "?method=spearman&group_by=video"):
        page = staff_client.get(f"/metrics/campaigns/da-empty/{query}")
        assert page.status_code == 200
        html = page.content.decode()
        assert REASON in html
        assert not any(word in html for word in NUMPY_WORDS)
        assert 'id="correlations"' not in html
    assert not Report.objects.exists()


def test_a_campaign_without_passed_workers_is_refused_by_the_api(unscored, staff_user):
    api = APIClient()
    api.force_authenticate(staff_user)
    body = {"human": "da", "campaign": "da-empty", "metrics": ["bleu4", "cider"], "resamples": 100}
    response = api.post("/api/metrics/datasets/da-empty/correlate/", body, format="json")
    assert response.status_code == 400
    answer = response.json()
    assert answer["error"] == "invalid"
    assert answer["fields"]["campaign"][0].startswith(REASON)
    assert answer["detail"].startswith("campaign: " + REASON)
    assert not any(word in json.dumps(answer) for word in NUMPY_WORDS)
    assert not Report.objects.exists()


@pytest.mark.django_db
def test_a_campaign_without_workers_says_so():
    dataset = make_dataset("da-new", n_videos=12)
    small_campaign(dataset, "da-new", qc_min_pairs=6)
    _scores(dataset)
    with pytest.raises(
        CommandError, match="^--campaign: campaign da-new has no DA scores yet: no worker has taken a HIT"
    ):
        correlate("--campaign", "da-new", "--human", "da", "--metrics", "bleu4")


def test_a_label_set_without_labels_is_refused(tiny_scores, staff_user):
    LabelSet.objects.create(dataset=tiny_scores, name="empty", origin=LabelSet.Origin.AGGREGATED)
    reason = "label set empty of dataset tiny has no labels of the dataset's captions yet"
    with pytest.raises(CommandError, match="^--labels: " + reason):
        correlate("--dataset", "tiny", "--human", "factuality", "--labels", "empty")
    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post(
        "/api/metrics/datasets/tiny/correlate/", {"human": "factuality", "labels": "empty"}, format="json"
    )
    assert response.status_code == 400 and response.json()["fields"]["labels"][0].startswith(reason)
    assert not Report.objects.exists()


def test_a_missing_pair_set_and_unknown_metrics_name_their_field(tiny_scores, staff_user):
    api = APIClient()
    api.force_authenticate(staff_user)
    pairs = api.post("/api/metrics/datasets/tiny/correlate/", {"human": "pairs", "pair_set": "x"}, format="json")
    assert pairs.status_code == 400 and "dataset tiny has no pair set 'x'" in pairs.json()["fields"]["pair_set"][0]
    unknown = api.post("/api/metrics/datasets/tiny/correlate/", {"metrics": ["bleu4"]}, format="json")
    assert unknown.status_code == 400 and "no scores for metric(s) bleu4" in unknown.json()["fields"]["metrics"][0]


# --- only the platform's own refusals are shown: NumPy's or SciPy's words never are -------------------------------


def _numpy_fails(*args, **kwargs):
    return np.nanmax(np.empty((1, 0)), axis=1)  # NumPy's own ValueError, as a fault deep in the statistics would be


def test_a_fault_in_the_statistics_is_raised_not_shown_as_the_reason(
    tiny_scores, staff_client, staff_user, monkeypatch
):
    monkeypatch.setattr(analysis, "analyse", _numpy_fails)
    with pytest.raises(ValueError, match="zero-size array"):  # a fault (a 500, logged), not the page's reason
        staff_client.get("/metrics/datasets/tiny/?resamples=100")
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(staff_user)
    response = api.post("/api/metrics/datasets/tiny/correlate/", {"resamples": 100}, format="json")
    assert response.status_code == 500
    assert not any(word in response.content.decode() for word in NUMPY_WORDS)
    with pytest.raises(ValueError, match="zero-size array"):  # not a CommandError carrying NumPy's words
        correlate("--dataset", "tiny", "--human", "factuality")


@pytest.mark.django_db
def test_an_unexpected_error_of_a_compute_job_is_not_shown_in_numpys_words(tiny_dataset, eager_tasks, monkeypatch):
    from annotation_site.jobs.models import Job
    from metrics_eval.tasks import compute_metric_scores

    monkeypatch.setattr(services, "compute_scores", _numpy_fails)
    job = Job.objects.create(kind=services.COMPUTE_KIND)
    with pytest.raises(ValueError):
        compute_metric_scores(str(job.pk), tiny_dataset.pk, ["bleu4"])
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == ("computing bleu4 failed on an unexpected error (ValueError). The server's log has the details")
