"""The reads every signed-in request makes, compiled once per connection (issue #11, "Load"): the session row
(``annotation_site.sessions``) and the account's annotator (``annotators.services.annotator_for_user``). They
answer what Django's own reads answer: unknown and expired sessions are none, a switch of SESSION_ENGINE
between Django's database store and this one keeps people signed in, and the SQL is built once."""

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation_site import sessions
from annotation_site.annotators.services import annotator_for_user
from annotation_site.prepared_queries import sent_sql

pytestmark = pytest.mark.django_db


def test_the_store_is_the_one_in_use():
    from django.conf import settings

    assert settings.SESSION_ENGINE == "annotation_site.sessions"


def test_sessions_read_as_djangos_store_reads_them():
    theirs = DjangoStore()
    theirs["who"] = "annotator-7"
    theirs.create()
    assert sessions.SessionStore(theirs.session_key).load() == {"who": "annotator-7"}  # written by Django's
    ours = sessions.SessionStore()
    ours["n"] = 3
    ours.save()
    assert DjangoStore(ours.session_key).load() == {"n": 3}  # and the other way round
    for key in ("x" * 32, "", None):  # unknown, empty, none
        store = sessions.SessionStore(key)
        assert store.load() == {} and store.session_key is None


def test_an_expired_session_is_none_and_its_key_is_dropped():
    store = sessions.SessionStore()
    store["n"] = 1
    store.create()
    Session.objects.filter(session_key=store.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
    again = sessions.SessionStore(store.session_key)
    assert again.load() == {} and again.session_key is None
    assert DjangoStore(store.session_key).load() == {}  # Django's store agrees


def test_a_signed_in_request_reads_its_session_with_one_query_built_once(client, django_user_model):
    user = django_user_model.objects.create_user("reader", password="a long enough password 1")
    client.force_login(user)
    client.get(reverse("factuality-home"))  # compiles it
    with CaptureQueriesContext(connection) as first:
        assert client.get(reverse("factuality-home")).status_code == 200
    session_reads = [s for s in (sent_sql(q["sql"]) for q in first.captured_queries) if 'FROM "django_session"' in s]
    assert len(session_reads) == 1 and "expire_date" not in session_reads[0].split("WHERE")[1]


def test_the_annotator_of_an_account_is_found_by_the_compiled_read(django_user_model):
    first = django_user_model.objects.create_user("first")
    second = django_user_model.objects.create_user("second")
    made = annotator_for_user(first)
    assert annotator_for_user(second, create=False) is None  # another account's annotator is not found
    with CaptureQueriesContext(connection) as reads:
        assert annotator_for_user(first) == made
        assert annotator_for_user(first, create=False) == made
    assert len(reads) == 2
