"""Annotator identity: one Annotator per account, invitations, imported annotators."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import annotator_for_user, imported_annotators, invitation_path, invite

pytestmark = pytest.mark.django_db


def test_accounts_get_one_annotator_of_the_right_kind(django_user_model, staff_user):
    user = django_user_model.objects.create_user("plain")
    assert annotator_for_user(user, create=False) is None
    made = annotator_for_user(user)
    assert made.kind == "invited" and annotator_for_user(user) == made
    assert annotator_for_user(staff_user).kind == "staff"
    assert made.name == "plain" and made.identifier == "plain"


def test_invite_creates_an_account_without_a_usable_password(django_user_model):
    annotator, created = invite("newbie", email="n@example.org")
    assert created and not annotator.user.has_usable_password() and annotator.kind == "invited"
    again, created_again = invite("newbie")
    assert again == annotator and not created_again
    assert invitation_path(annotator.user).startswith("/factuality/invitations/")
    with pytest.raises(ValidationError):
        invite("  ")
    with pytest.raises(ValidationError):
        invite("bad name!")


def test_imported_annotators_are_made_once(django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        first = imported_annotators("import", ["b", "a", "a"])
    assert sorted(first) == ["a", "b"] and first["a"].kind == "imported" and first["a"].identifier == "a"
    with django_assert_max_num_queries(1):
        assert imported_annotators("import", ["a"])["a"] == first["a"]
    assert Annotator.objects.count() == 2


def test_an_annotator_needs_an_account_or_an_external_id():
    with pytest.raises(IntegrityError):
        Annotator.objects.create(kind="crowd")


def test_inviting_a_name_in_another_case_invites_the_existing_account(django_user_model):
    """ "ANN1" is the account ann1: inviting it made a second account beside ann1 (a QA probe, 2026-11-28), so
    the person was two annotators and the one with the work was not added."""
    ann1 = django_user_model.objects.create_user("ann1", password="x")
    annotator, created = invite("ANN1")
    assert not created and annotator.user == ann1
    assert list(django_user_model.objects.values_list("username", flat=True)) == ["ann1"]
    again, created = invite(" Ann1 ")
    assert not created and again == annotator


def test_an_exact_name_wins_and_a_name_matching_several_only_by_case_is_refused(django_user_model):
    lower = django_user_model.objects.create_user("bea", password="x")
    upper = django_user_model.objects.create_user("BEA", password="x")  # made before the rule, e.g. in the admin
    assert invite("bea")[0].user == lower and invite("BEA")[0].user == upper
    with pytest.raises(ValidationError) as refused:
        invite("Bea")
    assert "'Bea' matches the accounts BEA, bea except for case" in str(refused.value)
    assert django_user_model.objects.count() == 2
