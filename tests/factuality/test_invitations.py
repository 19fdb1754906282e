"""Invitations (issue #9, item 4): re-inviting an account that never activated shows a fresh link (not "Invited
erin." with none); a lost link can be reissued on the page, over the API and with the command, and the lost
one stops working; links printed by commands start with the configured public address."""

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, override_settings
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation_site.factuality import projects

pytestmark = pytest.mark.django_db
LINK = r"(http://testserver/factuality/invitations/[^/]+/[^/ ]+/)"


def _invite_on_the_page(staff_client, username):
    response = staff_client.post(reverse("factuality-invite", args=["fact"]), {"usernames": username}, follow=True)
    return response.content.decode()


def _works(_client, url):
    """The invitation link opens its set-a-password form (asked by a browser of its own)."""
    return Client().get(url.replace("http://testserver", "")).status_code == 200


def test_reinviting_an_account_that_never_activated_shows_a_fresh_link(client, staff_client, make_project):
    make_project()
    first = re.search(LINK, _invite_on_the_page(staff_client, "erin")).group(1)
    again = _invite_on_the_page(staff_client, "erin")
    assert "Invited erin." not in again
    link = re.search(r"Not activated yet erin: send them this one-time link to set a password: " + LINK, again)
    assert link and _works(client, link.group(1)) and _works(client, first)


def test_a_lost_link_is_reissued_on_the_page(client, staff_client, make_project):
    make_project()
    lost = re.search(LINK, _invite_on_the_page(staff_client, "erin")).group(1)
    page = staff_client.get(reverse("factuality-project", args=["fact"])).content.decode()
    reissue = reverse("factuality-reissue", args=["fact", "erin"])
    assert f'action="{reissue}"' in page and "not activated" in page
    response = staff_client.post(reissue, follow=True).content.decode()
    fresh = re.search(r"New invitation link for erin \(the earlier one no longer works\): " + LINK, response).group(1)
    assert fresh != lost and _works(client, fresh)
    assert not _works(client, lost)
    done = Client().post(
        fresh.replace("http://testserver", ""),
        {"new_password1": "a-long-password-42", "new_password2": "a-long-password-42"},
    )
    assert done.status_code == 302
    # an active account gets no link: its owner logs in
    page = staff_client.get(reverse("factuality-project", args=["fact"])).content.decode()
    assert f'action="{reissue}"' not in page
    refused = staff_client.post(reissue, follow=True).content.decode()
    assert "has already set a password" in refused
    assert "Invited erin (their account is active: they log in)." in _invite_on_the_page(staff_client, "erin")


def test_a_lost_link_is_reissued_over_the_api(client, staff_client, make_project):
    make_project()
    invited = staff_client.post(
        reverse("api-factuality-invite", args=["fact"]), {"usernames": ["erin"]}, content_type="application/json"
    ).json()["invited"]["erin"]
    again = staff_client.post(
        reverse("api-factuality-invite", args=["fact"]), {"usernames": ["erin"]}, content_type="application/json"
    ).json()["invited"]["erin"]
    assert again and _works(client, again)  # re-inviting: a link, not null
    response = staff_client.post(reverse("api-factuality-reissue", args=["fact", "erin"]))
    assert response.status_code == 200
    fresh = response.json()["url"]
    assert _works(client, fresh) and not _works(client, invited)
    assert staff_client.post(reverse("api-factuality-reissue", args=["fact", "nobody"])).status_code == 400


@override_settings(CAPTIONEVAL_BASE_URL="https://annotate.example.org")
def test_the_command_reissues_and_prints_links_on_the_public_address(client, make_project, django_user_model):
    make_project()
    out = io.StringIO()
    call_command("factuality_project", "invite", "--name", "fact", "--annotators", "erin", stdout=out)
    assert re.search(
        r"Invited erin \(new account\): https://annotate\.example\.org/factuality/invitations/", out.getvalue()
    )
    out = io.StringIO()
    call_command("factuality_project", "invite", "--name", "fact", "--annotators", "erin", stdout=out)
    assert "Invited erin (not activated yet): https://annotate.example.org/factuality/invitations/" in out.getvalue()
    out = io.StringIO()
    call_command("factuality_project", "reissue", "--name", "fact", "--annotators", "erin", stdout=out)
    fresh = re.search(
        r"no longer works\): https://annotate\.example\.org(/factuality/invitations/\S+/)", out.getvalue()
    ).group(1)
    assert client.get(fresh).status_code == 200
    django_user_model.objects.create_user("active", password="pw-active-123")
    projects.invite_to_project(projects.Project.objects.get(name="fact"), "active")
    with pytest.raises(CommandError, match="already set a password"):
        call_command("factuality_project", "reissue", "--name", "fact", "--annotators", "active")


def _used_link(client, staff_client, make_project, username):
    make_project()
    page = _invite_on_the_page(staff_client, username)
    link = re.search(LINK, page).group(1).replace("http://testserver", "")
    done = client.post(link, {"new_password1": "a-long-password-42", "new_password2": "a-long-password-42"})
    assert done.status_code == 302
    client.logout()
    return link


def test_a_used_invitation_says_to_log_in_or_ask_for_a_new_one(client, staff_client, make_project):
    """It said only "Ask the researcher who invited you for a new one", which the researcher cannot give once the
    account has a password (reissuing is refused); it now also says to log in if the password was set, with a
    link to the login page leading on to where accepting the invitation leads."""
    link = _used_link(client, staff_client, make_project, "returning")
    response = client.get(link)
    page = response.content.decode()
    assert response.status_code == 400
    assert "This link no longer works" in page and "log in with your user name" in page
    login = re.search(r'id="invitation-login" href="([^"]+)"', page).group(1)
    assert login == reverse("login") + "?next=" + reverse("factuality-home")
    assert f'name="next" value="{reverse("factuality-home")}"' in client.get(login).content.decode()


def test_a_link_that_does_not_work_tells_nothing_about_its_account(
    client, staff_client, make_project, django_user_model
):
    """The first part of the address is only an account number: the page of a link that does not work must not
    depend on the account (active, deactivated, deleted, never there), or anyone trying numbers would learn which
    accounts exist and when an invitee accepted."""
    link = _used_link(client, staff_client, make_project, "leaver")
    uid = link.rstrip("/").split("/")[-2]
    active = django_user_model.objects.get(username="leaver")
    staff = django_user_model.objects.filter(is_staff=True).first()

    def page(uidb64, token="made-up-token"):
        response = client.get(reverse("annotator-invitation", args=[uidb64, token]))
        return response.status_code, response.content.decode()

    pages = {
        "used": (client.get(link).status_code, client.get(link).content.decode()),
        "active, made up": page(uid),
        "staff, made up": page(urlsafe_base64_encode(force_bytes(staff.pk))),
        "no such account": page(urlsafe_base64_encode(force_bytes(10**9))),
        "not a number": page("!!"),
    }
    active.is_active = False
    active.save(update_fields=["is_active"])
    pages["deactivated"] = page(uid)
    active.delete()
    pages["deleted"] = page(uid)
    assert len(set(pages.values())) == 1, {name: status for name, (status, _) in pages.items()}
    assert pages["used"][0] == 400
