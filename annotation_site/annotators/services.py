"""Annotator identity: finding the Annotator of an account, inviting people (and reissuing a lost invitation
link), naming imported annotators."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from annotation_site import identities
from annotation_site.prepared_queries import Prepared

from .models import Annotator

# every request of a signed-in annotator reads it: compiled once per database connection
_OF_USER = Prepared(lambda user_id: Annotator.objects.filter(user_id=user_id).order_by("pk")[:1], user_id=-914_270_051)


def annotator_for_user(user, *, create=True):
    """The Annotator of a logged-in account (created on first use: ``staff`` for staff, else ``invited``)."""
    found = _OF_USER.run(user_id=user.pk) if type(user.pk) is int else list(Annotator.objects.filter(user=user)[:1])
    annotator = found[0] if found else None
    if annotator is None and create:
        kind = Annotator.Kind.STAFF if user.is_staff else Annotator.Kind.INVITED
        annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"kind": kind})
    return annotator


def invite(username, *, email="", display_name=""):
    """An Annotator for ``username``: an existing account, or a new one without a usable password (the invitee
    sets it through ``invitation_path``). Returns ``(annotator, created_account)``. An existing account is found
    whatever the case of its name ("ANN1" invites ``ann1``: a second account for the same person, differing only by
    case, was made until 2026-11-28); an exact match wins where accounts differing only by case exist already,
    and a name matching several of them only by case is refused (which one is meant cannot be told)."""
    User = get_user_model()
    username = User.normalize_username((username or "").strip())  # NFKC, as Django's own forms store names
    if not username:
        raise ValidationError({"username": "Give a user name."})
    longest = User._meta.get_field(User.USERNAME_FIELD).max_length
    if len(username) > longest:
        raise ValidationError({"username": f"A user name has at most {longest} characters, not {len(username)}."})
    with transaction.atomic():
        user = _account_named(User, username)
        created = user is None
        if created:
            User.username_validator(username)
            user = User(username=username, email=email)
            user.set_unusable_password()
            user.save()
        annotator = Annotator.objects.filter(user=user).first()
        if annotator is None:
            annotator = Annotator.objects.create(
                user=user,
                kind=Annotator.Kind.STAFF if user.is_staff else Annotator.Kind.INVITED,
                display_name=display_name,
            )
    return annotator, created


def _account_named(User, username):
    """The account ``username`` names: its exact name, else the one account with that name in another case; None
    when there is none."""
    matches = list(User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username})[:10])
    exact = [user for user in matches if user.get_username() == username]
    if exact or len(matches) <= 1:
        return (exact or matches or [None])[0]
    names = ", ".join(sorted(user.get_username() for user in matches))
    raise ValidationError({"username": f"{username!r} matches the accounts {names} except for case: give one exactly."})


@dataclass
class Invited:
    """The outcome of inviting someone to a project or task: the link travels with it while it is still needed."""

    annotator: Annotator
    created_account: bool
    link_path: str | None = None  # the invitation link, while the account awaits activation (new or not)

    @property
    def needs_link(self):
        return self.link_path is not None


def invite_with_link(username, *, email=""):
    """``invite`` plus the invitation link whenever the account still needs one: a new account, or one that never
    activated (so re-inviting someone who lost their link shows a working one)."""
    annotator, created = invite(username, email=email)
    user = annotator.user
    link = invitation_path(user) if created or awaits_activation(user) else None
    return Invited(annotator=annotator, created_account=created, link_path=link)


def awaits_activation(user):
    """An invited account whose invitee never set a password (and never logged in): their link is still needed."""
    return not user.has_usable_password() and user.last_login is None


class InvitationError(ValueError):
    """No invitation link can be (re)issued for this account."""


def reissue_invitation(user):
    """A fresh invitation path for an account that never activated, when the first link was lost. The earlier
    link stops working (the account gets a new unusable password, which changes what the token is made of).
    Refused for an account that has a password: its owner logs in, or resets a forgotten password."""
    if not awaits_activation(user):
        raise InvitationError(
            f"{user.get_username()} has already set a password: they log in with it (a forgotten "
            "password is reset from the login page or by an administrator)"
        )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return invitation_path(user)


def invitation_user(uidb64, token):
    """The account an invitation link ``invitations/UIDB64/TOKEN/`` sets the password of, or None when the link
    does not work (used, expired, reissued, damaged, or its account deactivated or deleted). The reasons are not
    told apart: the address's first part is only an account number, so an answer that depended on the account
    (active or not) would tell anyone who tries numbers which accounts exist and when an invitee accepted."""
    User = get_user_model()
    try:
        user = User.objects.get(pk=force_str(urlsafe_base64_decode(uidb64)))
    except (ValueError, TypeError, OverflowError, ValidationError, User.DoesNotExist):
        return None
    return user if default_token_generator.check_token(user, token) else None


def invitation_path(user):
    """The one-time address at which an invited account sets its password (Django's password-reset token: it
    stops working once the password is set, or after PASSWORD_RESET_TIMEOUT)."""
    return reverse(
        "annotator-invitation",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )


def imported_annotator_id(raw):
    """An annotator id named in an imported file, as it is stored: normalised like every id from outside (NFKC,
    trimmed, no invisible or control characters: ``x`` and ``x`` with a zero-width space are one annotator) and
    within its column. IdentityError saying what is wrong."""
    column = Annotator._meta.get_field("external_id").max_length
    return identities.normalise(raw, what="annotator id", max_length=column)


def imported_annotators(provider, ids):
    """``{external id: Annotator}`` for annotators named in an imported file (created as needed; 2-3 queries)."""
    ids = sorted(set(ids))
    found = {
        a.external_id: a
        for a in Annotator.objects.filter(kind=Annotator.Kind.IMPORTED, provider=provider, external_id__in=ids)
    }
    missing = [i for i in ids if i not in found]
    if missing:
        Annotator.objects.bulk_create(
            [Annotator(kind=Annotator.Kind.IMPORTED, provider=provider, external_id=i) for i in missing]
        )
        found.update(
            {
                a.external_id: a
                for a in Annotator.objects.filter(
                    kind=Annotator.Kind.IMPORTED, provider=provider, external_id__in=missing
                )
            }
        )
    return found
