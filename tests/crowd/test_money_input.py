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
