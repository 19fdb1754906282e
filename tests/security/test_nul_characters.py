"""A NUL character from the address bar or a cookie never reaches the database (issue #11: "every input path
answers 400"). PostgreSQL's text cannot hold NUL, so psycopg2 refused such a value when a view looked it up: a
500 on PostgreSQL for dozens of views, found by sending every route of the resolver a NUL in each name of its
path and in its query string. SQLite simply found nothing, so the assertions below also say what is answered
instead (a 400 naming the problem; a session cookie that no key Django made is a new, empty session)."""

from urllib.parse import urlencode

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from annotation_site.address_check import FORM_MESSAGE, MESSAGE
from annotation_site.sessions import SessionStore

from .test_permission_matrix import routes
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db


def nul_addresses(world):
    """(route name, address) of every route with a NUL appended to each text value of its path, and once with
    NUL in its query string."""
    for name, _, params in routes():
        if name.startswith("admin:") or name.endswith("logout"):
            continue
        kwargs = world.kwargs(name, params)
        path = reverse(name, kwargs=kwargs)
        yield name, path + "?q=%00"
        yield name, path + "?format=json&name=x%00y"
        for key, value in kwargs.items():
            if isinstance(value, str):
                yield name, reverse(name, kwargs={**kwargs, key: value + "\x00"})


def test_every_route_answers_a_nul_in_its_address_with_400(settings):
    without_rate_limits(settings)
    world = World()
    client = Client(raise_request_exception=False)
    client.force_login(world.users["staff"])
    answers, tried = [], 0
    for name, address in nul_addresses(world):
        for method in ("get", "post"):
            tried += 1
            response = getattr(client, method)(address)
            if response.status_code != 400:
                answers.append(f"{method.upper()} {address!r} ({name}): {response.status_code}")
            elif address.startswith("/api/"):
                assert response.json() == {"detail": MESSAGE}
            else:
                assert (
                    MESSAGE in response.content.decode() and "Check the link you followed" in response.content.decode()
                )
    assert tried > 400, tried  # the resolver's routes, each with its path values
    assert not answers, "\n".join(answers)


FORM = {"dataset": "x\x00y", "study": "x\x00y", "name": "x\x00y", "code": "c"}


def test_every_route_answers_a_nul_in_a_form_field_with_400(settings):
    """A NUL in a form field that a view looks a row up by (a dataset or study named in a urlencoded or multipart
    body, read without a Django form) was a 500 on PostgreSQL (2026-11-27: the new-project and new-campaign pages,
    the code-verification and raw-label import APIs). The signed webhook reads its raw body itself: a form sent
    to it is refused by its own checks, not by reading the body here (which would use it up)."""
    without_rate_limits(settings)
    settings.PROLIFIC_WEBHOOK_SECRET = "a-secret-for-the-signature-check"
    world = World()
    client = Client(raise_request_exception=False)
    client.force_login(world.users["staff"])
    answers, tried = [], 0
    for name, _, params in routes():
        if name.startswith("admin:") or name.endswith("logout"):
            continue
        path = reverse(name, kwargs=world.kwargs(name, params))
        for kind in ("urlencoded", "multipart"):
            tried += 1
            if kind == "multipart":
                response = client.post(path, FORM)
            else:
                response = client.post(path, urlencode(FORM), content_type="application/x-www-form-urlencoded")
            if name == "crowd-webhook-prolific":
                if response.status_code not in (400, 401, 403) or FORM_MESSAGE in response.content.decode():
                    answers.append(f"POST {kind} {path} ({name}): {response.status_code}")
            elif response.status_code != 400 or FORM_MESSAGE not in response.content.decode():
                answers.append(f"POST {kind} {path} ({name}): {response.status_code}")
            elif path.startswith("/api/"):
                assert response.json() == {"detail": FORM_MESSAGE}
            else:
                assert "send the form again" in response.content.decode()
    assert tried > 200, tried
    assert not answers, "\n".join(answers)


def test_form_fields_without_a_nul_reach_the_view(client, db, django_user_model):
    client.force_login(django_user_model.objects.create_user("formed", password="pw-formed-1", is_staff=True))
    response = client.post("/da/campaigns/new/", {"dataset": "no-such-dataset"})
    assert response.status_code != 400 or FORM_MESSAGE not in response.content.decode()


def test_a_percent_sign_and_zeros_that_are_not_a_nul_go_through(client, db):
    response = client.get("/accounts/login/?next=/datasets/%2500/")  # "%00" as text, not a NUL
    assert response.status_code == 200


@pytest.mark.parametrize("cookie", ['"abcdefghij\\000klmnop"', "abcdefghijklmnop\x00", "ABCDEFGHIJKLMNOP", "a" * 41])
def test_a_session_cookie_no_key_django_made_is_a_new_session(client, db, cookie):
    """A quoted cookie value's octal escape decodes to NUL (``http.cookies``), so an ASCII-only request could make
    every page a 500 on PostgreSQL."""
    response = client.get("/", HTTP_COOKIE=f"{django_settings.SESSION_COOKIE_NAME}={cookie}")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert SessionStore(cookie.strip('"')).session_key is None


def test_a_session_key_django_made_is_still_read(client, db, django_user_model):
    user = django_user_model.objects.create_user("keyed", password="pw-keyed-1")
    client.force_login(user)
    key = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    assert SessionStore(key).session_key == key and SessionStore(key).load()
    assert client.get("/").status_code in (200, 302) and client.get("/").wsgi_request.user == user
