"""Annotator identity: finding the Annotator of an account, inviting people, naming imported annotators."""
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from .models import Annotator


def annotator_for_user(user, *, create=True):
    """The Annotator of a logged-in account (created on first use: ``staff`` for staff, else ``invited``)."""
    annotator = Annotator.objects.filter(user=user).first()
    if annotator is None and create:
        kind = Annotator.Kind.STAFF if user.is_staff else Annotator.Kind.INVITED
        annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"kind": kind})
    return annotator


def invite(username, *, email="", display_name=""):
    """An Annotator for ``username``: an existing account, or a new one without a usable password (the invitee
    sets it through ``invitation_path``). Returns ``(annotator, created_account)``."""
    username = (username or "").strip()
    if not username:
        raise ValidationError({"username": "Give a user name."})
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.filter(username=username).first()
        created = user is None
        if created:
            User.username_validator(username)
            user = User(username=username, email=email)
            user.set_unusable_password()
            user.save()
        annotator = Annotator.objects.filter(user=user).first()
        if annotator is None:
            annotator = Annotator.objects.create(
                user=user, kind=Annotator.Kind.STAFF if user.is_staff else Annotator.Kind.INVITED,
                display_name=display_name)
    return annotator, created


def invitation_path(user):
    """The one-time address at which an invited account sets its password (Django's password-reset token: it
    stops working once the password is set, or after PASSWORD_RESET_TIMEOUT)."""
    return reverse("annotator-invitation", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)), "token": default_token_generator.make_token(user),
    })


def imported_annotators(provider, ids):
    """``{external id: Annotator}`` for annotators named in an imported file (created as needed; 2-3 queries)."""
    ids = sorted(set(ids))
    found = {a.external_id: a for a in Annotator.objects.filter(kind=Annotator.Kind.IMPORTED, provider=provider,
                                                                  external_id__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        Annotator.objects.bulk_create([Annotator(kind=Annotator.Kind.IMPORTED, provider=provider, external_id=i)
                                       for i in missing])
        found.update({a.external_id: a for a in Annotator.objects.filter(
            kind=Annotator.Kind.IMPORTED, provider=provider, external_id__in=missing)})
    return found
