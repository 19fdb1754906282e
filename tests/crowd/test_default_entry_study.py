"""A campaign's default crowd entry study (``da-NAME-entry``, behind ``/da/join/TOKEN/?worker_id=ID``) lets a
participant do the HITs quality control needs of one worker (the campaign page's "a worker needs k HITs"), so
that they reach a verdict; it allowed one HIT, and everyone stayed "insufficient data". A study letting a
participant do fewer HITs than QC needs is warned about where it is made and shown (command, page, API)."""

import importlib
import re
import uuid
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation_site.crowd import admission, studies
from annotation_site.crowd.hooks import default_entry_url
from annotation_site.crowd.models import ParticipantLink, Study
from assessment import campaigns, services
from assessment.models import Assignment, Campaign, Item, Worker

from ..assessment.conftest import make_dataset

pytestmark = pytest.mark.django_db


def _create_through_the_form(staff_client, name="qa-da"):
    """As the QA probe did: the form's suggested layout (layout fields left empty), seed 7, "Create and plan"."""
    make_dataset("entry-ds", n_videos=4)  # 4 pairs per HIT: 3 HITs of 3
    page = staff_client.get("/da/campaigns/new/?dataset=entry-ds").content.decode()
    systems = sorted(set(re.findall(r'name="systems" value="([^"]+)"', page)))
    human = re.search(r'<option value="(system:[^"]+)"', page).group(1)
    response = staff_client.post(
        "/da/campaigns/new/",
        {
            "dataset": "entry-ds",
            "name": name,
            "systems": systems,
            "human": human,
            "seed": 7,
            "qc_test": "wilcoxon",
            "qc_threshold": 0.05,
            "qc_min_pairs": 10,
        },
    )
    assert response.status_code == 302 and response["Location"] == f"/da/campaigns/{name}/"
    return Campaign.objects.get(name=name)


def _stated_need(staff_client, campaign):
    """(k, HITs) of the campaign page's "A worker needs k HITs (of n) to reach the ... pairs", and its entry link."""
    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    need = re.search(r"A worker needs (\d+) HITs? \(of (\d+)\) to reach the (\d+) pairs", page)
    entry = re.search(r"/da/join/([^/]+)/\?worker_id=", page)
    assert need and entry, "the campaign page states the workload and the entry link"
    return int(need.group(1)), int(need.group(2)), entry.group(1)


def _join(client, token, worker_id):
    """Open the campaign's entry link and press Start: the rating page's response, or the page refusing."""
    page = client.get(f"/da/join/{token}/?worker_id={worker_id}", follow=True)
    found = re.search(r'action="(/crowd/w/[^/]+/start/)"', page.content.decode())
    return client.post(found.group(1)) if page.status_code == 200 and found else page


def _rate_the_hit(client, response, *, good=True):
    """Rate every item of the HIT the rating page shows, then go where the page goes when done (the crowd's end
    page, which completes the participation): (the assignment, the end page)."""
    html = response.content.decode()
    address = re.search(r'data-address="(/da/a/[^"]+/)"', html).group(1)
    assignment = Assignment.objects.select_related("hit__campaign").get(
        pk=services.assignment_from_token(address.split("/")[-2]).pk
    )
    for item, item_type in Item.objects.filter(hit=assignment.hit).order_by("position").values_list("pk", "item_type"):
        score = {"original": 90, "degraded": 10}.get(item_type, 60) if good else 50
        services.submit(assignment, item_id=item, score=score, client_uuid=uuid.uuid4(), played=True)
    end = client.get(re.search(r'data-finish-url="([^"]+)"', html).group(1))
    assert end.status_code == 200 and b'data-role="code"' in end.content
    return assignment, end.content.decode()


@pytest.mark.parametrize("good", [True, False])
def test_a_worker_by_the_entry_link_does_the_hits_qc_needs_and_gets_a_verdict(client, staff_client, good):
    campaign = _create_through_the_form(staff_client)
    need, n_hits, token = _stated_need(staff_client, campaign)
    assert 1 < need <= n_hits  # the layout the form suggests for this dataset needs several HITs per worker
    hits, ends = set(), []
    for _ in range(need):
        response = _join(client, token, "mob1")
        assert response.status_code == 200 and b'id="da-state"' in response.content, response.content[:300]
        assignment, end = _rate_the_hit(client, response, good=good)
        hits.add(assignment.hit_id)
        ends.append(end)
    for done, end in enumerate(ends[:-1], start=1):  # the end page says there is more to do
        assert f"This study has {need - done} more HIT" in end and "open the link you were given again" in end
    assert 'data-role="more-hits"' not in ends[-1] and "You can then close this page" in ends[-1]
    assert len(hits) == need  # a different HIT each time
    refused = _join(client, token, "mob1").content.decode()
    assert "You have already done every task this study has for you" in refused  # then no more
    worker = Worker.objects.get(external_id__endswith=":mob1")
    status = services.qc_statuses(campaign)[worker.pk]
    assert status == ("passed" if good else "failed")  # a verdict, not "insufficient_data"
    study = Study.objects.get(name=f"da-{campaign.name}-entry")
    assert study.hits_per_participant == need and studies.qc_warning(study) == ""


def test_an_older_default_entry_study_is_raised_on_the_way_in_and_by_the_migration(staff_client):
    campaign = _create_through_the_form(staff_client)
    need, _, token = _stated_need(staff_client, campaign)
    default_entry_url("da", campaign.pk, campaign.name)
    study = Study.objects.get(name=f"da-{campaign.name}-entry")
    Study.objects.filter(pk=study.pk).update(hits_per_participant=1)  # as made before the fix
    study.refresh_from_db()
    assert f"Quality control needs {need} HITs of one participant" in studies.qc_warning(study)
    staff_client.get(f"/da/join/{token}/?worker_id=w1")  # the entry link raises it on the way in
    study.refresh_from_db()
    assert study.hits_per_participant == need

    Study.objects.filter(pk=study.pk).update(hits_per_participant=1)
    more = Study.objects.create(  # a default study someone gave more HITs keeps them
        name="da-other-entry",
        provider="link",
        protocol="da",
        object_id=campaign.pk,
        target_name="x",
        status="published",
    )
    Study.objects.filter(pk=more.pk).update(hits_per_participant=need + 2)
    migration = importlib.import_module("assessment.migrations.0007_default_entry_studies_allow_qc_hits")
    migration.allow_qc_hits(apps, None)
    assert Study.objects.get(pk=study.pk).hits_per_participant == need
    assert Study.objects.get(pk=more.pk).hits_per_participant == need + 2


def test_a_higher_qc_minimum_raises_the_entry_studys_allowance(staff_client):
    campaign = _create_through_the_form(staff_client)
    default_entry_url("da", campaign.pk, campaign.name)
    study = Study.objects.get(name=f"da-{campaign.name}-entry")
    before = study.hits_per_participant
    n_hits = campaign.hits.count()
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_pairs=5)  # as if planned with a lower minimum
    campaign.refresh_from_db()
    Study.objects.filter(pk=study.pk).update(hits_per_participant=campaigns.crowd_hits_per_participant(campaign))
    lower = Study.objects.get(pk=study.pk).hits_per_participant
    assert lower < before == n_hits
    campaigns.change_qc(campaign, qc_min_pairs=campaign.pairs_per_hit * n_hits)  # every HIT's pairs
    study.refresh_from_db()
    assert study.hits_per_participant == n_hits
    assert f"needs {n_hits} HITs" in campaigns.plan_workload(campaign)


def test_a_study_allowing_fewer_hits_than_qc_needs_is_warned(client, staff_client, staff_user):
    campaign = _create_through_the_form(staff_client)
    need, _, _ = _stated_need(staff_client, campaign)
    err = StringIO()
    call_command(
        "crowd_study", "create", "--target", campaign.name, "--provider", "prolific", "--name", "qa-prolific",
        stdout=StringIO(), stderr=err,
    )  # fmt: skip
    assert f"Quality control needs {need} HITs of one participant of {campaign.name}" in err.getvalue()
    assert "lets each participant do 1 HIT:" in err.getvalue() and "insufficient data" in err.getvalue()
    made = staff_client.post(
        reverse("crowd-study-create"),
        {"protocol": "da", "target": campaign.name, "name": "qa-mturk", "provider": "mturk", "reward": "1"},
        follow=True,
    ).content.decode()
    assert "Study qa-mturk created" in made and f"Quality control needs {need} HITs" in made
    page = staff_client.get(reverse("crowd-study", args=["qa-mturk"])).content.decode()
    assert 'id="qc-unreachable"' in page
    detail = staff_client.get(reverse("api-crowd-study", args=["qa-prolific"])).json()
    assert f"Quality control needs {need} HITs" in detail["qc_warning"]

    err = StringIO()  # enough HITs per participant: no warning
    call_command(
        "crowd_study", "create", "--target", campaign.name, "--provider", "link", "--name", "qa-panel",
        "--hits-per-participant", str(need), stdout=StringIO(), stderr=err,
    )  # fmt: skip
    assert "Quality control needs" not in err.getvalue()
    assert 'id="qc-unreachable"' not in staff_client.get(reverse("crowd-study", args=["qa-panel"])).content.decode()
    assert staff_client.get(reverse("api-crowd-study", args=["qa-panel"])).json()["qc_warning"] == ""


def test_the_end_page_of_a_per_participant_link_counts_the_links_own_hits(client, staff_client):
    """A per-participant link for one HIT in a study allowing more: its end page promises no further HIT."""
    campaign = _create_through_the_form(staff_client)
    need, _, _ = _stated_need(staff_client, campaign)
    study = Study.objects.create(
        name="qa-named", provider="link", protocol="da", object_id=campaign.pk, target_name=campaign.name,
        status="published", hits_per_participant=need,
    )  # fmt: skip
    expires = timezone.now() + timezone.timedelta(days=1)
    for pid, max_hits in (("one", 1), ("all", need)):
        [(_, token)] = admission.create_participant_links(study, [pid], expires_at=expires, max_hits=max_hits)
        home = client.get(reverse("crowd-participant-link", args=[token])).content.decode()
        start = re.search(r'action="(/crowd/w/[^/]+/start/)"', home).group(1)
        _, end = _rate_the_hit(client, client.post(start))
        if max_hits == 1:
            assert 'data-role="more-hits"' not in end
        else:
            assert f"This study has {need - 1} more HIT" in end
    assert ParticipantLink.objects.count() == 2


def test_per_participant_links_allow_the_studys_hits_and_short_links_are_warned(staff_client):
    """Links made without a number of HITs allowed 1 whatever the study allowed: in a DA study whose QC needs k > 1
    HITs of one worker, everyone by them stayed 'insufficient data' and nothing said so."""
    campaign = _create_through_the_form(staff_client)
    need, _, _ = _stated_need(staff_client, campaign)
    assert need > 1
    study = Study.objects.create(
        name="qa-links", provider="link", protocol="da", object_id=campaign.pk, target_name=campaign.name,
        status="published", hits_per_participant=need,
    )  # fmt: skip
    page = staff_client.get(reverse("crowd-study", args=[study.name])).content.decode()
    assert f'name="max_hits" value="{need}"' in page  # the form offers the study's allowance
    err = StringIO()
    call_command("crowd_study", "links", "--name", study.name, "--participants", "cmd-1", stdout=StringIO(), stderr=err)
    assert "Quality control needs" not in err.getvalue()
    answer = staff_client.post(
        reverse("api-crowd-study-action", args=[study.name, "links"]),
        {"participant_ids": ["api-1"]},
        content_type="application/json",
    )
    assert answer.status_code == 201 and answer.json()["qc_warning"] == ""
    staff_client.post(reverse("crowd-study-links", args=[study.name]), {"ids": "page-1", "days": "7", "max_hits": ""})
    allowed = dict(ParticipantLink.objects.filter(study=study).values_list("participant__platform_id", "max_hits"))
    assert allowed == {"cmd-1": need, "api-1": need, "page-1": need}
    assert studies.qc_warning(study) == ""

    err = StringIO()  # links asked for with fewer HITs: made, and warned about wherever they are seen
    call_command(
        "crowd_study", "links", "--name", study.name, "--participants", "short-1", "short-2", "--max-hits", "1",
        stdout=StringIO(), stderr=err,
    )  # fmt: skip
    expected = f"Quality control needs {need} HITs of one participant of {campaign.name}, but 2 per-participant links"
    assert expected in err.getvalue() and "let their participant do at most 1 HIT:" in err.getvalue()
    assert expected in staff_client.get(reverse("api-crowd-study", args=[study.name])).json()["qc_warning"]
    page = staff_client.get(reverse("crowd-study", args=[study.name])).content.decode()
    assert 'id="qc-unreachable"' in page and "2 per-participant links" in page
    ParticipantLink.objects.filter(participant__platform_id="short-2").update(revoked=True)  # only live links count
    assert "1 per-participant link of study qa-links let their participant do 1 HIT:" in studies.qc_warning(study)
    admission.create_participant_links(  # made again with enough HITs: renewed, nothing to warn about
        study, ["short-1"], expires_at=timezone.now() + timezone.timedelta(days=1), max_hits=need
    )
    assert studies.qc_warning(study) == ""


def test_the_hits_quality_control_needs_can_be_given_where_the_warning_asks(staff_client):
    """The warning said 'Give each participant k HITs (hits_per_participant ...)' but the studies page's form had
    no such field and nothing could change it after creation except the admin."""
    campaign = _create_through_the_form(staff_client)
    need, _, _ = _stated_need(staff_client, campaign)
    made = staff_client.post(
        reverse("crowd-study-create"),
        {"protocol": "da", "target": campaign.name, "name": "qa-made", "provider": "link", "reward": "1",
         "hits_per_participant": str(need)},
        follow=True,
    ).content.decode()  # fmt: skip
    assert "Study qa-made created" in made and "Quality control needs" not in made
    assert Study.objects.get(name="qa-made").hits_per_participant == need

    staff_client.post(
        reverse("crowd-study-create"),
        {"protocol": "da", "target": campaign.name, "name": "qa-later", "provider": "mturk", "reward": "1"},
    )
    study = Study.objects.get(name="qa-later")
    assert study.hits_per_participant == 1 and "crowd_study hits --hits-per-participant" in studies.qc_warning(study)
    page = staff_client.post(
        reverse("crowd-study-action", args=[study.name]),
        {"action": "hits-per-participant", "hits_per_participant": str(need)},
        follow=True,
    ).content.decode()
    assert f"Each participant may now do {need} HITs" in page and 'id="qc-unreachable"' not in page
    answer = staff_client.post(
        reverse("api-crowd-study-action", args=[study.name, "hits-per-participant"]),
        {"hits_per_participant": 1},
        content_type="application/json",
    )
    assert answer.status_code == 200 and answer.json()["hits_per_participant"] == 1 and answer.json()["qc_warning"]
    err = StringIO()
    call_command(
        "crowd_study", "hits", "--name", study.name, "--hits-per-participant", str(need), stdout=StringIO(), stderr=err
    )
    assert Study.objects.get(pk=study.pk).hits_per_participant == need and "Quality control" not in err.getvalue()
    refused = staff_client.post(
        reverse("api-crowd-study-action", args=[study.name, "hits-per-participant"]),
        {"hits_per_participant": 0},
        content_type="application/json",
    )
    assert refused.status_code == 400 and Study.objects.get(pk=study.pk).hits_per_participant == need
