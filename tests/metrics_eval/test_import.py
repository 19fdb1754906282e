"""Importing scores of any metric (and correct/foil pairs): every layout, every problem located by file, line and
field, nothing written when anything is wrong, one transaction when all is right."""

import json

import pytest
from django.core.management import CommandError, call_command

from metrics_eval import services
from metrics_eval.models import CaptionPair, Metric, MetricScore
from metrics_eval.score_import import FormatError

from .conftest import CAPTIONS, stored_scores

pytestmark = pytest.mark.django_db


def test_long_csv(tiny_dataset):
    text = "video_id,system,metric,score\nvid-a,Alpha,emscore,0.81\nvid-a,Beta,emscore,0.5\nvid-b,Alpha,pacs,-1e-3\n"
    result = services.import_scores(tiny_dataset, text, "scores.csv")
    assert result.metrics == {"emscore": 2, "pacs": 1}
    assert stored_scores(tiny_dataset, "emscore") == {("vid-a", "Alpha"): 0.81, ("vid-a", "Beta"): 0.5}
    metric = Metric.objects.get(dataset=tiny_dataset, name="pacs")
    assert (metric.source, metric.origin) == ("imported", "scores.csv")


def test_wide_csv_skips_empty_cells(tiny_dataset):
    text = "video_id,system,EMScore,FactVC\nvid-a,Alpha,0.8,0.7\nvid-a,Gamma,,0.2\n"
    result = services.import_scores(tiny_dataset, text, "wide.csv", version="v1.0")
    assert result.metrics == {"EMScore": 1, "FactVC": 2}
    assert Metric.objects.get(dataset=tiny_dataset, name="FactVC").version == "v1.0"


def test_json_with_description_and_jsonl(tiny_dataset):
    document = {
        "metric": "vc-inspector",
        "version": "7B",
        "parameters": {"prompt": "v2"},
        "scores": [
            {"video_id": "vid-a", "system": "Alpha", "score": 4},
            {"video_id": "vid-b", "system": "Gamma", "score": 2.5},
        ],
    }
    services.import_scores(tiny_dataset, json.dumps(document, indent=2), "inspector.json")
    metric = Metric.objects.get(dataset=tiny_dataset, name="vc-inspector")
    assert (metric.version, metric.parameters) == ("7B", {"prompt": "v2"})
    lines = "\n".join(
        json.dumps({"video_id": "vid-c", "system": s, "metric": "fifa", "score": i})
        for i, s in enumerate(["Alpha", "Beta"])
    )
    assert services.import_scores(tiny_dataset, lines, "fifa.jsonl").metrics == {"fifa": 2}
    records = json.dumps([{"video_id": "vid-d", "system": "Beta", "metric": "clip", "score": 0.3}])
    assert services.import_scores(tiny_dataset, records, "clip.json").metrics == {"clip": 1}


def test_every_problem_is_located_and_nothing_is_written(tiny_dataset):
    text = (
        "video_id,system,metric,score\n"
        "vid-a,Alpha,emscore,0.8\n"
        "vid-x,Alpha,emscore,0.1\n"  # line 3: unknown video
        "vid-a,Delta,emscore,0.1\n"  # line 4: unknown system
        "vid-a,Beta,emscore,high\n"  # line 5: not a number
        "vid-a,Beta,emscore,nan\n"  # line 6: not finite
        "vid-a,Alpha,emscore,0.9\n"  # line 7: second score for the same caption
        ",Gamma,emscore,0.4\n"  # line 8: empty video id
        "vid-b,Beta,bad name!,0.3\n"
    )  # line 9: invalid metric name
    with pytest.raises(FormatError) as error:
        services.import_scores(tiny_dataset, text, "bad.csv")
    problems = [str(p) for p in error.value.problems]
    assert problems == [  # all of them, in file order
        "bad.csv, line 3, video_id: unknown video 'vid-x': it is not in the dataset",
        "bad.csv, line 4, system: unknown system 'Delta': it is not in the dataset",
        "bad.csv, line 5, score: score must be a finite number, not 'high'",
        "bad.csv, line 6, score: score must be a finite number, not 'nan'",
        "bad.csv, line 7, score: a second emscore score for Alpha on vid-a (first on line 2)",
        "bad.csv, line 8, video_id: video_id is missing or empty",
        "bad.csv, line 9, metric: metric must be a name of letters, digits, '.', '_', '+', '-', not 'bad name!'",
    ]
    assert not Metric.objects.exists() and not MetricScore.objects.exists()


@pytest.mark.parametrize("written", ["\u0663", "1_000", "\uff11", "0x10", "1e2e3", "infinity"])
def test_a_score_float_would_coerce_is_refused(tiny_dataset, written):
    """float() reads Arabic-Indic and full-width digits and '_' between digits: such a score was stored as a
    number nobody wrote. Exponents, as programs write small numbers, still count."""
    text = f"video_id,system,metric,score\nvid-a,Alpha,emscore,{written}\nvid-a,Beta,emscore,1.5e-05\n"
    with pytest.raises(FormatError) as error:
        services.import_scores(tiny_dataset, text, "scores.csv")
    assert [str(p) for p in error.value.problems] == [
        f"scores.csv, line 2, score: score must be a finite number, not {written!r}"
    ]
    assert not MetricScore.objects.exists() and not CaptionPair.objects.exists()
    services.import_scores(tiny_dataset, text.replace(written, " 2.5E+1 "), "scores.csv")
    assert stored_scores(tiny_dataset, "emscore") == {("vid-a", "Alpha"): 25.0, ("vid-a", "Beta"): 1.5e-05}


def test_json_problems_carry_line_numbers(tiny_dataset):
    text = (
        '[\n  {"video_id": "vid-a", "system": "Alpha", "metric": "m", "score": 1},\n'
        '  {"video_id": "vid-a", "system": "Alpha", "metric": "m", "score": true}\n]\n'
    )
    with pytest.raises(FormatError) as error:
        services.import_scores(tiny_dataset, text, "m.json")
    assert [str(p) for p in error.value.problems] == ["m.json, line 3, score: score must be a finite number, not True"]
    with pytest.raises(FormatError, match=r"m.jsonl, line 2: invalid JSON"):
        services.import_scores(tiny_dataset, '{"video_id": "vid-a"}\n{oops\n', "m.jsonl")
    with pytest.raises(FormatError, match="unknown file type"):
        services.import_scores(tiny_dataset, "x", "scores.xlsx")
    # a record naming a field twice (was stored with the last value: the score for Beta, not Alpha)
    twice = '{"metric": "m", "scores": [\n{"video_id": "vid-a", "system": "Alpha", "score": 1, "system": "Beta"}]}'
    with pytest.raises(FormatError) as error:
        services.import_scores(tiny_dataset, twice, "m.json")
    assert [str(p) for p in error.value.problems] == [
        "m.json, line 2: invalid JSON: key 'system' appears more than once in an object (column 1)"
    ]
    with pytest.raises(FormatError, match=r"pairs.json, line 1: invalid JSON: key 'foil' appears more than once"):
        services.import_pairs(
            tiny_dataset,
            '[{"video_id": "vid-a", "correct": "Alpha", "foil": "Beta", "foil": "Gamma"}]',
            "pairs.json",
            pair_set="dup",
        )
    assert not MetricScore.objects.exists()


def test_a_scores_key_nested_in_parameters_neither_cuts_the_scores_nor_shifts_their_lines(tiny_dataset):
    """The lines of a described metric's scores were found by searching the text for '"scores": [', which found a
    "scores" key inside "parameters" first: the records were zipped with that array's one element, so 1 of 12
    scores was stored (201, no warning), and with a longer nested array the problems named wrong lines."""
    records = [{"video_id": v, "system": s, "score": i / 10} for i, (v, s, *_) in enumerate(CAPTIONS)]
    document = {"metric": "withparams", "version": "1", "parameters": {"layers": [12], "scores": ["clip"]}}
    text = json.dumps(document)[:-1] + ',\n "scores": [\n' + ",\n".join(map(json.dumps, records)) + "\n]}\n"
    assert services.import_scores(tiny_dataset, text, "withparams.json").metrics == {"withparams": 12}
    assert stored_scores(tiny_dataset, "withparams") == {(v, s): i / 10 for i, (v, s, *_) in enumerate(CAPTIONS)}
    assert Metric.objects.get(name="withparams").parameters == {"layers": [12], "scores": ["clip"]}

    records[4]["score"] = "high"  # on line 9 of the file below
    nested = {"metric": "other", "parameters": {"scores": [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]] * 3}}
    text = json.dumps(nested)[:-1] + ',\n "scores": [\n' + ",\n".join(map(json.dumps, records)) + "\n]}\n"
    text = text.replace('"parameters": ', '\n"parameters":\n')  # nested array: line 3; scores: from line 5
    with pytest.raises(FormatError) as error:
        services.import_scores(tiny_dataset, text, "other.json")
    assert [str(p) for p in error.value.problems] == [
        "other.json, line 9, score: score must be a finite number, not 'high'"
    ]
    assert not Metric.objects.filter(name="other").exists()


def test_existing_metrics_are_replaced_only_when_asked(tiny_dataset):
    first = "video_id,system,metric,score\nvid-a,Alpha,m,1\nvid-a,Beta,m,2\n"
    services.import_scores(tiny_dataset, first, "one.csv")
    again = "video_id,system,metric,score\nvid-a,Alpha,m,5\n"
    with pytest.raises(FormatError, match="metric 'm' already has scores"):
        services.import_scores(tiny_dataset, again, "two.csv")
    services.import_scores(tiny_dataset, again, "two.csv", replace=True)
    assert stored_scores(tiny_dataset, "m") == {("vid-a", "Alpha"): 5.0}
    Metric.objects.filter(name="m").update(source="computed")
    with pytest.raises(FormatError, match="metric 'm' is computed by the platform"):
        services.import_scores(tiny_dataset, again, "three.csv")


def test_import_command_reports_problems(tiny_dataset, tmp_path):
    good = tmp_path / "scores.csv"
    good.write_text("video_id,system,metric,score\nvid-a,Alpha,emscore,0.5\n")
    call_command("metric_scores", "--dataset", "tiny", "--import", str(good), stdout=open(tmp_path / "out", "w"))
    assert (tmp_path / "out").read_text().startswith("Imported 1 emscore scores into tiny")
    bad = tmp_path / "bad.csv"
    bad.write_text("video_id,system,metric,score\nvid-z,Alpha,other,0.5\n")
    with pytest.raises(CommandError, match=r"1 problem found, nothing was imported:\nbad.csv, line 2, video_id"):
        call_command("metric_scores", "--dataset", "tiny", "--import", str(bad))


def test_pairs_import(tiny_dataset, tmp_path):
    text = "video_id,correct,foil\nvid-a,Alpha,Gamma\nvid-b,Alpha,Beta\n"
    assert services.import_pairs(tiny_dataset, text, "pairs.csv", pair_set="foil") == 2
    assert CaptionPair.objects.filter(pair_set="foil").count() == 2
    with pytest.raises(services.MetricError, match="already exists"):
        services.import_pairs(tiny_dataset, text, "pairs.csv", pair_set="foil")
    bad = "video_id,correct,foil\nvid-a,Alpha,Alpha\nvid-a,Alpha,Zeta\nvid-a,Alpha,Gamma\nvid-a,Alpha,Gamma\n"
    with pytest.raises(FormatError) as error:
        services.import_pairs(tiny_dataset, bad, "bad.csv", pair_set="other")
    assert [str(p) for p in error.value.problems] == [
        "bad.csv, line 2, foil: correct and foil name the same system",
        "bad.csv, line 3, foil: unknown system 'Zeta': it is not in the dataset",
        "bad.csv, line 5: the pair Alpha / Gamma on vid-a appears twice (first on line 4)",
    ]
    assert not CaptionPair.objects.filter(pair_set="other").exists()
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"video_id": "vid-c", "correct": "Alpha", "foil": "Gamma"}\n')
    call_command(
        "caption_pairs", "--dataset", "tiny", "--import", str(path), "--name", "foil2", stdout=open(tmp_path / "o", "w")
    )
    assert CaptionPair.objects.filter(pair_set="foil2").count() == 1


def test_a_pairs_row_with_more_cells_than_the_header_or_a_header_naming_a_column_twice_is_refused(tiny_dataset):
    """Extra cells were dropped without a word, and a column named twice was read from its last copy."""
    extra = "video_id,correct,foil\nvid-a,Alpha,Gamma,Beta\nvid-b,Alpha\n"
    with pytest.raises(FormatError) as error:
        services.import_pairs(tiny_dataset, extra, "pairs.csv", pair_set="extra")
    assert [str(p) for p in error.value.problems] == [
        "pairs.csv, line 2: expected 3 fields, found 4",
        "pairs.csv, line 3: expected 3 fields, found 2",
    ]
    twice = "video_id,correct,foil,foil\nvid-a,Alpha,Gamma,Beta\n"
    with pytest.raises(FormatError, match="the header names 'foil' more than once"):
        services.import_pairs(tiny_dataset, twice, "pairs.csv", pair_set="twice")
    assert not CaptionPair.objects.exists()


def test_a_metric_is_deleted_by_the_command_the_api_and_the_page(
    tiny_scores, staff_researcher, annotator, outsider, capsys
):
    """A metric could be deleted only in the admin (services.delete_metric had no caller): a mistyped import
    stayed in every "all metrics" analysis. The command, the API and the dataset's metrics page delete one with
    all its scores, over the one service; stored reports stay."""
    from metrics_eval.models import Report
    from metrics_eval.reports import factuality_report

    factuality_report(tiny_scores)
    call_command("metric_scores", "--dataset", "tiny", "--delete", "noise")
    assert "Deleted metric noise of tiny with its 12 scores" in capsys.readouterr().out
    assert list(Metric.objects.values_list("name", flat=True)) == ["good"]
    assert Report.objects.count() == 1
    with pytest.raises(CommandError, match="dataset tiny has no metric 'noise'"):
        call_command("metric_scores", "--dataset", "tiny", "--delete", "noise")

    services.import_scores(tiny_scores, "video_id,system,metric,score\nvid-a,Alpha,typo,1\n", "typo.csv")
    url = "/api/metrics/datasets/tiny/metrics/typo/"
    assert staff_researcher.api.get(url).json()["n_scores"] == 1
    for persona in (annotator, outsider):
        assert persona.api.delete(url).status_code == 403
    assert staff_researcher.api.delete(url).status_code == 204
    assert staff_researcher.api.delete(url).status_code == 404
    assert not Metric.objects.filter(name="typo").exists() and not MetricScore.objects.filter(metric__name="typo")

    page = staff_researcher.client.get("/metrics/datasets/tiny/").content.decode()
    assert 'action="/metrics/datasets/tiny/metrics/good/delete/"' in page and 'name="confirm" value="good"' in page
    staff_researcher.client.post("/metrics/datasets/tiny/metrics/good/delete/")  # not confirmed: nothing deleted
    assert Metric.objects.filter(name="good").exists()
    assert annotator.client.post("/metrics/datasets/tiny/metrics/good/delete/", {"confirm": "good"}).status_code == 302
    assert Metric.objects.filter(name="good").exists()  # (sent to the login page)
    response = staff_researcher.client.post(
        "/metrics/datasets/tiny/metrics/good/delete/", {"confirm": "good"}, follow=True
    )
    assert "Deleted metric good with its 12 scores" in response.content.decode()
    assert not Metric.objects.exists() and not MetricScore.objects.exists()
