"""Importing DA judgments from the browser (/da/import/) and the API (/api/da/campaigns/NAME/judgments.csv):
the same import as ``da_import_judgments`` (checked whole first, one transaction, file / line / field in every
problem, nothing written otherwise), and the download an API client can take back."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from rest_framework.test import APIClient

from assessment import simulation, workers
from assessment.models import HIT, Assignment, Campaign, Judgment, QCResult

from .conftest import make_dataset, small_campaign
from .test_csv_import import HEADER, counts, valid_csv

pytestmark = pytest.mark.django_db


def upload(text, name="trecvid-run.csv"):
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


@pytest.fixture
def api(staff_user):
    client = APIClient()
    client.force_authenticate(staff_user)
    return client


def test_the_page_imports_a_file_and_goes_to_the_campaign(staff_client):
    page = staff_client.get("/da/import/?campaign=trecvid")
    assert page.status_code == 200
    assert page.context["form"]["campaign"].value() == "trecvid"  # prefilled from the campaign page's link
    assert HEADER.strip() in page.content.decode()  # the page says what the file must look like

    response = staff_client.post("/da/import/", {"campaign": "trecvid", "file": upload(valid_csv())}, follow=True)
    assert response.redirect_chain[-1][0] == "/da/campaigns/trecvid/"
    message = [str(m) for m in response.context["messages"]]
    assert message == [
        "Imported 48 judgments into campaign 'trecvid': 1 HIT, 24 new items, 2 workers; "
        "1 of 2 workers pass quality control."
    ]
    assert Judgment.objects.filter(assignment__hit__campaign__name="trecvid").count() == 48
    assert QCResult.objects.filter(campaign__name="trecvid").count() == 2


def test_the_page_lists_every_problem_with_file_line_and_field_and_writes_nothing(staff_client):
    before = counts()
    bad = valid_csv().replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,system,,forty")
    bad = bad.replace("w2,h1,s3,ModelA,vid2,system,,65", "w2,h1,s3,ModelA,vid2,sytsem,,65")
    response = staff_client.post("/da/import/", {"campaign": "trecvid", "file": upload(bad)})
    assert response.status_code == 400
    problems = response.context["problems"]
    assert [(p.file, p.line, p.where) for p in problems] == [
        ("trecvid-run.csv", 3, "field 'score'"),
        ("trecvid-run.csv", 28, "field 'item_type'"),
    ]
    text = response.content.decode()
    assert "2 problems found in trecvid-run.csv: nothing was imported" in text
    assert "field &#x27;score&#x27;" in text
    assert response.context["form"]["campaign"].value() == "trecvid"  # ready for the corrected file
    assert f'<pre class="command">{HEADER.strip()}</pre>' in text  # with the header line the file needs
    assert counts() == before


def test_the_page_refuses_reserved_ids_unless_the_file_is_the_platforms_own_download(staff_client, django_user_model):
    campaign = small_campaign(make_dataset("origin", n_videos=18), "origin", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 2}, {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 30}, seed=3)
    alice = workers.worker_for_user(django_user_model.objects.create_user("alice"))  # what the rate page does
    first = Assignment.objects.filter(hit__campaign=campaign).order_by("pk").first()
    Assignment.objects.filter(worker=first.worker).update(worker=alice)  # one simulated worker was alice
    download = b"".join(staff_client.get(f"/da/campaigns/{campaign.name}/judgments.csv").streaming_content).decode()
    assert "account:alice" in download

    refused = staff_client.post("/da/import/", {"campaign": "restored", "file": upload(download)})
    assert refused.status_code == 400
    assert any("account:alice" in p.message and p.where == "field 'worker_id'" for p in refused.context["problems"])
    assert refused.context["form"]["own_download"].value() is False
    assert not Campaign.objects.filter(name="restored").exists()

    broken = download.splitlines(True)
    broken[1] = broken[1].rsplit(",", 1)[0] + ",101\n"  # one score out of range: the page comes back
    again = staff_client.post(
        "/da/import/", {"campaign": "restored", "file": upload("".join(broken)), "own_download": "on"}
    )
    assert again.status_code == 400 and [p.line for p in again.context["problems"]] == [2]
    assert again.context["form"]["own_download"].value() is True  # still ticked for the corrected file
    restored = staff_client.post(
        "/da/import/", {"campaign": "restored", "file": upload(download), "own_download": "on"}
    )
    assert restored.status_code == 302
    kept = Judgment.objects.filter(assignment__hit__campaign__name="restored", assignment__worker=alice)
    assert kept.count() == Judgment.objects.filter(assignment__hit__campaign=campaign, assignment__worker=alice).count()
    assert kept.count() > 0


def test_the_page_asks_again_for_a_missing_or_invalid_field(staff_client):
    before = counts()
    response = staff_client.post("/da/import/", {"campaign": "no spaces allowed", "file": upload(valid_csv())})
    assert response.status_code == 400
    assert response.context["form"].errors.keys() == {"campaign"}
    response = staff_client.post("/da/import/", {"campaign": "trecvid"})
    assert response.status_code == 400 and response.context["form"].errors.keys() == {"file"}
    assert counts() == before


@override_settings(CAPTIONEVAL_MAX_UPLOAD_BYTES=100)
def test_a_file_over_the_upload_limit_is_refused_on_the_form(staff_client):
    before = counts()
    response = staff_client.post("/da/import/", {"campaign": "trecvid", "file": upload(valid_csv())})
    assert response.status_code == 400
    [error] = response.context["form"].errors["file"]
    assert "trecvid-run.csv" in error and "nothing was imported" in error
    assert counts() == before


def test_a_file_too_large_to_import_within_a_request_is_sent_to_the_command(staff_client, api, settings):
    """The page and the API import within the request (checks, writes, QC); a file over
    CAPTIONEVAL_MAX_DA_UPLOAD_BYTES would outlast the web server's timeout, so it is refused with the command that
    imports it, before anything is read."""
    settings.CAPTIONEVAL_MAX_DA_UPLOAD_BYTES = len(valid_csv()) - 1
    before = counts()
    page = staff_client.post("/da/import/", {"campaign": "trecvid", "file": upload(valid_csv())})
    [error] = page.context["form"].errors["file"]
    assert "CAPTIONEVAL_MAX_DA_UPLOAD_BYTES" in error
    assert "python manage.py da_import_judgments --campaign trecvid FILE" in error
    answer = api.post("/api/da/campaigns/trecvid/judgments.csv", {"file": upload(valid_csv())}, format="multipart")
    assert answer.status_code == 400 and "da_import_judgments" in answer.json()["detail"]
    assert counts() == before
    settings.CAPTIONEVAL_MAX_DA_UPLOAD_BYTES = len(valid_csv())
    assert (
        api.post(
            "/api/da/campaigns/trecvid/judgments.csv", {"file": upload(valid_csv())}, format="multipart"
        ).status_code
        == 201
    )


def test_the_campaign_pages_link_to_the_import(staff_client):
    listing = staff_client.get("/da/").content.decode()
    assert 'href="/da/import/"' in listing
    campaign = small_campaign(make_dataset("linked", n_videos=15), "linked")
    detail = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    assert 'href="/da/import/?campaign=linked"' in detail


def test_only_staff_import(client, annotator, outsider):
    before = counts()
    for persona in (annotator, outsider):
        page = persona.client.post("/da/import/", {"campaign": "trecvid", "file": upload(valid_csv())})
        assert page.status_code == 302 and "/login/" in page["Location"]
        api = persona.api.post(
            "/api/da/campaigns/trecvid/judgments.csv", {"file": upload(valid_csv())}, format="multipart"
        )
        assert api.status_code == 403
    assert client.get("/api/da/campaigns/trecvid/judgments.csv").status_code in (401, 403)
    assert counts() == before


def test_the_api_imports_and_answers_what_it_did(api):
    response = api.post("/api/da/campaigns/trecvid/judgments.csv", {"file": upload(valid_csv())}, format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "campaign": "trecvid",
        "judgments": 48,
        "items": 24,
        "hits": 1,
        "workers": 2,
        "passed": 1,
        "qc_workers": 2,
    }
    again = api.post("/api/da/campaigns/trecvid/judgments.csv", {"file": upload(valid_csv())}, format="multipart")
    assert again.status_code == 400  # every judgment is stored already: nothing twice
    assert Judgment.objects.filter(assignment__hit__campaign__name="trecvid").count() == 48


def test_the_api_answers_problems_in_the_one_error_shape_and_writes_nothing(api):
    before = counts()
    bad = valid_csv().replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,system,,140")
    response = api.post("/api/da/campaigns/trecvid/judgments.csv", {"file": upload(bad)}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body == {
        "error": "invalid",
        "detail": "invalid file, nothing was imported",
        "problems": ["trecvid-run.csv, line 3, field 'score': score must be an integer from 0 to 100, not '140'"],
    }
    missing = api.post("/api/da/campaigns/trecvid/judgments.csv", {}, format="multipart")
    assert missing.status_code == 400 and "file" in str(missing.json())
    assert counts() == before


def test_the_api_download_imports_back_to_the_same_judgments(api):
    campaign = small_campaign(make_dataset("origin", n_videos=18), "origin", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 3}, {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 30}, seed=2)
    response = api.get(f"/api/da/campaigns/{campaign.name}/judgments.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")  # (it was 406)
    assert response["Content-Disposition"] == 'attachment; filename="origin-judgments.csv"'
    text = b"".join(response.streaming_content).decode()
    assert text.startswith(HEADER)
    copied = api.post("/api/da/campaigns/copy/judgments.csv", {"file": upload(text, "origin.csv")}, format="multipart")
    assert copied.status_code == 201

    def judged(name):
        return sorted(
            Judgment.objects.filter(assignment__hit__campaign__name=name).values_list(
                "assignment__worker__external_id",
                "item__caption__system__name",
                "item__caption__video__external_id",
                "score",
            )
        )

    assert judged("copy") == judged("origin") and judged("origin")
    assert api.get("/api/da/campaigns/nothing-here/judgments.csv").status_code == 404


def overtaken_by(monkeypatch, other_text):
    """Make the next import be overtaken: another import of ``other_text`` into the same campaign writes between
    its checks and its writes (checking holds no lock), as a double click or a second client would."""
    from assessment import csv_import

    real_validate = csv_import.validate
    overtaken = []

    def validate_then_be_overtaken(stream, filename, campaign_name, **kwargs):
        checked = real_validate(stream, filename, campaign_name, **kwargs)
        if not overtaken:
            overtaken.append(True)
            monkeypatch.setattr(csv_import, "validate", real_validate)
            csv_import.import_judgments(campaign_name, io.StringIO(other_text), "other.csv")
        return checked

    monkeypatch.setattr(csv_import, "validate", validate_then_be_overtaken)
    return overtaken


@pytest.mark.parametrize("existing", [False, True], ids=["new campaign", "existing campaign"])
def test_the_same_file_imported_twice_at_once_is_stored_once_and_the_later_refused(staff_client, monkeypatch, existing):
    """A double click on Import: both requests check the file before either writes; the later one's writes clash
    with the earlier one's (a 500 before). It is checked again against what is stored now and refused with its
    problems, line by line, writing nothing; the earlier import stands, once."""
    from assessment import csv_import

    header, *body = valid_csv().splitlines(True)
    if existing:  # w1's first items are stored: the campaign and its HIT h1 exist
        csv_import.import_judgments("trecvid", io.StringIO(header + "".join(body[:4])), "seed.csv")
        body = body[4:]
    text = header + "".join(body)
    overtaken = overtaken_by(monkeypatch, text)
    response = staff_client.post("/da/import/", {"campaign": "trecvid", "file": upload(text)})
    assert overtaken and response.status_code == 400
    problems = response.context["problems"]
    assert len(problems) == len(body) and all("stored already" in p.message for p in problems)
    assert Judgment.objects.filter(assignment__hit__campaign__name="trecvid").count() == 48  # the other's, once


def test_two_files_adding_to_one_new_hit_at_once_are_both_imported(api, monkeypatch):
    """Two clients add different workers' judgments of the same new HIT: the later one's HIT clashes with the one
    the earlier one created; checked again, its rows match that HIT, and both are imported."""
    from assessment import csv_import

    header, *body = valid_csv().splitlines(True)
    csv_import.import_judgments("trecvid", io.StringIO(header + "".join(body[:4])), "seed.csv")  # HIT h1
    w1 = [line.replace(",h1,", ",h2,") for line in body if line.startswith("w1,")]
    mine = header + "".join(line.replace("w1,", "w3,", 1) for line in w1)
    theirs = header + "".join(line.replace("w1,", "w4,", 1) for line in w1)
    overtaken = overtaken_by(monkeypatch, theirs)
    response = api.post("/api/da/campaigns/trecvid/judgments.csv", {"file": upload(mine)}, format="multipart")
    assert overtaken and response.status_code == 201, response.json()
    h2 = Judgment.objects.filter(assignment__hit__campaign__name="trecvid", assignment__hit__external_id="h2")
    assert sorted(set(h2.values_list("assignment__worker__external_id", flat=True))) == ["w3", "w4"]
    assert h2.count() == 2 * len(w1) and HIT.objects.filter(campaign__name="trecvid", external_id="h2").count() == 1
