"""The planning and assignment commands, the replication page, the admin pages and CSRF for account workers."""

import io
import json
import re
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.http import HttpRequest
from django.test import Client

from assessment import services, simulation
from assessment.models import HIT, Assignment, Campaign, Item

from .conftest import make_dataset, small_campaign


def test_da_plan_prints_the_seed_and_replans_identically(db):
    make_dataset("cmd-ds", n_videos=20, references="gt_cmd")
    layout = dict(hit_size=20, pairs=3, repeats=2, min_distance=6, seed=31, qc_min_pairs=6)
    out = io.StringIO()
    call_command(
        "da_plan",
        campaign="cmd-a",
        dataset="cmd-ds",
        systems="Alpha,Beta",
        reference_set="gt_cmd",
        stdout=out,
        **layout,
    )
    # 40 captions of Alpha and Beta in 12 system slots per HIT (the human captions are the hidden originals)
    assert (
        "Planned campaign 'cmd-a': 4 HITs of up to 20 items over 2 systems + human 'gt_cmd'; seed 31" in out.getvalue()
    )
    assert "a worker needs 2 HITs (of 4) to reach the 6 pairs quality control needs" in out.getvalue()
    # the same plan again, naming the human system the first call made from the references
    call_command(
        "da_plan",
        campaign="cmd-b",
        dataset="cmd-ds",
        systems="Alpha,Beta",
        human_system="gt_cmd",
        stdout=io.StringIO(),
        **layout,
    )

    def plan(name):
        return list(
            Item.objects.filter(hit__campaign__name=name)
            .order_by("hit__number", "position")
            .values_list("item_type", "caption_id", "text", "degraded_start")
        )

    assert plan("cmd-a") == plan("cmd-b")
    assert Campaign.objects.get(name="cmd-a").min_control_distance == 6


@pytest.mark.parametrize(
    "options,message",
    [
        ({"dataset": "nope", "human_system": "human"}, "no dataset named 'nope'"),
        ({"dataset": "cmd-err", "human_system": "nobody"}, "has no system 'nobody'"),
        ({"dataset": "cmd-err", "human_system": "human", "systems": "Alpha,Zeta"}, "has no system Zeta"),
        ({"dataset": "cmd-err", "human_system": "Alpha"}, "human system"),
        ({"dataset": "cmd-err", "reference_set": "gt_none"}, "no reference set 'gt_none'"),
    ],
)
def test_da_plan_refusals(db, options, message):
    make_dataset("cmd-err", n_videos=10)
    with pytest.raises(CommandError, match=message):
        call_command("da_plan", campaign="x", hit_size=20, pairs=3, repeats=2, **options)
    assert not Campaign.objects.exists()


def test_da_assign_prints_links_and_the_entry_link(campaign):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "da_assign",
        campaign=campaign.name,
        workers="A1,B2",
        entry_link=True,
        base_url="https://da.example.org/",
        stdout=out,
        stderr=err,
    )
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"https://da\.example\.org/da/join/[^/]+/\?worker_id=WORKER_ID", lines[0])
    assert re.fullmatch(r"A1\tHIT 1\thttps://da\.example\.org/da/a/[^/]+/", lines[1])
    assert lines[2].startswith("B2\tHIT 2\t")
    assert Assignment.objects.count() == 2
    places = HIT.objects.filter(campaign=campaign).count() * campaign.workers_per_hit
    call_command(
        "da_assign",
        campaign=campaign.name,
        workers=",".join(f"w{i}" for i in range(places)),
        stdout=io.StringIO(),
        stderr=err,
    )
    assert "no HIT left for this worker" in err.getvalue()


def test_replication_page(staff_client, db):
    quality = {"human": 85, "Alpha": 65, "Beta": 45, "Gamma": 25}
    for name, seed in (("first", 1), ("second", 2)):
        campaign = small_campaign(make_dataset(f"{name}-ds", n_videos=24), name, qc_min_pairs=6)
        simulation.simulate_campaign(campaign, {"diligent": 8}, quality, seed=seed, hits_per_worker=3, prefix=name)
    page = staff_client.get("/da/replication/?a=first&b=second").content.decode()
    table = page[page.index('id="replication"') :]
    r = re.findall(r'<th scope="row">(raw|z)</th><td class="num">([-\d.]+)</td>', table)
    assert [name for name, _ in r] == ["raw", "z"] and all(float(value) > 0.9 for _, value in r)
    assert staff_client.get("/da/replication/").status_code == 200
    out = io.StringIO()
    call_command("da_replication", a="first", b="second", format="json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["n_systems"] == 4 and f"{result['z']['r']:.3f}" == r[1][1]
    with pytest.raises(CommandError, match="no campaign"):
        call_command("da_replication", a="first", b="third")


def test_admin_pages(admin_client, campaign):
    simulation.simulate_campaign(campaign, {"diligent": 2}, {"human": 80, "Alpha": 60, "Beta": 40, "Gamma": 20})
    services.store_qc(campaign)
    for model in ("campaign", "hit", "item", "worker", "assignment", "judgment", "qcresult"):
        assert admin_client.get(f"/admin/assessment/{model}/").status_code == 200, model


def test_own_workers_submit_with_the_csrf_token(campaign, django_user_model):
    django_user_model.objects.create_user("csrf-rater", password="pw-csrf-12345")
    client = Client(enforce_csrf_checks=True)
    client.login(request=HttpRequest(), username="csrf-rater", password="pw-csrf-12345")  # django-axes wants it
    start = client.get(f"/da/campaigns/{campaign.name}/rate/").content.decode()  # the Start page (no slot yet)
    form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', start).group(1)
    client.post(f"/da/campaigns/{campaign.name}/rate/", {"csrfmiddlewaretoken": form_token})
    page = client.get(f"/da/campaigns/{campaign.name}/rate/").content.decode()
    token = re.search(r'data-csrf-token="([^"]+)"', page).group(1)
    submit_url = re.search(r'data-submit-url="([^"]+)"', page).group(1)
    item = services.next_item(Assignment.objects.get(worker__user__username="csrf-rater"))
    body = {"item": item.pk, "score": 30, "client_uuid": str(uuid.uuid4()), "played": True}
    assert client.post(submit_url, body, content_type="application/json").status_code == 403  # no token
    response = client.post(submit_url, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201


def test_da_assign_links_start_with_the_configured_public_address(campaign, settings):
    settings.CAPTIONEVAL_BASE_URL = "https://rate.example.net:8443/"
    out = io.StringIO()
    call_command("da_assign", campaign=campaign.name, workers="P1", entry_link=True, stdout=out)
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"https://rate\.example\.net:8443/da/join/[^/]+/\?worker_id=WORKER_ID", lines[0])
    assert re.fullmatch(r"P1\tHIT \d+\thttps://rate\.example\.net:8443/da/a/[^/]+/", lines[1])
    from assessment.management.commands.da_assign import Command

    parser = Command().create_parser("manage.py", "da_assign")
    help_text = parser.format_help()
    assert "--base-url BASE_URL" in help_text and "CAPTIONEVAL_BASE_URL" in help_text


def test_da_plan_the_api_and_the_form_share_one_campaign_path(db, staff_user):
    """The three entry points plan the same campaign for the same request, whatever order the systems come in
    (da_plan kept the user's order and the API the database's before they shared ``create_campaign_by_names``)."""
    from rest_framework.test import APIClient

    make_dataset("one-path", n_videos=20, systems=("Alpha", "Beta", "Gamma"))
    layout = dict(hit_size=20, seed=13, qc_min_pairs=6)
    call_command(
        "da_plan",
        campaign="by-command",
        dataset="one-path",
        systems="Gamma,Alpha",
        human_system="human",
        pairs=3,
        repeats=2,
        min_distance=6,
        stdout=io.StringIO(),
        **layout,
    )
    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post(
        "/api/da/campaigns/",
        {
            "name": "by-api",
            "dataset": "one-path",
            "systems": ["Gamma", "Alpha"],
            "human_system": "human",
            "pairs_per_hit": 3,
            "repeats_per_hit": 2,
            "min_control_distance": 6,
            **layout,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    page = Client()
    page.force_login(staff_user)
    response = page.post(
        "/da/campaigns/new/?dataset=one-path",
        {
            "dataset": "one-path",
            "name": "by-page",
            "systems": ["Gamma", "Alpha"],
            "human": "system:human",
            "pairs_per_hit": 3,
            "repeats_per_hit": 2,
            "min_control_distance": 6,
            "qc_test": "wilcoxon",
            "qc_threshold": 0.05,
            **layout,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]

    def plan(name):
        return list(
            Item.objects.filter(hit__campaign__name=name)
            .order_by("hit__number", "position")
            .values_list("item_type", "caption_id", "text", "degraded_start")
        )

    assert plan("by-command") and plan("by-command") == plan("by-api") == plan("by-page")
    for name in ("by-command", "by-api", "by-page"):
        assert sorted(Campaign.objects.get(name=name).systems.values_list("name", flat=True)) == ["Alpha", "Gamma"]


def test_da_plan_and_the_api_refuse_unknown_systems_with_the_same_words(db, staff_user):
    from rest_framework.test import APIClient

    make_dataset("one-refusal", n_videos=10)
    with pytest.raises(CommandError) as refused:
        call_command(
            "da_plan",
            campaign="x",
            dataset="one-refusal",
            systems="Zeta,Alpha,Omega",
            human_system="human",
            hit_size=20,
            pairs=3,
            repeats=2,
        )
    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post(
        "/api/da/campaigns/",
        {"name": "x", "dataset": "one-refusal", "human_system": "human", "systems": ["Zeta", "Alpha", "Omega"]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == str(refused.value) == "dataset one-refusal has no system Zeta, Omega"


def test_worker_ids_are_checked_on_every_path_before_any_hit_is_handed_out(campaign, staff_client):
    """da_assign stopped with a ValueError traceback at a reserved id, after handing out HITs to the ids before
    it; and 'alice bob' (two ids separated by a space, where the page and the command split at commas and lines)
    became one worker, while an entry link refuses an id with a space."""
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("da_assign", campaign=campaign.name, workers="A1,account:bob,alice bob", stdout=err, stderr=err)
    assert "no HIT was handed out" in str(caught.value)
    assert "account:bob: the worker id 'account:bob' begins with 'account:'" in str(caught.value)
    assert "alice bob: the worker id 'alice bob' holds a space: ids are letters, digits and . _ - @ + :" in str(
        caught.value
    )
    assert not Assignment.objects.exists()

    page = staff_client.post(f"/da/campaigns/{campaign.name}/assign/", {"workers": "carol dave"}, follow=True)
    assert "holds a space" in page.content.decode()
    api = staff_client.post(
        f"/api/da/campaigns/{campaign.name}/assignments/", {"worker_id": "carol dave"}, content_type="application/json"
    )
    assert api.status_code == 400 and "holds a space" in api.json()["detail"]
    assert not Assignment.objects.exists()
    call_command("da_assign", campaign=campaign.name, workers="carol.d@lab, dave+2", stdout=io.StringIO())
    assert sorted(Assignment.objects.values_list("worker__external_id", flat=True)) == ["carol.d@lab", "dave+2"]
