"""Accepting an invitation: the invitee sets a password through a one-time link and is logged in."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import SetPasswordForm
from django.shortcuts import redirect, render
from django.urls import reverse

from .services import invitation_user

AFTER_ACCEPTING = "factuality-home"  # where an accepted invitation leads (and the login link of a used one)


def accept_invitation(request, uidb64, token):
    user = invitation_user(uidb64, token)
    valid = user is not None
    form = SetPasswordForm(user, request.POST or None) if valid else None
    if valid and request.method == "POST" and form.is_valid():
        form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(AFTER_ACCEPTING)
    return render(
        request,
        "annotators/accept_invitation.html",
        {"form": form, "valid": valid, "invitee": user, "next": reverse(AFTER_ACCEPTING)},
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
