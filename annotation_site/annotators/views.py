"""Accepting an invitation: the invitee sets a password through a one-time link and is logged in."""

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.tokens import default_token_generator
from django.shortcuts import redirect, render
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode


def _user(uidb64):
    try:
        return get_user_model().objects.get(pk=force_str(urlsafe_base64_decode(uidb64)))
    except (ValueError, TypeError, OverflowError, get_user_model().DoesNotExist):
        return None


def accept_invitation(request, uidb64, token):
    user = _user(uidb64)
    valid = user is not None and default_token_generator.check_token(user, token)
    form = SetPasswordForm(user, request.POST or None) if valid else None
    if valid and request.method == "POST" and form.is_valid():
        form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("factuality-home")
    return render(
        request,
        "annotators/accept_invitation.html",
        {"form": form, "valid": valid, "invitee": user if valid else None},
        status=200 if valid else 400,
    )


def invitation_messages(request, invited):
    """Tell the researcher, on the page, who was invited and which one-time links to send (one wording for every
    protocol that invites annotators)."""
    for entry in invited:
        user = entry.annotator.user
        if entry.needs_link:
            link = request.build_absolute_uri(entry.link_path)
            what = "New account" if entry.created_account else "Not activated yet"
            messages.info(
                request, f"{what} {user.get_username()}: send them this one-time link to set a password: {link}"
            )
        else:
            messages.success(request, f"Invited {user.get_username()} (their account is active: they log in).")
