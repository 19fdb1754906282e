"""The Direct Assessment pages: campaign list and creation, the campaign page (progress, results matching the
command output, charts, QC, links, downloads), the crowd entry link and the rating page."""

import io
import json
import re
import uuid

import pytest
from django.core.management import call_command

from annotation_site.corpus.models import System
from annotation_site.jobs.models import Job
from assessment import services, simulation, workers
from assessment.models import HIT, Assignment, Campaign, Worker

from .conftest import make_dataset, small_campaign

QUALITY = {"human": 85, "Alpha": 70, "Beta": 55, "Gamma": 35}


@pytest.fixture
def rated_campaign(db):
    campaign = small_campaign(make_dataset("pages", n_videos=24), "pages", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 10, "constant": 3}, QUALITY, seed=2, hits_per_worker=3)
    return campaign


def test_pages_are_for_staff(client, user_client, rated_campaign):
    for url in (
        "/da/",
        "/da/campaigns/new/",
        "/da/campaigns/pages/",
        "/da/campaigns/pages/report.json",
        "/da/campaigns/pages/judgments.csv",
        "/da/replication/",
    ):
        assert client.get(url).status_code == 302, url  # to the login page
        assert user_client.get(url).status_code == 302, url  # not staff


@pytest.fixture
def user_client(annotator):
    """A logged-in account without staff rights (rates DA work with its own account)."""
    return annotator.client


def test_campaign_list(staff_client, rated_campaign):
    page = staff_client.get("/da/").content.decode()
    assert 'href="/da/campaigns/pages/"' in page and "pages" in page


def test_create_a_campaign_through_the_form(staff_client, db):
    dataset = make_dataset("form-ds", n_videos=15, references="gt_x")
    page = staff_client.get("/da/campaigns/new/").content.decode()
    assert 'option value="form-ds"' in page
    page = staff_client.get("/da/campaigns/new/?dataset=form-ds").content.decode()
    assert 'value="Alpha"' in page and 'value="system:human"' in page and 'value="references:gt_x"' in page
    response = staff_client.post(
        "/da/campaigns/new/",
        {
            "dataset": "form-ds",
            "name": "from-form",
            "systems": ["Alpha", "Gamma"],
            "human": "references:gt_x",
            "hit_size": 20,
            "pairs_per_hit": 3,
            "repeats_per_hit": 2,
            "min_control_distance": 5,
            "workers_per_hit": 2,
            "seed": 123,
            "qc_test": "paired_t",
            "qc_threshold": 0.05,
            "qc_min_pairs": 3,
        },
    )
    assert response.status_code == 302 and response["Location"] == "/da/campaigns/from-form/"
    campaign = Campaign.objects.get(name="from-form")
    assert campaign.human_system.name == "gt_x" and campaign.human_system.is_human
    assert sorted(campaign.systems.values_list("name", flat=True)) == ["Alpha", "Gamma"]
    assert (campaign.seed, campaign.qc_test, campaign.workers_per_hit) == (123, "paired_t", 2)
    # 30 captions of Alpha and Gamma / 12 system slots (gt_x's captions are the hidden originals)
    assert HIT.objects.filter(campaign=campaign).count() == 3
    assert System.objects.filter(dataset=dataset, is_human=True).count() == 2  # "human" and "gt_x"


def test_form_errors_are_shown_and_nothing_is_created(staff_client, db):
    make_dataset("form-bad", n_videos=10)
    response = staff_client.post(
        "/da/campaigns/new/",
        {
            "dataset": "form-bad",
            "name": "too-big",
            "systems": ["Alpha"],
            "human": "system:human",
            "hit_size": 20,
            "pairs_per_hit": 8,
            "repeats_per_hit": 4,
            "workers_per_hit": 1,
            "qc_test": "wilcoxon",
            "qc_threshold": 0.05,
            "qc_min_pairs": 3,
        },
    )
    assert response.status_code == 200
    assert "system slots" in response.content.decode()
    assert not Campaign.objects.exists()


def test_campaign_page_matches_the_report_command(staff_client, rated_campaign):
    page = staff_client.get("/da/campaigns/pages/").content.decode()
    out = io.StringIO()
    call_command("da_report", campaign="pages", format="json", stdout=out)
    report = json.loads(out.getvalue())
    table = page[page.index('id="system-scores"') : page.index("</table>", page.index('id="system-scores"'))]
    rows = re.findall(
        r'<th scope="row" class="break">([^<]+?)(?: <span class="badge">human</span>)?</th>\s*'
        r'<td class="num">([\d.]+)</td><td class="num">([-\d.]+)</td><td class="num">(\d+)</td>',
        table,
    )
    assert [r[0] for r in rows] == [s["system"] for s in report["systems"]]
    for (_name, raw, z, n), system in zip(rows, report["systems"]):
        assert float(raw) == pytest.approx(system["raw"], abs=0.05)
        assert float(z) == pytest.approx(system["z"], abs=0.0005)
        assert int(n) == system["n"]
    passed = sum(w["status"] == "passed" for w in report["workers"])
    decided = sum(w["status"] in ("passed", "failed") for w in report["workers"])
    assert f"({passed} of {decided} with a verdict)" in page
    for worker in report["workers"]:  # every worker's QC status is on the page
        assert re.search(
            rf'<th scope="row" class="break">{re.escape(worker["worker_id"])}</th>.*?'
            rf'data-status="{worker["status"]}"',
            page,
            re.S,
        )
    assert '<figure class="chart da-chart" id="scores-chart"><svg' in page
    assert '<figure class="chart da-chart" id="win-matrix"><svg' in page
    for a, b, _ in report["wins"]:
        assert f"<strong>{a}</strong> &gt; {b}" in page
    assert 'id="worker-qc"' in page and "sim-000000" in page
    assert "/da/join/" in page and "?worker_id=WORKER_ID" in page


def test_progress_counts(staff_client, campaign):
    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    assert "No judgments yet." in page
    progress = services.progress(campaign)
    assert progress["hits"] == HIT.objects.filter(campaign=campaign).count() and progress["judgments"] == 0


def test_a_hit_is_complete_once_all_its_workers_are_done(staff_client, campaign):
    """ "HITs done 3 of 3" stood beside "Assignments completed 4 of 9" (3 workers per HIT): a HIT counted as done
    after one worker (a QA probe, 2026-11-28). Complete means done by all its workers per HIT."""
    Campaign.objects.filter(pk=campaign.pk).update(workers_per_hit=2)
    campaign.refresh_from_db()
    assignment = services.assign(campaign, workers.worker_by_external_id("first"))
    items = assignment.hit.items.order_by("position").values_list("pk", flat=True)
    for item in items:
        services.submit(assignment, item_id=item, score=50, client_uuid=uuid.uuid4(), played=True)
    n_hits = HIT.objects.filter(campaign=campaign).count()
    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    assert f'<dt>HITs complete</dt><dd>0 <span class="muted">of {n_hits}; 1 done by one worker or more' in page
    second = Assignment.objects.create(worker=workers.worker_by_external_id("second"), hit=assignment.hit)
    for item in items:
        services.submit(second, item_id=item, score=60, client_uuid=uuid.uuid4(), played=True)
    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    assert f'<dt>HITs complete</dt><dd>1 <span class="muted">of {n_hits}; 1 done by one worker or more' in page


def test_campaign_page_states_the_layout_once(staff_client, campaign):
    """The page states the layout in full once, then what it asks of a worker (it printed "Layout:" twice: its
    own sentence and the plan summary ``da_plan`` prints)."""
    assert campaign.source == Campaign.Source.PLANNED
    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    assert page.count("Layout:") == 1
    assert re.search(r'id="plan-summary">A worker needs \d+ HITs? \(of \d+\) to reach the \d+ pairs', page)


def test_untrusted_names_are_escaped_in_tables_and_charts(staff_client, db):
    dataset = make_dataset("escape", n_videos=24, systems=("<script>alert(1)</script>", "$x$ & co", "Plain"))
    campaign = small_campaign(dataset, "escape", qc_min_pairs=6)
    simulation.simulate_campaign(
        campaign,
        {"diligent": 8},
        {"human": 80, "<script>alert(1)</script>": 60, "$x$ & co": 40, "Plain": 20},
        hits_per_worker=3,
    )
    page = staff_client.get("/da/campaigns/escape/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "$x$ &amp; co" in page


def test_downloads(staff_client, rated_campaign):
    report = staff_client.get("/da/campaigns/pages/report.json")
    assert report["Content-Disposition"] == 'attachment; filename="pages-report.json"'
    out = io.StringIO()
    call_command("da_report", campaign="pages", format="json", stdout=out)
    assert json.loads(report.content) == json.loads(out.getvalue())
    captions = staff_client.get("/da/campaigns/pages/captions.csv").content.decode().splitlines()
    assert captions[0] == "video_id,system,raw,z,n,is_human" and len(captions) > 50


def test_assign_links_and_qc_recompute(staff_client, rated_campaign, django_capture_on_commit_callbacks):
    response = staff_client.post("/da/campaigns/pages/assign/", {"workers": "late"})
    page = staff_client.get(response["Location"]).content.decode()
    assert "late: no HIT left for this worker." in page  # every HIT has its one worker already
    Campaign.objects.filter(pk=rated_campaign.pk).update(workers_per_hit=10)
    response = staff_client.post("/da/campaigns/pages/assign/", {"workers": "crowd-a\ncrowd-b, crowd-c"})
    assert response.status_code == 302
    page = staff_client.get(response["Location"]).content.decode()
    links = re.findall(r'href="(http://testserver/da/a/[^"]+/)"', page)
    assert len(links) == 3
    assert Assignment.objects.filter(worker__external_id__in=["crowd-a", "crowd-b", "crowd-c"]).count() == 3
    assert staff_client.get(links[0].replace("http://testserver", "")).status_code == 200
    with django_capture_on_commit_callbacks() as callbacks:  # the task is sent when the transaction commits
        response = staff_client.post("/da/campaigns/pages/qc/")
    assert response.status_code == 302 and len(callbacks) == 1  # (run by Celery: see test_tasks.py)
    page = staff_client.get("/da/campaigns/pages/").content.decode()
    job = Job.objects.get(kind="da-qc")
    assert f'data-job-url="/api/jobs/{job.pk}/" data-finished="false"' in page  # polled live by job-progress.js


@pytest.mark.parametrize("workers", ["", " , ,\n ,"])
def test_create_links_without_a_worker_id_says_so(staff_client, rated_campaign, workers):
    """An empty list (or only separators) led back to the page with no word (a QA probe, 2026-11-28)."""
    response = staff_client.post("/da/campaigns/pages/assign/", {"workers": workers})
    page = staff_client.get(response["Location"]).content.decode()
    assert "Give at least one worker id (one per line, or separated by commas)." in page


def _join_and_start(client, token, worker_id):
    """The campaign's entry link is a capped crowd entry link: the participant page, then Start takes a HIT."""
    page = client.get(f"/da/join/{token}/?worker_id={worker_id}", follow=True)
    found = re.search(r'action="(/crowd/w/[^/]+/start/)"', page.content.decode())
    return client.post(found.group(1)) if page.status_code == 200 and found else page


def test_crowd_entry_link(client, campaign):
    token = services.campaign_entry_token(campaign)
    response = _join_and_start(client, token, "PROLIFIC_123")  # Start answers the rating page (its address in it)
    assert response.status_code == 200 and b'id="da-state"' in response.content
    again = _join_and_start(client, token, "PROLIFIC_123")

    def assignment(page):  # signed links carry a timestamp: compare the assignments they name
        address = re.search(r'data-address="(/da/a/[^"]+/)"', page.content.decode()).group(1)
        return address, services.assignment_from_token(address.split("/")[-2]).pk

    assert assignment(again)[1] == assignment(response)[1]  # the same open assignment
    page = client.get(assignment(response)[0])
    assert page.status_code == 200 and b'id="da-state"' in page.content
    worker = Worker.objects.get()
    assert worker.external_id.endswith(":PROLIFIC_123") and worker.external_id.startswith("link:")
    assert client.get(f"/da/join/{token}/", follow=True).status_code == 400  # no worker id: a clear page
    assert client.get(f"/da/join/{token}x/?worker_id=a").status_code == 404


def test_a_broken_link_says_what_happened_and_what_to_do(client, campaign):
    """A damaged or unknown signed link (rating page, entry link) answers 404 with the shared link-problem page: what
    happened and what to do next, and no link to a page that needs an account (it linked to the staff's datasets)."""
    entry = services.campaign_entry_token(campaign)
    rating = services.assignment_token(services.assign(campaign, workers.worker_by_external_id("w-broken")))
    for url in (f"/da/a/{rating[:-3]}/", "/da/a/nonsense/", f"/da/join/{entry}x/?worker_id=a", "/da/join/x/"):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 404, url
        assert "This link does not work" in page and "This link is damaged or no longer valid." in page, url
        assert "What to do next:" in page and "copy the whole link again" in page, url
        assert re.findall(r'<a\b[^>]*href="([^"]*)"', page) == ["#main"], url  # the skip link only
        assert "Log in" not in page, url


def test_every_hit_is_handed_out_workers_per_hit_times(client, campaign):
    token = services.campaign_entry_token(campaign)
    n_hits = HIT.objects.filter(campaign=campaign).count()
    places = n_hits * campaign.workers_per_hit
    for k in range(places + 1):
        response = _join_and_start(client, token, f"w{k}")
        if k < places:  # Start answers the rating page
            assert response.status_code == 200 and b'id="da-state"' in response.content
    assert response.status_code == 409 and "This study is full" in response.content.decode()
    assert sorted(Assignment.objects.values_list("hit__number", flat=True)) == sorted(
        list(range(1, n_hits + 1)) * campaign.workers_per_hit
    )


def test_own_workers_rate_at_the_campaign_address(user_client, campaign):
    """Opening the page takes no HIT slot (issue #11: any account, staff included, used to take one by looking);
    Start (a POST) does, and the page then shows the HIT, again on every visit, without taking another."""
    url = f"/da/campaigns/{campaign.name}/rate/"
    for _ in range(3):
        start = user_client.get(url)
        assert start.status_code == 200 and b"<button" in start.content and b"Start" in start.content
    assert not Assignment.objects.exists()
    assert user_client.post(url).status_code == 302
    assert Assignment.objects.count() == 1
    page = user_client.get(url).content.decode()
    user_client.get(url)
    assert Assignment.objects.count() == 1
    assert "data-da-rating" in page and "strongly disagree" in page and "strongly agree" in page
    assert "Item 1 of 20" in page and 'type="range"' in page
    assert Worker.objects.get(external_id="account:annotator").user.username == "annotator"


def test_rating_page_puts_the_caption_in_json_not_html(client, db):
    dataset = make_dataset("xss", n_videos=12)
    from annotation_site.corpus.models import Sentence

    Sentence.objects.filter(caption__system__name="Alpha").update(
        text="<img src=x onerror=alert(1)> a b c", tokens=["<img", "src=x", "onerror=alert(1)>", "a"]
    )
    campaign = small_campaign(dataset, "xss")
    hit = next(h for h in HIT.objects.filter(campaign=campaign) if h.items.filter(text__contains="<img").exists())
    assignment = services.create_assignment(hit, workers.worker_by_external_id("x"))
    while "<img" not in services.next_item(assignment).text:
        item = services.next_item(assignment)
        services.submit(assignment, item_id=item.pk, score=1, client_uuid=__import__("uuid").uuid4())
    page = client.get(f"/da/a/{services.assignment_token(assignment)}/").content.decode()
    assert "<img src=x" not in page and "\\u003Cimg src=x" in page
    # a crowd worker without an account gets no way out to pages that need one ("Log in", the name linked to "/")
    header = page.split('<header class="site-header">', 1)[1].split("</header>", 1)[0]
    assert "href" not in header and "Log in" not in header
