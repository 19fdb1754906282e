"""Numbers given to management commands are read like every number from outside (annotation_site.command_options):
digits of other scripts, NaN, exponents and values out of the range of the column they are stored in are refused
with the option's name before anything is written, never a database traceback (issue #11). The quality-control
parameters of a campaign are changed through the checks of its creation (``campaigns.change_qc``)."""

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation_site.crowd.models import PracticeItem, Study
from annotation_site.strict_numbers import form_decimal, form_integer
from assessment import campaigns
from assessment.models import Campaign

from ..assessment.conftest import make_dataset, small_campaign

PROJECT_PACKAGES = ("annotation_site", "assessment", "metrics_eval")


def project_commands():
    return sorted(name for name, app in get_commands().items() if app.split(".")[0] in PROJECT_PACKAGES)


def test_the_project_has_its_commands():
    assert {"da_plan", "da_qc", "crowd_study", "correlate", "judgment_task", "load_demo"} <= set(project_commands())


@pytest.mark.parametrize("name", project_commands())
def test_no_command_reads_a_number_with_python_int_or_float(name):
    """``type=int`` takes "٣" (3) and any size; ``type=float`` takes "nan", "inf" and "1e2"."""
    app = get_commands()[name]
    parser = load_command_class(app, name).create_parser("manage.py", name)
    # Django's own --verbosity is an int among fixed choices
    loose = [action.dest for action in parser._actions if action.type in (int, float) and not action.choices]
    assert not loose, f"{name}: {loose} read with int / float"


@pytest.fixture
def campaign(db):
    return small_campaign(make_dataset("cmd-numbers", n_videos=12), "cmd-numbers")


def qc_of(campaign):
    return Campaign.objects.filter(pk=campaign.pk).values_list("qc_test", "qc_threshold", "qc_min_pairs").get()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--min-pairs", "-1"], "--min-pairs: the number must be a whole number from 1 to 32767, not '-1'"),
        (["--min-pairs", "40000"], "from 1 to 32767, not '40000'"),
        (["--min-pairs", "\u0663"], "--min-pairs"),  # Arabic-Indic 3
        (["--threshold", "nan"], "--threshold: the number must be a number from 0 to 1"),
        (["--threshold", "1e-2"], "--threshold"),
        (["--threshold", "\u0660.\u0665"], "--threshold"),
        (["--threshold", "0"], "thresholds must lie between 0 and 1"),
        (["--min-pairs", "500"], "No worker could pass quality control: the QC minimum would be 500 pairs"),
        (["--threshold", "0.0001", "--min-pairs", "3"], "cannot reach p < 0.0001 with fewer than"),
    ],
)
def test_da_qc_refuses_what_no_campaign_can_use_and_changes_nothing(campaign, options, message):
    before = qc_of(campaign)
    with pytest.raises(CommandError) as refused:
        call_command("da_qc", "--campaign", campaign.name, *options)
    assert message in str(refused.value)
    assert qc_of(campaign) == before


def test_da_qc_changes_what_works_through_the_same_checks(campaign):
    call_command("da_qc", "--campaign", campaign.name, "--threshold", ".01", "--min-pairs", "7")
    assert qc_of(campaign) == ("wilcoxon", 0.01, 7)


def test_change_qc_keeps_the_minimum_within_reach(campaign):
    reachable = campaign.pairs_per_hit * campaign.hits.count()
    assert campaigns.change_qc(campaign, qc_min_pairs=reachable).qc_min_pairs == reachable
    with pytest.raises(campaigns.CampaignError, match=f"rates at most {reachable} original/degraded pairs"):
        campaigns.change_qc(campaign, qc_min_pairs=reachable + 1)
    assert qc_of(campaign)[2] == reachable


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--hits-per-participant", "40000"],
            "--hits-per-participant: the number must be a whole number from 1 to 32767",
        ),
        (["--idle-minutes", "99999999999"], "--idle-minutes"),
        (["--places", "-5"], "--places"),
        (["--minutes", "\u0663"], "--minutes"),
    ],
)
def test_crowd_study_create_refuses_numbers_out_of_their_columns(campaign, options, message):
    with pytest.raises(CommandError, match=message):
        call_command("crowd_study", "create", "--name", "s", "--target", campaign.name, "--provider", "link", *options)
    assert not Study.objects.exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--accept", "90", "10"], r"the right answers \(90 to 10\) must be a range from low to high"),
        (["--accept", "0", "50", "--scale", "100", "0"], "the scale must run from a lower to a higher number"),
        (["--accept", "0", "200"], r"within the scale \(0 to 100\)"),
        (["--accept", "0", "99999999999"], "--accept: the number must be a whole number from -32768 to 32767"),
        (["--accept", "0", "50", "--feedback", " "], "a practice item needs feedback"),
    ],
)
def test_crowd_study_practice_refuses_a_range_that_cannot_work(campaign, options, message):
    call_command("crowd_study", "create", "--name", "s", "--target", campaign.name, "--provider", "link")
    base = ["--feedback", "Why."] if "--feedback" not in options else []
    with pytest.raises(CommandError, match=message):
        call_command("crowd_study", "practice", "--name", "s", "--text", "a man rides", *base, *options)
    assert not PracticeItem.objects.exists()
    call_command(
        "crowd_study",
        "practice",
        "--name",
        "s",
        "--text",
        "a man rides",
        "--accept",
        "0",
        "30",
        *["--feedback", "Why."],
    )
    assert PracticeItem.objects.get().accept_max == 30


def test_da_plan_refuses_workers_beyond_a_campaign_and_takes_the_seed_it_prints(db):
    make_dataset("plan-numbers", n_videos=12)
    plan = ["da_plan", "--dataset", "plan-numbers", "--human-system", "human", "--hit-size", "20", "--pairs", "3"]
    plan += ["--repeats", "2", "--min-distance", "5", "--qc-min-pairs", "3"]
    with pytest.raises(CommandError, match="--workers-per-hit: the number must be a whole number from 1 to 1000"):
        call_command(*plan, "--campaign", "c1", "--workers-per-hit", "40000")
    assert not Campaign.objects.exists()
    call_command(*plan, "--campaign", "c2", "--seed", str(2**63 - 1))  # 19 digits, as a printed seed may have
    assert Campaign.objects.get().seed == 2**63 - 1


@pytest.mark.parametrize("field, value", [("workers_per_hit", 40000), ("qc_min_pairs", 40000), ("hit_size", 40000)])
def test_the_campaign_api_refuses_values_out_of_their_columns(staff_user, db, field, value):
    make_dataset("api-numbers", n_videos=15)
    api = APIClient()
    api.force_authenticate(staff_user)
    body = {"name": "api-run", "dataset": "api-numbers", "systems": ["Alpha", "Beta"], "human_system": "human"}
    body.update(hit_size=20, pairs_per_hit=3, repeats_per_hit=2, min_control_distance=5, qc_min_pairs=3)
    body[field] = value
    response = api.post("/api/da/campaigns/", body, format="json")
    assert response.status_code == 400, response.content
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("field, value", [("workers_per_hit", 40000), ("qc_min_pairs", 0), ("hit_size", 2000)])
def test_create_campaign_refuses_values_out_of_range_whoever_calls_it(db, field, value):
    dataset = make_dataset("service-numbers", n_videos=12)
    with pytest.raises(campaigns.CampaignError):
        small_campaign(dataset, "s", **{field: value})
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("text, expected", [("0.05", 0.05), (".05", 0.05), (" 1 ", 1.0), ("0.", 0.0), ("-0.5", -0.5)])
def test_decimal_spellings_people_type(text, expected):
    assert form_decimal(text, low=-1, high=1, what="x") == expected


@pytest.mark.parametrize("text", ["nan", "inf", "1e-2", "\u0660.\u0665", "0,5", ".", "", "1.5", "--1", "0x1"])
def test_decimal_spellings_refused(text):
    with pytest.raises(ValueError, match="x must be a number from -1 to 1"):
        form_decimal(text, low=-1, high=1, what="x")


def test_whole_numbers_of_nineteen_digits_are_read():
    assert form_integer(str(2**63 - 1), low=0, high=2**63 - 1, what="seed") == 2**63 - 1
    with pytest.raises(ValueError):
        form_integer(str(2**63), low=0, high=2**63 - 1, what="seed")
