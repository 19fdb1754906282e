"""Reports and the correlate command: the contract's JSON shape, values equal to SciPy on the same data, the
snapshot that identifies the data, reuse of identical reports, and the DA and correct/foil paths."""

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from scipy import stats as scipy_stats

from metrics_eval import analysis, human, loaders, reports, services
from metrics_eval.models import MetricScore, Report

pytestmark = pytest.mark.django_db


def correlate(*args):
    out = io.StringIO()
    call_command("correlate", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_correlate_json_contract(tiny_scores):
    body = json.loads(
        correlate(
            "--dataset",
            "tiny",
            "--human",
            "factuality",
            "--metrics",
            "good,noise",
            "--method",
            "pearson",
            "--format",
            "json",
            "--resamples",
            "200",
        )
    )
    assert (body["method"], body["level"]) == ("pearson", "segment")
    assert list(body["metrics"]) == ["good", "noise"]
    for metric in body["metrics"].values():
        assert list(metric) == ["paragraph", "sentence", "word"]
        for cell in metric.values():
            assert set(cell) == {"r", "ci", "n"} and cell["n"] == 12
            assert cell["ci"][0] <= cell["r"] <= cell["ci"][1]
    # the value is SciPy's Pearson r over the same captions
    frame = human.analysis_frame(
        loaders.captions(tiny_scores),
        loaders.factuality(loaders.label_set(tiny_scores)),
        loaders.metric_scores(tiny_scores, ["good"]),
    )
    assert body["metrics"]["good"]["word"]["r"] == pytest.approx(scipy_stats.pearsonr(frame["word"], frame["good"])[0])
    assert body["report"] == Report.objects.get().pk


def test_correlate_system_level_and_other_formats(tiny_scores):
    body = json.loads(
        correlate(
            "--dataset", "tiny", "--level", "system", "--method", "kendall_b", "--format", "json", "--resamples", "100"
        )
    )
    assert body["level"] == "system"
    assert body["metrics"]["good"]["paragraph"]["n"] == 3  # three systems
    table = correlate("--dataset", "tiny", "--method", "spearman", "--group-by", "video", "--resamples", "100")
    assert table.splitlines()[0].startswith("Spearman ρ, segment level, grouped by video")
    assert table.splitlines()[2].startswith("good")
    csv_text = correlate("--dataset", "tiny", "--format", "csv", "--resamples", "100")
    assert csv_text.splitlines()[1] == "metric,label,human,value,ci_low,ci_high,n,groups,epsilon,cluster,best"
    assert len(csv_text.splitlines()) == 2 + 2 * 3


def test_a_system_level_table_over_three_systems_carries_a_caution(tiny_scores, staff_client):
    """Three systems allow only a few correlation values (two: always +-1); the table said nothing of it."""
    table = correlate("--dataset", "tiny", "--level", "system", "--method", "kendall_b", "--resamples", "100")
    assert "Caution: only 3 systems." in table
    csv_text = correlate("--dataset", "tiny", "--level", "system", "--format", "csv", "--resamples", "100")
    assert "Caution: only 3 systems." in csv_text.splitlines()[0]
    page = staff_client.get("/metrics/datasets/tiny/?level=system").content.decode()
    assert 'id="few-systems"' in page and "only 3 systems" in page
    segment = correlate("--dataset", "tiny", "--resamples", "100")
    assert "systems" not in segment.split("Caution", 1)[-1] and "Caution: only 3 systems" not in segment
    assert 'id="few-systems"' not in staff_client.get("/metrics/datasets/tiny/").content.decode()


def test_a_table_over_different_captions_or_few_videos_carries_a_caution(tiny_scores, tiny_dataset, staff_client):
    """A metric imported with scores of 3 of the 12 captions was starred best with r = 1.000 (1.000, 1.000), and a
    table over two videos gave every interval (1.000, 1.000) and 'significantly worse' clusters, with no word of
    either. (The counting argument: v videos allow C(2v - 1, v) distinct bootstrap resamples.)"""
    services.import_scores(
        tiny_dataset,
        "video_id,system,metric,score\nvid-a,Alpha,partial,1\nvid-a,Beta,partial,2\nvid-b,Alpha,partial,3\n",
        "partial.csv",
    )
    table = correlate("--dataset", "tiny", "--metrics", "good,partial", "--resamples", "100")
    assert "Caution: the metrics were measured on different numbers of captions (" in table
    assert "good 12, partial 3" in table
    csv_header = correlate("--dataset", "tiny", "--metrics", "good,partial", "--format", "csv", "--resamples", "100")
    assert "different numbers of captions" in csv_header.splitlines()[0]
    page = staff_client.get("/metrics/datasets/tiny/?metrics=good&metrics=partial&resamples=100").content.decode()
    assert 'id="different-n"' in page
    assert "different numbers" not in correlate("--dataset", "tiny", "--metrics", "good,noise", "--resamples", "100")

    assert [v for v in (1, 2, 3, 4, 5, 6, 7) if math.comb(2 * v - 1, v) < 1000] == [1, 2, 3, 4, 5, 6]
    result = {"parameters": {"level": "segment", "method": "pearson", "resamples": 1000}, "metrics": {}}
    assert "only 6 videos" in reports.few_videos_caution(result, {"counts": {"videos": 6}})
    assert "allow only 462 distinct resamples (of the 1000 drawn)" in reports.few_videos_caution(
        result, {"counts": {"videos": 6}}
    )
    assert reports.few_videos_caution(result, {"counts": {"videos": 7}}) is None
    # the tiny dataset has 4 videos: 35 distinct resamples of the 100 drawn
    assert "Caution: only 4 videos." in table and "allow only 35 distinct resamples (of the 100 drawn)" in table


def test_correlate_refuses_what_it_cannot_do(tiny_scores):
    with pytest.raises(CommandError, match="no scores for metric.*bleu4"):
        correlate("--dataset", "tiny", "--metrics", "bleu4")
    with pytest.raises(CommandError, match="--human da needs --campaign"):
        correlate("--human", "da")
    with pytest.raises(CommandError, match="Williams test compares Pearson"):
        correlate("--dataset", "tiny", "--method", "spearman", "--test", "williams")
    with pytest.raises(CommandError, match="no label set 'other'"):
        correlate("--dataset", "tiny", "--labels", "other")


def test_reports_record_their_data_and_are_reused_while_it_is_unchanged(tiny_scores):
    params = analysis.Parameters(resamples=100)
    first, created = reports.factuality_report(tiny_scores, params=params)
    assert created
    again, created = reports.factuality_report(tiny_scores, params=params)
    assert (again.pk, created) == (first.pk, False)
    snapshot = first.snapshot
    assert snapshot["counts"] == {
        "captions": 12,
        "videos": 4,
        "systems": 3,
        "human": {"paragraph": 12, "sentence": 12, "word": 12},
        "scores": {"good": 12, "noise": 12},
    }
    assert snapshot["label_set"]["name"] == "imported"
    assert snapshot["metrics"]["good"]["origin"] == "scores.csv"
    assert {"numpy", "scipy", "pandas", "Django", "python"} <= set(first.versions)
    assert first.parameters["method"] == "pearson" and first.parameters["resamples"] == 100
    json.dumps(first.result, allow_nan=False)  # stored JSON is strict JSON (no NaN)

    score = MetricScore.objects.filter(metric__name="good").first()
    score.score += 1
    score.save()
    changed, created = reports.factuality_report(tiny_scores, params=params)
    assert created and changed.data_hash != first.data_hash
    assert changed.snapshot["hashes"]["metrics"]["good"] != snapshot["hashes"]["metrics"]["good"]
    assert changed.snapshot["hashes"]["metrics"]["noise"] == snapshot["hashes"]["metrics"]["noise"]


def test_analysis_marks_best_metrics_clusters_and_inconsistent_rankings(tiny_scores):
    report, _ = reports.factuality_report(tiny_scores, params=analysis.Parameters(resamples=200))
    result = report.result
    assert result["best"]["paragraph"] == ["good"]  # "good" follows the paragraph score, "noise" does not
    assert result["clusters"]["paragraph"]["good"] == 1
    ranking = result["systems"]["rankings"]["paragraph"]["good"]
    assert ranking["order"] == ["Alpha", "Beta", "Gamma"]  # mean paragraph scores 4.25, 3.5, 1.5
    assert set(ranking) == {"order", "human_rank", "metric_rank", "inverted_pairs", "inconsistent"}
    assert len(result["points"]["human"]["paragraph"]) == 12


def test_da_path_with_dataframes():
    """DA through the pure functions: caption scores joined to captions, system level against the campaign's
    own system scores (the contract of assessment/results.py)."""
    captions = pd.DataFrame(
        {"caption_id": range(8), "video_id": np.repeat(["v1", "v2", "v3", "v4"], 2), "system": ["A", "B"] * 4}
    )
    captions = pd.concat(
        [captions, pd.DataFrame({"caption_id": range(8, 12), "video_id": ["v1", "v2", "v3", "v4"], "system": "C"})],
        ignore_index=True,
    )
    rng = np.random.default_rng(0)
    da = captions[["video_id", "system"]].assign(
        z=rng.normal(size=12), raw=rng.uniform(0, 100, 12), n=rng.integers(1, 4, 12)
    )
    metric = pd.DataFrame({"bleu4": da["z"].to_numpy() + rng.normal(scale=0.5, size=12)}, index=captions["caption_id"])
    frame = human.analysis_frame(captions, human.da_caption_scores(da, captions), metric)
    system_scores = pd.DataFrame(
        {"system": ["A", "B", "C"], "z": [0.3, -0.1, 0.2], "raw": [60.0, 45.0, 50.0], "n": [8, 8, 4]}
    )
    table = system_scores.set_index("system")
    result = analysis.analyse(
        frame,
        ["z", "raw"],
        ["bleu4"],
        analysis.Parameters(level="system", resamples=100),
        human_system={"z": table["z"], "raw": table["raw"]},
    )
    means = frame.groupby("system")["bleu4"].mean()
    assert result["metrics"]["bleu4"]["z"]["r"] == pytest.approx(scipy_stats.pearsonr(table["z"], means)[0])
    assert result["metrics"]["bleu4"]["z"]["n"] == 3
    segment = analysis.analyse(frame, ["z", "raw"], ["bleu4"], analysis.Parameters(resamples=100))
    assert segment["metrics"]["bleu4"]["raw"]["r"] == pytest.approx(
        scipy_stats.pearsonr(frame["raw"], frame["bleu4"])[0]
    )


def test_da_report_needs_the_assessment_results():
    try:
        import assessment.results  # noqa: F401
    except ImportError:
        with pytest.raises(loaders.HumanScoresUnavailable, match="Direct Assessment results are not available"):
            reports.da_report("any")
        with pytest.raises(CommandError, match="Direct Assessment results are not available"):
            correlate("--human", "da", "--campaign", "any")
    else:
        with pytest.raises(loaders.HumanScoresUnavailable, match="no DA campaign named 'no-such-campaign'"):
            reports.da_report("no-such-campaign")


def test_pairwise_ranking_accuracy_on_correct_foil_pairs(tiny_scores):
    # pairs: correct Alpha against foil Gamma on every video, and Beta against Gamma on vid-a
    text = "video_id,correct,foil\n" + "".join(f"{v},Alpha,Gamma\n" for v in ["vid-a", "vid-b", "vid-c", "vid-d"])
    text += "vid-a,Beta,Gamma\n"
    services.import_pairs(tiny_scores, text, "pairs.csv", pair_set="foil")
    body = json.loads(
        correlate(
            "--dataset", "tiny", "--human", "pairs", "--pair-set", "foil", "--format", "json", "--resamples", "100"
        )
    )
    scores = loaders.metric_scores(tiny_scores, ["good", "noise"])
    keys = loaders.captions(tiny_scores).set_index(["video_id", "system"])["caption_id"]
    pairs = [(v, "Alpha", "Gamma") for v in ["vid-a", "vid-b", "vid-c", "vid-d"]] + [("vid-a", "Beta", "Gamma")]
    for name in ("good", "noise"):
        wins = [np.sign(scores.loc[keys[(v, c)], name] - scores.loc[keys[(v, f)], name]) for v, c, f in pairs]
        expected = np.mean([1.0 if w > 0 else 0.5 if w == 0 else 0.0 for w in wins])
        assert body["metrics"][name]["accuracy"]["r"] == pytest.approx(expected)
        assert body["metrics"][name]["accuracy"]["n"] == 5
    assert body["level"] == "pairs"


def test_a_pairs_report_gets_no_caution_about_systems():
    """A pairs report's n counts pairs: three pairs at system level are not 'only 3 systems'."""
    pairs = {"parameters": {"level": "system", "method": "ranking_accuracy"}, "metrics": {"m": {"accuracy": {"n": 3}}}}
    assert reports.few_systems_caution(pairs) is None
    systems = {"parameters": {"level": "system", "method": "pearson"}, "metrics": {"m": {"paragraph": {"n": 3}}}}
    assert "only 3 systems" in reports.few_systems_caution(systems)


def test_a_grouping_at_system_level_is_refused_not_dropped(tiny_scores):
    """--group-by video at system level was reset to "none": the table of plain system-level correlations came
    back as if grouped. It is refused, naming the option and what applies; no report is stored."""
    with pytest.raises(CommandError, match="--group-by: grouping by video applies to the segment level only"):
        correlate("--dataset", "tiny", "--level", "system", "--group-by", "video", "--resamples", "100")
    with pytest.raises(CommandError, match="--group-by: grouping by system applies to the segment level only"):
        correlate("--dataset", "tiny", "--level", "system", "--group-by", "system", "--resamples", "100")
    with pytest.raises(analysis.ParameterError, match="segment level grouped by video") as refused:
        analysis.Parameters(level="system", group_by="video")
    assert refused.value.field == "group_by"
    assert not Report.objects.exists()
    # the default grouping (none) at system level, and any grouping at segment level, still work
    assert (
        json.loads(correlate("--dataset", "tiny", "--level", "system", "--format", "json", "--resamples", "100"))[
            "group_by"
        ]
        == "none"
    )
    grouped = json.loads(
        correlate("--dataset", "tiny", "--group-by", "video", "--format", "json", "--resamples", "100")
    )
    assert (grouped["level"], grouped["group_by"]) == ("segment", "video")


def test_a_method_for_pairs_is_refused_not_replaced_by_ranking_accuracy(tiny_scores):
    """--human pairs --method spearman reported pairwise ranking accuracy as if it were Spearman's rho. A method,
    the system level, a grouping or another test than the bootstrap is refused for pairs, saying what applies."""
    services.import_pairs(
        tiny_scores, "video_id,correct,foil\nvid-a,Alpha,Gamma\nvid-b,Alpha,Gamma\n", "p.csv", pair_set="foil"
    )
    pairs = ("--dataset", "tiny", "--human", "pairs", "--pair-set", "foil", "--resamples", "100")
    with pytest.raises(CommandError, match=r"--method: correct/foil pairs are measured by pairwise ranking accuracy"):
        correlate(*pairs, "--method", "spearman")
    with pytest.raises(CommandError, match="leave the method out for pairs"):
        correlate(*pairs, "--method", "pearson")
    with pytest.raises(CommandError, match="--level: .*no system level for pairs"):
        correlate(*pairs, "--level", "system")
    with pytest.raises(CommandError, match="--group-by: .*not grouped"):
        correlate(*pairs, "--group-by", "video")
    with pytest.raises(CommandError, match="--test: .*use bootstrap"):
        correlate(*pairs, "--test", "permutation")
    assert not Report.objects.exists()
    body = json.loads(correlate(*pairs, "--format", "json"))
    assert (body["method"], body["level"]) == ("ranking_accuracy", "pairs")
    # naming the bootstrap, the test pairs use anyway, is the same request: the stored report is reused
    assert json.loads(correlate(*pairs, "--test", "bootstrap", "--format", "json")) == body
    assert Report.objects.count() == 1
    # without a method, factuality is still Pearson
    assert json.loads(correlate("--dataset", "tiny", "--format", "json", "--resamples", "100"))["method"] == "pearson"
