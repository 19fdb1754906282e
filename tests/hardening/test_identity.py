"""Identities never collide (issue #11, "Identity"): crowd ids from links, account-derived identities and
platform participant ids live apart; an account's worker is always bound to the account; ids are NFKC-normalised
and invisible or control characters are refused."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from annotation_site import identities
from assessment import services, workers
from assessment.models import Worker

pytestmark = pytest.mark.django_db


def test_an_outsider_cannot_pre_create_an_accounts_identity(client):
    """The probe: an id typed into a link as 'account:alice' became the Worker that alice's account later
    adopted, so the outsider's signed links acted as alice."""
    with pytest.raises(ValueError, match="reserves for site accounts"):
        workers.worker_by_external_id("account:alice")
    with pytest.raises(ValueError, match="reserves for site accounts"):
        workers.worker_by_external_id("\uff41ccount:alice")  # fullwidth 'a': NFKC makes it account:alice
    alice = get_user_model().objects.create_user("alice", password="pw-alice-12345")
    worker = workers.worker_for_user(alice)
    assert (worker.external_id, worker.kind, worker.user_id) == ("account:alice", "account", alice.pk)
    assert workers.worker_for_user(alice) == worker


def test_a_legacy_look_alike_is_never_adopted():
    """A row named like an account but not bound to it (made before this fix) is left alone."""
    squatter = Worker.objects.create(external_id="account:bob", kind=Worker.Kind.EXTERNAL, source="link")
    bob = get_user_model().objects.create_user("bob", password="pw-bob-12345")
    worker = workers.worker_for_user(bob)
    assert worker != squatter and worker.user_id == bob.pk and worker.external_id == f"account:bob#{bob.pk}"
    squatter.refresh_from_db()
    assert squatter.user_id is None


def test_only_own_workers_have_users():
    carol = get_user_model().objects.create_user("carol", password="pw-carol-12345")
    with pytest.raises(IntegrityError), transaction.atomic():
        Worker.objects.create(external_id="x", kind=Worker.Kind.EXTERNAL, user=carol)


def test_links_cannot_reach_participants_and_participants_cannot_reach_externals():
    participant = workers.participant_worker("prolific:5f3c")
    with pytest.raises(ValueError, match="reserves for crowd participants"):
        workers.worker_by_external_id("prolific:5f3c")
    workers.worker_by_external_id("w-17")
    with pytest.raises(ValueError, match="belongs to a external id"):
        workers.participant_worker("w-17")
    assert participant.kind == "participant"


@pytest.mark.parametrize(
    "raw, expected", [("\uff41lice", "alice"), (" bob ", "bob"), ("\ufb01sh", "fish"), ("A\u0301", "\u00c1")]
)
def test_ids_are_normalised(raw, expected):
    assert identities.normalise(raw) == expected
    assert workers.worker_by_external_id(raw).external_id == expected


@pytest.mark.parametrize(
    "raw",
    [
        "al\u200bice",
        "\u200dalice",
        "alice\u2066",
        "\ufeffalice",
        "ali\x00ce",
        "ali\tce",
        "ali\u2028ce",
        "\ue000alice",
        "",
    ],
)
def test_invisible_and_control_characters_are_refused(raw):
    with pytest.raises(identities.IdentityError):
        identities.normalise(raw)
    with pytest.raises(ValueError):
        workers.worker_by_external_id(raw)
    assert not Worker.objects.exists()


def test_one_person_is_one_participant_on_an_entry_link():
    from annotation_site.crowd.models import Study
    from annotation_site.crowd.providers.base import AdmissionRefused
    from annotation_site.crowd.providers.link import LinkProvider

    provider = LinkProvider(Study(name="s", provider="link", id_parameter="pid"))
    assert provider.admit({"pid": "\uff30\uff10\uff11"}).platform_id == "P01"  # fullwidth P01
    assert provider.admit({"pid": "P01"}).platform_id == "P01"
    with pytest.raises(AdmissionRefused, match="invisible or control character"):
        provider.admit({"pid": "P01\u200b"})


def test_da_import_refuses_account_ids_and_invisible_characters(tmp_path):
    from annotation_site.interchange.bundle import ProblemList
    from assessment.csv_import import read_rows

    text = (
        "worker_id,hit_id,item_id,system,video_id,item_type,control_of,score\n"
        "account:alice,h,i1,S,v,system,,50\nw\u200b1,h,i2,S,v,system,,50\n\uff57\uff11,h,i3,S,v,system,,50\n"
    )
    problems = ProblemList()
    rows = read_rows(io.StringIO(text), "j.csv", problems)
    assert [(r.worker, r.item) for r in rows] == [("w1", "i3")]
    messages = [str(p) for p in problems]
    assert messages[0].startswith("j.csv, line 2, field 'worker_id'") and "reserves for site accounts" in messages[0]
    assert messages[1].startswith("j.csv, line 3, field 'worker_id'") and "ZERO WIDTH SPACE" in messages[1]


def test_unused_slots_come_back():
    """Assignments expire (issue #11, "Slots"): an account's HIT untouched for the idle time is released and its
    place goes to the next person; one in use, a finished one and a crowd participant's are kept."""
    from datetime import timedelta

    from django.utils import timezone

    from assessment.models import Assignment, Item, Judgment
    from tests.assessment.conftest import make_dataset, small_campaign

    campaign = small_campaign(make_dataset("idle", n_videos=12), "idle")
    now = timezone.now()
    idle = services.assign(campaign, workers.worker_for_user(get_user_model().objects.create_user("idler")))
    busy = services.assign(campaign, workers.worker_by_external_id("busy"))
    crowd = services.assign(campaign, workers.participant_worker("link:s:P01"))
    Assignment.objects.update(created_at=now - timedelta(hours=5))
    first = Item.objects.filter(hit=busy.hit).order_by("position").first()
    Judgment.objects.create(assignment=busy, item=first, score=50, finished_at=now - timedelta(minutes=5))
    assert services.release_idle_assignments(idle_minutes=120, now=now) == 1
    assert services.release_idle_assignments(idle_minutes=120, now=now) == 0  # safe to run twice
    released = dict(Assignment.objects.values_list("pk", "released_at"))
    assert released[idle.pk] is not None and released[busy.pk] is None and released[crowd.pk] is None
    assert Assignment.objects.get(pk=idle.pk).release_reason == "idle for 120 minutes"


def test_da_completion_codes_are_bound_to_assignment_and_worker():
    from assessment.models import Assignment
    from tests.assessment.conftest import make_dataset, small_campaign

    campaign = small_campaign(make_dataset("codes", n_videos=12), "codes")
    assignment = services.assign(campaign, workers.worker_by_external_id("w-a"))
    code = services.completion_code(assignment)
    other = Assignment(pk=assignment.pk, worker=workers.worker_by_external_id("w-b"), hit=assignment.hit)
    assert services.completion_code(other) != code  # same assignment number, another worker
    assert services.completion_code(Assignment.objects.get(pk=assignment.pk)) == code
