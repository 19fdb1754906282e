"""Deleting something big stays within the database's limit of parameters per statement (annotation_site/deletion.py).

Django nulls the DA items whose ``donor_caption`` is a deleted caption (``SET_NULL``) in one UPDATE with one parameter
per deleted caption (django/db/models/deletion.py, ``Collector.delete``: ``reduce(or_, updates)``). SQLite refuses a
statement with more than ``SQLITE_LIMIT_VARIABLE_NUMBER`` parameters (250,000 in Debian's build), so deleting or
replacing a dataset of 250,000 captions failed with "too many SQL variables". These tests lower that SQLite limit to
999 on the test's connection (a real SQLite limit, and SQLite's default before 3.32, which Django's batches assume),
so a dataset of 1,200 captions meets the same refusal. They delete through the real entry points: the admin's delete
page and bulk action, ``import_dataset --replace`` and the import API. On PostgreSQL the limit is left as it is and
the tests check the same end state: every dependent row gone, the items of other campaigns that borrowed a deleted
caption's words nulled, and the other dataset untouched."""

import io
import sqlite3
from contextlib import contextmanager

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import OperationalError, connection, models
from django.db.models.deletion import get_candidate_relations_to_delete

from annotation_site.corpus.models import Caption, Dataset, Sentence, System, Video
from annotation_site.deletion import SET_NULL_IN_BATCHES
from assessment import services, simulation
from assessment.models import HIT, Assignment, Campaign, Item, ItemType, Judgment, QCResult, Worker
from tests.assessment.conftest import make_dataset, small_campaign
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db

LIMIT = 999  # parameters per statement while deleting (SQLite only)
VIDEOS = 300  # x 4 caption sets = 1,200 captions: more parameters than LIMIT
QUALITY = {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 40}
MINI = FIXTURES / "factvc_mini"


@contextmanager
def statement_limit():
    """On SQLite: at most LIMIT parameters per statement on this connection (SQLite's own limit, so a longer
    statement fails with "too many SQL variables" as the big dataset's did), restored afterwards."""
    if connection.vendor != "sqlite":
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    before = raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, LIMIT)
    try:
        yield
    finally:
        raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)


def test_the_limit_is_real():
    """The lowered limit refuses what a statement with more parameters asks (else the tests below prove nothing)."""
    if connection.vendor != "sqlite":
        return  # the limit is lowered on SQLite only (a skip would fail CI's strict PostgreSQL pass)
    with statement_limit(), pytest.raises(OperationalError, match="too many SQL variables"):
        list(Caption.objects.filter(pk__in=range(LIMIT + 1)))


def dataset_with_campaign(name, *, n_videos=VIDEOS, judged=True):
    """A dataset of ``n_videos`` x 4 captions with a planned DA campaign (system items, originals, degraded copies
    and repeats); ``judged``: rated by a simulated crowd, with QC results stored."""
    dataset = make_dataset(name, n_videos=n_videos)
    campaign = small_campaign(dataset, f"{name}-da")
    if judged:
        hits = min(4, campaign.hits.count())
        simulation.simulate_campaign(campaign, {"diligent": 3}, QUALITY, seed=1, prefix=name, hits_per_worker=hits)
        services.store_qc(campaign)
    return dataset, campaign


def rows_of(dataset):
    """What the dataset holds, by table (its corpus, its campaigns and their people's work)."""
    campaigns = Campaign.objects.filter(dataset=dataset)
    return {
        "videos": Video.objects.filter(dataset=dataset).count(),
        "systems": System.objects.filter(dataset=dataset).count(),
        "captions": Caption.objects.filter(video__dataset=dataset).count(),
        "sentences": Sentence.objects.filter(caption__video__dataset=dataset).count(),
        "campaigns": campaigns.count(),
        "hits": HIT.objects.filter(campaign__in=campaigns).count(),
        "items": Item.objects.filter(hit__campaign__in=campaigns).count(),
        "degraded items with a donor": Item.objects.filter(
            hit__campaign__in=campaigns, item_type=ItemType.DEGRADED, donor_caption__isnull=False
        ).count(),
        "repeats": Item.objects.filter(hit__campaign__in=campaigns, item_type=ItemType.REPEAT).count(),
        "assignments": Assignment.objects.filter(hit__campaign__in=campaigns).count(),
        "judgments": Judgment.objects.filter(item__hit__campaign__in=campaigns).count(),
        "qc results": QCResult.objects.filter(campaign__in=campaigns).count(),
    }


@pytest.fixture
def big_and_other():
    """The dataset to delete (1,200 captions, a judged campaign) and another one that must stay as it was, one of
    whose degraded items borrowed its words from a caption of the big dataset (the donor to be nulled)."""
    big, campaign = dataset_with_campaign("big")
    other, _ = dataset_with_campaign("other", n_videos=12)
    borrower = Item.objects.filter(hit__campaign__dataset=other, item_type=ItemType.DEGRADED).first()
    borrower.donor_caption = Caption.objects.filter(video__dataset=big).last()
    borrower.save(update_fields=["donor_caption"])
    held = rows_of(big)
    assert held["captions"] > LIMIT and held["items"] > LIMIT, held
    assert held["degraded items with a donor"] and held["repeats"] and held["judgments"] and held["qc results"]
    return big, other, borrower, rows_of(other)


def assert_gone_and_other_kept(big_pk, other, borrower, other_before):
    assert not Dataset.objects.filter(pk=big_pk).exists()
    assert Dataset.objects.count() == 1
    # nothing of the big dataset is left anywhere (its rows no longer reach a dataset, so count whole tables)
    assert Video.objects.count() == other_before["videos"]
    assert Caption.objects.count() == other_before["captions"]
    assert Sentence.objects.count() == other_before["sentences"]
    assert Campaign.objects.count() == HIT.objects.values("campaign").distinct().count() == 1
    assert Item.objects.count() == other_before["items"]
    assert Judgment.objects.count() == other_before["judgments"]
    assert Assignment.objects.count() == other_before["assignments"]
    assert QCResult.objects.count() == other_before["qc results"]
    borrower_now = Item.objects.get(pk=borrower.pk)
    assert borrower_now.donor_caption_id is None  # SET_NULL, as Django's cascade does
    assert (borrower_now.text, borrower_now.control_of_id) == (borrower.text, borrower.control_of_id)
    after = rows_of(other)
    other_before["degraded items with a donor"] -= 1  # the borrower's donor was the big dataset's
    assert after == other_before
    assert Worker.objects.filter(external_id__startswith="big-").exists()  # workers belong to no dataset


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("admin", "a@example.org", "pw-admin-12345"))
    return client


def test_the_admin_deletes_a_dataset_of_more_captions_than_a_statement_takes(admin_client, big_and_other):
    big, other, borrower, other_before = big_and_other
    url = f"/admin/corpus/dataset/{big.pk}/delete/?force_delete_judgments=1"
    with statement_limit():
        response = admin_client.post(url, {"post": "yes"})
    assert response.status_code == 302, response.content[:2000]
    assert_gone_and_other_kept(big.pk, other, borrower, other_before)


def test_the_admin_bulk_action_deletes_big_datasets_and_videos(admin_client):
    """The bulk actions (no judgments on these: the action refuses datasets and videos that have some)."""
    first, _ = dataset_with_campaign("first", judged=False)
    second, _ = dataset_with_campaign("second", judged=False)
    kept, _ = dataset_with_campaign("kept", n_videos=12, judged=False)
    kept_before = rows_of(kept)
    with statement_limit():
        response = admin_client.post(
            "/admin/corpus/video/",
            {
                "action": "delete_selected",
                "_selected_action": list(second.videos.values_list("pk", flat=True)),
                "post": "yes",
            },
        )
        assert response.status_code == 302
        response = admin_client.post(
            "/admin/corpus/dataset/",
            {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
        )
    assert response.status_code == 302
    assert list(Dataset.objects.values_list("name", flat=True)) == ["kept"]
    assert Caption.objects.count() == kept_before["captions"] and Item.objects.count() == kept_before["items"]
    assert rows_of(kept) == kept_before


def test_import_dataset_replace_deletes_a_big_dataset(big_and_other):
    big, other, borrower, other_before = big_and_other
    out = io.StringIO()
    with statement_limit():
        call_command(
            "import_dataset",
            "--format",
            "factvc",
            "--name",
            "big",
            "--replace",
            "--force-delete-judgments",
            str(MINI),
            stdout=out,
            stderr=io.StringIO(),
        )
    assert "Imported dataset 'big'" in out.getvalue()
    new = Dataset.objects.get(name="big")
    assert new.pk != big.pk
    new.delete()  # the imported mini dataset: what is left must be the other one alone
    assert_gone_and_other_kept(big.pk, other, borrower, other_before)


def test_the_import_api_replaces_a_big_dataset(staff_researcher, big_and_other):
    big, other, borrower, other_before = big_and_other
    with open(MINI / "factuality_annotation.json", "rb") as handle, statement_limit():
        response = staff_researcher.api.post(
            "/api/datasets/import/",
            {"file": handle, "format": "factvc", "name": "big", "replace": True, "force_delete_judgments": True},
            format="multipart",
        )
    assert response.status_code == 201, response.json()
    Dataset.objects.get(name="big").delete()
    assert_gone_and_other_kept(big.pk, other, borrower, other_before)


def test_the_admin_deletes_a_big_campaign_and_nothing_else(admin_client, big_and_other):
    """A campaign's own tree (HITs, items with their controls pointing at each other, assignments, judgments, QC
    results) was never nulled, only deleted in Django's batches: this stays so under the lowered limit."""
    big, other, borrower, other_before = big_and_other
    campaign = Campaign.objects.get(dataset=big)
    big_before = rows_of(big)
    with statement_limit():
        response = admin_client.post(
            f"/admin/assessment/campaign/{campaign.pk}/delete/?force_delete_judgments=1", {"post": "yes"}
        )
    assert response.status_code == 302
    left = rows_of(big)
    assert {k: left[k] for k in ("videos", "systems", "captions", "sentences")} == {
        k: big_before[k] for k in ("videos", "systems", "captions", "sentences")
    }
    assert all(left[k] == 0 for k in left if k not in ("videos", "systems", "captions", "sentences")), left
    assert Item.objects.get(pk=borrower.pk).donor_caption_id == borrower.donor_caption_id
    assert rows_of(other) == other_before


def test_every_set_on_delete_into_a_dataset_is_bounded():
    """Every relation that deleting a dataset nulls (or sets) uses SET_NULL_IN_BATCHES, not Django's lazy
    SET_NULL / SET_DEFAULT / SET(...), whose one UPDATE takes a parameter per deleted row."""
    reached, todo = set(), [Dataset]
    while todo:
        model = todo.pop()
        if model in reached:
            continue
        reached.add(model)
        for related in get_candidate_relations_to_delete(model._meta):
            if related.field.remote_field.on_delete is models.CASCADE:
                todo.append(related.related_model)
    assert {Caption, Item, Judgment} <= reached
    lazy = sorted(
        f"{related.related_model._meta.label}.{related.field.name}"
        for model in reached
        for related in get_candidate_relations_to_delete(model._meta)
        if getattr(related.field.remote_field.on_delete, "lazy_sub_objs", False)
    )
    assert lazy == [], f"use annotation_site.deletion.SET_NULL_IN_BATCHES for {', '.join(lazy)}"
    bounded = [
        f"{model._meta.label}.{field.name}"
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if getattr(getattr(field, "remote_field", None), "on_delete", None) is SET_NULL_IN_BATCHES
    ]
    assert sorted(bounded) == ["assessment.Item.donor_caption", "factuality.Project.label_set"]
