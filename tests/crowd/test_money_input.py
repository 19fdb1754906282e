"""Amounts of money and counts typed into the crowd pages, sent to the API or given to the commands are read
strictly (issue #11, "scores such as 1e2 and non-ASCII digits are accepted", here for money): ASCII digits, at
most two decimals, never negative, NaN or infinite, within the money columns. A refused amount records nothing
and is answered with a message that says what is expected, never a server error."""

from decimal import Decimal

import pytest
from django.core.management import CommandError
from django.urls import reverse

from annotation_site.crowd.models import LedgerEntry, Study
from annotation_site.strict_numbers import amount, form_integer

from .test_commands_api import run

pytestmark = pytest.mark.django_db
REFUSED = ["NaN", "sNaN", "Infinity", "-inf", "1e2", "-0.50", "0.505", "1,50", "\u0661", "\uff11", "1000000", " ", "x"]


@pytest.mark.parametrize("text,expected", [("0", "0"), ("1.5", "1.50"), (" 0.40 ", "0.40"), ("999999.99", "999999.99")])
def test_amounts(text, expected):
    assert amount(text, what="Bonus") == Decimal(expected)


@pytest.mark.parametrize("text", REFUSED + [None, True, 1e300])
def test_refused_amounts(text):
    with pytest.raises(ValueError, match="Bonus must be an amount of money"):
        amount(text, what="Bonus")


@pytest.mark.parametrize("text", ["x", "1.5", "1e2", "\u0663", "0", "100000000000", ""])
def test_form_integers(text):
    with pytest.raises(ValueError, match="Days must be a whole number from 1 to 3650"):
        form_integer(text, low=1, high=3650, what="Days")
    assert form_integer(" 12 ", low=1, high=3650, what="Days") == 12


@pytest.mark.parametrize("bonus", ["NaN", "Infinity", "1e9", "-5", "\u0665"])
def test_payment_page_refuses_a_bad_bonus_and_records_nothing(client, staff_user, toy_campaign, bonus):
    client.force_login(staff_user)
    url = reverse("crowd-payments", args=["toy", "camp-7"])
    page = client.get(url, {"policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus})
    assert page.status_code == 200 and b"Bonus must be an amount of money" in page.content
    answer = client.post(
        url, {"policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus, "confirm": "yes"}, follow=True
    )
    assert answer.status_code == 200 and b"Bonus must be an amount of money" in answer.content
    assert b"nothing was recorded" in answer.content
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("bonus", ["NaN", "Infinity", "1e9", "\u0665"])
def test_payment_api_refuses_a_bad_bonus(client, staff_user, toy_campaign, bonus):
    client.force_login(staff_user)
    params = {"campaign": "camp-7", "policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus}
    answer = client.get(reverse("api-crowd-payments"), params)
    assert answer.status_code == 400 and "amount of money" in str(answer.json()["bonus_amount"])
    answer = client.post(reverse("api-crowd-payments"), params, content_type="application/json")
    assert answer.status_code == 400 and not LedgerEntry.objects.exists()


def test_payment_command_refuses_a_bad_bonus(toy_campaign):
    with pytest.raises(CommandError, match="--bonus-amount must be an amount of money"):
        run("crowd_payments", "--campaign", "camp-7", "--bonus-scope", "per-hit", "--bonus-amount", "1e2")
    assert not LedgerEntry.objects.exists()


def test_study_create_refuses_a_bad_reward(client, staff_user, toy_campaign):
    client.force_login(staff_user)
    answer = client.post(
        reverse("crowd-study-create"),
        {"protocol": "toy", "target": "camp-7", "name": "bad-reward", "provider": "link", "reward": "1e2"},
        follow=True,
    )
    assert answer.status_code == 200 and b"Reward must be an amount of money" in answer.content
    assert not Study.objects.filter(name="bad-reward").exists()
    answer = client.post(
        reverse("api-crowd-studies"),
        {"target": "camp-7", "name": "bad-reward", "provider": "link", "reward": "\u0661.50"},
        content_type="application/json",
    )
    assert answer.status_code == 400 and "amount of money" in str(answer.json()["reward"])
    with pytest.raises(CommandError, match="amount of money"):
        run("crowd_study", "create", "--target", "camp-7", "--provider", "link", "--name", "bad", "--reward", "NaN")
    assert not Study.objects.filter(name__startswith="bad").exists()


@pytest.mark.parametrize("field,value", [("days", "x"), ("days", "99999999999"), ("max_hits", "0"), ("days", "\u0663")])
def test_participant_links_refuse_bad_numbers(client, staff_user, toy_campaign, field, value):
    client.force_login(staff_user)
    data = {"ids": "p-one", "days": "7", "max_hits": "1", field: value}
    answer = client.post(reverse("crowd-study-links", args=["camp-7-panel"]), data, follow=True)
    assert answer.status_code == 200 and b"must be a whole number from 1 to" in answer.content
    from annotation_site.crowd.models import ParticipantLink

    assert not ParticipantLink.objects.exists()


def test_adding_places_refuses_other_digits(client, staff_user, toy_campaign):
    client.force_login(staff_user)
    before = Study.objects.get(name="camp-7-panel").places
    answer = client.post(
        reverse("crowd-study-action", args=["camp-7-panel"]), {"action": "add-places", "places": "\uff15"}, follow=True
    )
    assert b"Places must be a whole number from 1 to" in answer.content
    assert Study.objects.get(name="camp-7-panel").places == before


def test_an_unknown_bonus_scope_pays_no_bonus(client, staff_user, toy_campaign):
    """A bonus scope that is not one of the three (a typo in a link: per_hit) never pays: the service gives no
    bonus for it; the page says so, previews without a bonus and records nothing."""
    from annotation_site.crowd import adapters, payments

    adapter, target = adapters.resolve("toy", "camp-7")
    decisions = payments.preview(adapter, target, policy="approve-all", bonus_scope="per_hit", bonus_amount="1.00")
    assert decisions and all(d.bonus is None for d in decisions)
    client.force_login(staff_user)
    url = reverse("crowd-payments", args=["toy", "camp-7"])
    page = client.get(url, {"policy": "approve-all", "bonus_scope": "per_hit", "bonus_amount": "1.00"})
    assert page.status_code == 200 and b"Bonus scope must be one of" in page.content
    answer = client.post(
        url, {"policy": "approve-all", "bonus_scope": "per_hit", "bonus_amount": "1.00", "confirm": "yes"}, follow=True
    )
    assert b"nothing was recorded" in answer.content and not LedgerEntry.objects.exists()


# --- The largest bonus (CAPTIONEVAL_MAX_BONUS, 100.00 unless set) ----------------------------------------------
# The money columns take up to 999,999.99, and every entry point read a bonus that large as valid: a bonus typed as
# 50 for 0.50, or 0.50 with its digits doubled, was planned and sent. Each entry point where a bonus is entered now
# refuses one over the maximum, naming the field, through one check (payments.check_bonus).
TOO_LARGE = ["100.01", "150", "999999.99"]


@pytest.mark.parametrize("bonus", TOO_LARGE)
def test_the_payments_page_refuses_a_bonus_over_the_maximum(client, staff_user, toy_campaign, bonus):
    client.force_login(staff_user)
    url = reverse("crowd-payments", args=["toy", "camp-7"])
    page = client.get(url, {"policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus})
    assert b"Bonus must be at most 100.00 GBP per HIT" in page.content
    assert page.context["bonus_amount"] == Decimal("0.40")  # the preview uses the study's bonus instead
    answer = client.post(
        url,
        {"policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus, "confirm": "yes", "seen": "x"},
        follow=True,
    )
    assert b"Bonus must be at most 100.00 GBP per HIT" in answer.content and b"nothing was recorded" in answer.content
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("bonus", TOO_LARGE)
def test_the_payments_api_refuses_a_bonus_over_the_maximum(client, staff_user, toy_campaign, bonus):
    client.force_login(staff_user)
    params = {"campaign": "camp-7", "policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": bonus}
    for answer in (
        client.get(reverse("api-crowd-payments"), params),
        client.post(reverse("api-crowd-payments"), params, content_type="application/json"),
    ):
        assert answer.status_code == 400
        assert "bonus_amount must be at most 100.00 GBP per HIT" in str(answer.json()["bonus_amount"])
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("bonus", TOO_LARGE)
def test_crowd_payments_refuses_a_bonus_over_the_maximum(toy_campaign, bonus):
    for extra in (["--dry-run"], []):
        with pytest.raises(CommandError, match="--bonus-amount must be at most 100.00 GBP per HIT"):
            run("crowd_payments", "--campaign", "camp-7", "--bonus-scope", "per-hit", "--bonus-amount", bonus, *extra)
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("bonus", TOO_LARGE)
def test_a_study_is_not_made_with_a_bonus_over_the_maximum(client, staff_user, toy_campaign, bonus):
    client.force_login(staff_user)
    answer = client.post(
        reverse("api-crowd-studies"),
        {"target": "camp-7", "name": "big-bonus", "provider": "link", "bonus_amount": bonus},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "bonus_amount: the bonus must be at most 100.00 GBP per HIT" in answer.json()["detail"]
    with pytest.raises(CommandError, match="bonus_amount: the bonus must be at most 100.00 USD per HIT"):
        run(
            "crowd_study",
            "create",
            "--target",
            "camp-7",
            "--provider",
            "mturk",
            "--name",
            "big",
            "--bonus-amount",
            bonus,
        )
    assert not Study.objects.filter(name__startswith="big").exists()


def test_the_maximum_itself_is_accepted_and_is_a_setting(client, staff_user, toy_campaign, settings):
    run("crowd_payments", "--campaign", "camp-7", "--bonus-scope", "per-hit", "--bonus-amount", "100.00", "--dry-run")
    run("crowd_study", "create", "--target", "camp-7", "--provider", "link", "--name", "top", "--bonus-amount", "100")
    assert Study.objects.get(name="top").bonus_amount == Decimal("100.00")
    settings.CAPTIONEVAL_MAX_BONUS = "0.30"
    with pytest.raises(CommandError, match="--bonus-amount must be at most 0.30 GBP per HIT"):
        run("crowd_payments", "--campaign", "camp-7", "--bonus-scope", "per-hit", "--bonus-amount", "0.31")
    client.force_login(staff_user)
    page = client.get(reverse("crowd-payments", args=["toy", "camp-7"]), {"bonus_amount": "0.30"})
    assert page.context["bonus_amount"] == Decimal("0.30") and b'max="0.30"' in page.content
    assert not LedgerEntry.objects.exists()


def test_a_study_s_own_bonus_over_the_maximum_is_not_planned(client, staff_user, toy_campaign):
    """A study made before the limit (or when it was larger) keeps its bonus in the database: a payment run that
    gives no bonus of its own is refused naming it, instead of planning that bonus; one that gives a bonus
    within the limit records as usual."""
    Study.objects.filter(name="camp-7-panel").update(bonus_amount=Decimal("500.00"))
    with pytest.raises(CommandError, match=r"the bonus of study camp-7-panel \(--bonus-amount not given\) must be"):
        run("crowd_payments", "--campaign", "camp-7")
    client.force_login(staff_user)
    answer = client.post(reverse("api-crowd-payments"), {"campaign": "camp-7"}, content_type="application/json")
    assert answer.status_code == 400 and "at most 100.00 GBP" in answer.json()["bonus_amount"]
    assert not LedgerEntry.objects.exists()
    page = client.get(reverse("crowd-payments", args=["toy", "camp-7"]))
    assert b"the bonus of study camp-7-panel (Bonus not given) must be at most 100.00 GBP" in page.content
    assert b"not 500.00; the preview below does not use it" in page.content
    assert page.context["bonus_amount"] == Decimal("0")  # previewed without the bonus
    run("crowd_payments", "--campaign", "camp-7", "--bonus-amount", "0.40")
    assert LedgerEntry.objects.get(kind="bonus").amount == Decimal("0.40")


def test_an_invalid_maximum_stops_the_site_naming_the_variable(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    env = dict(os.environ, CAPTIONEVAL_MAX_BONUS="1e2", CAPTIONEVAL_VAR_DIR=str(tmp_path))
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0 and "CAPTIONEVAL_MAX_BONUS must be an amount such as 100.00" in result.stderr


def test_a_study_s_own_large_bonus_does_not_refuse_a_run_that_pays_no_bonus(client, staff_user, toy_campaign):
    """The study's stored bonus over the limit matters only when the run's bonus scope pays a bonus: a study (or a
    run) with no bonus records its decisions as usual."""
    from annotation_site.crowd import payments

    Study.objects.filter(name="camp-7-panel").update(bonus_amount=Decimal("500.00"), bonus_scope="none")
    study = Study.objects.get(name="camp-7-panel")
    assert payments.run_settings(study, {})[1] == {}
    Study.objects.filter(pk=study.pk).update(bonus_scope="per-hit")
    study.refresh_from_db()
    settings, problems = payments.run_settings(study, {"bonus_scope": "none"})
    assert problems == {} and settings.bonus_scope == "none"
    Study.objects.filter(pk=study.pk).update(bonus_scope="none")
    run("crowd_payments", "--campaign", "camp-7")
    assert LedgerEntry.objects.filter(kind="decision").count() == 2 and not LedgerEntry.objects.filter(kind="bonus")


def test_a_bonus_over_the_limit_planned_before_it_is_held_back_not_sent(toy_campaign):
    """A bonus row planned before the limit existed (or while it was larger) is failed by the payment run with a
    message saying why, never sent; the others go as usual."""
    from annotation_site.crowd import sending

    run("crowd_payments", "--campaign", "camp-7")
    large = LedgerEntry.objects.get(kind="bonus")
    LedgerEntry.objects.filter(pk=large.pk).update(amount=Decimal("400.00"))  # planned before the limit
    sending.apply_study(large.study)
    large.refresh_from_db()
    assert large.state == "failed" and "CAPTIONEVAL_MAX_BONUS" in large.error and "held back" in large.error
    assert large.attempts == 0  # never claimed, never sent
    assert LedgerEntry.objects.filter(kind="decision", state="confirmed").count() == 2


def test_a_held_back_bonus_follows_its_message_and_is_then_paid_once_as_now_recorded(toy_campaign):
    """The held-back row's message says: plan the failed rows again, then record the decisions with a bonus at most
    the limit. Its approval was already sent, so the recording left the bonus as it was (sent decisions are
    frozen) and the next run held it back again: the remedy the message names did nothing."""
    from annotation_site.crowd import sending

    run("crowd_payments", "--campaign", "camp-7")
    large = LedgerEntry.objects.get(kind="bonus")
    LedgerEntry.objects.filter(pk=large.pk).update(amount=Decimal("400.00"))  # planned before the limit
    sending.apply_study(large.study)
    large.refresh_from_db()
    assert large.state == "failed" and large.attempts == 0

    assert sending.plan_failed_again(large.study)["planned"] == 1
    run("crowd_payments", "--campaign", "camp-7", "--bonus-amount", "0.50")
    sending.apply_study(large.study)
    large.refresh_from_db()
    assert large.state == "confirmed" and large.amount == Decimal("0.50") and large.attempts == 1
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1


def test_a_bonus_waiting_for_its_approval_follows_a_new_recording_and_the_sent_approval_stays(toy_campaign):
    """A planned bonus whose approval was sent (not confirmed yet) is a planned row like any other: recording
    again with another amount changes it, and with no bonus removes it; the approval, sent, is never touched."""

    run("crowd_payments", "--campaign", "camp-7")
    bonus = LedgerEntry.objects.get(kind="bonus")
    approval = LedgerEntry.objects.get(kind="decision", assignment_key=bonus.assignment_key)
    LedgerEntry.objects.filter(pk=approval.pk).update(state="sent")  # on its way to the platform
    before = LedgerEntry.objects.get(pk=approval.pk)

    run("crowd_payments", "--campaign", "camp-7", "--bonus-amount", "0.25")
    bonus.refresh_from_db()
    assert bonus.state == "planned" and bonus.amount == Decimal("0.25")
    after = LedgerEntry.objects.get(pk=approval.pk)
    assert (after.state, after.action, after.reason) == ("sent", "approve", before.reason)

    run("crowd_payments", "--campaign", "camp-7", "--bonus-scope", "none")
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    assert LedgerEntry.objects.get(pk=approval.pk).state == "sent"


def test_a_bonus_sent_before_keeps_its_amount_when_recorded_again(toy_campaign, client, staff_user):
    """A bonus that was sent once (refused, then planned again) is known to the platform by its token and amount:
    a recording with another amount leaves it as it is and says so, never sends it again for another amount."""
    from annotation_site.crowd import adapters, payments, sending

    run("crowd_payments", "--campaign", "camp-7")
    bonus = LedgerEntry.objects.get(kind="bonus")
    sending.apply_study(bonus.study)
    LedgerEntry.objects.filter(pk=bonus.pk).update(state="failed")  # as if the platform had refused it
    assert sending.plan_failed_again(bonus.study)["planned"] == 1
    bonus.refresh_from_db()
    assert (bonus.state, bonus.attempts) == ("planned", 1)

    client.force_login(staff_user)  # the payments page says so before anything is recorded
    page = client.get(reverse("crowd-payments", args=["toy", "camp-7"]), {"bonus_amount": "0.25"})
    assert page.content.count(b"sent before: keeps this amount") == 1

    adapter, target = adapters.find_target("camp-7")
    chosen, problems = payments.run_settings(bonus.study, {"bonus_amount": "0.25"})
    assert not problems
    decisions, recorded = payments.decide_and_record(adapter, target, chosen, study=bonus.study)
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("0.40") and bonus.state == "planned"
    assert [d.bonus for d in decisions if d.bonus] == [Decimal("0.40")]  # what the page shows: as it stays
    assert recorded.kept == (bonus.assignment_key,) and recorded.written == 0, recorded
    assert "keep their amount: NOT changed as you asked" in recorded.warning()
    assert not recorded.sentence().startswith("These decisions were already recorded")

    # held back over a lower limit, it says what can be done with it (a smaller bonus cannot)
    LedgerEntry.objects.filter(pk=bonus.pk).update(amount=Decimal("400.00"))
    assert sending.hold_back_large_bonuses(bonus.study) == 1
    bonus.refresh_from_db()
    assert bonus.state == "failed" and "it was sent once before, so it keeps its amount" in bonus.error


def test_a_bonus_claimed_between_the_preview_and_the_recording_is_reported_not_changed(toy_campaign, monkeypatch):
    """The page showed a planned bonus removed (or changed); a payment run claims it before the recording takes the
    ledger's lock: it is on its way and stays as it is, and the person is told so (not "already recorded")."""
    from annotation_site.crowd import adapters, ledger, payments

    run("crowd_payments", "--campaign", "camp-7")
    bonus = LedgerEntry.objects.get(kind="bonus")
    study = bonus.study
    approval = LedgerEntry.objects.get(kind="decision", assignment_key=bonus.assignment_key)
    LedgerEntry.objects.filter(pk=approval.pk).update(state="sent")
    adapter, target = adapters.find_target("camp-7")
    settings_, problems = payments.run_settings(study, {"bonus_scope": "none"})
    assert not problems
    read_ledger = payments._read_ledger

    def claimed_first(where):
        ledger.claim([bonus])  # a run claims the bonus between the preview and the recording's lock
        return read_ledger(where)

    decisions = payments.run_decisions(adapter, target, settings_, study=study)
    assert [d.bonus for d in decisions if d.assignment_key == bonus.assignment_key] == [None]
    monkeypatch.setattr(payments, "_read_ledger", claimed_first)
    recorded = payments.record(target, decisions, policy=settings_.policy)
    assert recorded.not_changed == (bonus.assignment_key,) and recorded.removed == 0, recorded
    bonus.refresh_from_db()
    assert bonus.state == "sent" and bonus.amount == Decimal("0.40")


def test_a_held_back_bonus_is_planned_again_without_asking_the_platform(toy_campaign, monkeypatch):
    """A held-back row was never sent, so there is nothing to look up: it is planned again even while the
    platform cannot be asked, where a row that was sent and refused stays failed until it can."""
    from annotation_site.crowd import sending
    from annotation_site.crowd.providers.link import LinkProvider

    run("crowd_payments", "--campaign", "camp-7")
    large = LedgerEntry.objects.get(kind="bonus")
    LedgerEntry.objects.filter(pk=large.pk).update(amount=Decimal("400.00"))
    sending.apply_study(large.study)
    refused = LedgerEntry.objects.filter(kind="decision", state="confirmed").order_by("pk").first()
    LedgerEntry.objects.filter(pk=refused.pk).update(state="failed")  # sent, then refused
    asked = []

    def cannot_be_asked(self, row):
        asked.append(row.pk)
        return None

    monkeypatch.setattr(LinkProvider, "already_done", cannot_be_asked)
    counts = sending.plan_failed_again(large.study)
    assert counts == {"planned": 1, "confirmed": 0, "unchecked": 1}
    assert asked == [refused.pk]
    assert LedgerEntry.objects.get(pk=large.pk).state == "planned"
    assert LedgerEntry.objects.get(pk=refused.pk).state == "failed"
