"""Boundary values in every HTML form (issue #11, "Prove it" 3), the deterministic companion of the forms
property (``test_forms_fuzz.py``), whose generated text rarely reaches a column's bounds.

The forms are the ones the crawl of ``test_forms_fuzz.py`` reads from the pages (every persona, every route, the
participant's steps). Each form is first sent as a person would fill it in (its own values; an empty field gets
a plain value of its kind), then each field in turn, hidden ones too, is replaced by the values just past the
database's bounds (``boundary_values``, from ``test_boundary_values.py``: one past every integer range of the
backend, one character past the text columns' lengths, numbers no column holds). No answer may be a server error,
and an answer that refuses the input leaves the database unchanged. Each request runs in its own rolled-back
transaction, logged in inside it.
"""

import os

import pytest
from django.db import transaction

from .test_boundary_values import integer_bounds, shown, text_lengths
from .test_forms_fuzz import REFUSED_MARKS, collect_forms, login, pages_beyond_the_routes, personas
from .test_importers_fuzz import table_counts
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

# A value of each kind of field for a field the page left empty, and of the fields that name the world's objects.
PLAIN = {"number": "1", "email": "someone@example.org", "url": "https://example.org/", "date": "2030-01-01"}
NAMED = {"dataset": "demo", "preset": "fifa-faithfulness"}


def filled_in(form):
    """The form as a person would send it: its own values, a plain value where it has none, the first of a named
    button's actions; checkboxes as they are, files left out."""
    data = {}
    for name, kind, default, options in form.fields:
        if kind in ("file", "checkbox", "radio") and not default:
            continue
        value = default or (options[0] if options else NAMED.get(name) or PLAIN.get(kind, "bounds-1"))
        data.setdefault(name, value)
    return data


def boundary_values():
    """{kind of field: the values tried in it}. Numbers (one past every integer range, numbers no column holds)
    in number fields and selects; text one character past the text columns of at least 100 characters in text
    fields (a form's free text goes to those: the shorter ones hold codes, choices and ids); both in hidden fields.
    ``CAPTIONEVAL_BOUNDARY=all``: past every text column (about twice the requests)."""
    every = os.environ.get("CAPTIONEVAL_BOUNDARY") == "all"
    texts = ["x" * n for n in text_lengths() if every or n > 100]
    numbers = [str(n) for n in integer_bounds()] + ["1e308", "9" * 400]
    return {
        **dict.fromkeys(("number", "select", "date"), [*numbers, texts[-1]]),
        **dict.fromkeys(("text", "textarea", "email", "url", "search", "password", "tel"), [*texts, "9" * 400]),
        "hidden": numbers + texts,
    }


def test_no_value_past_a_column_bound_makes_a_form_fail(settings):
    without_rate_limits(settings)
    world = World()
    clients = personas(world)
    forms = collect_forms(world, clients, pages_beyond_the_routes(world))
    values = boundary_values()
    rows = table_counts()  # every request's transaction is rolled back, so this stays the state before each
    failures, accepted, tried = [], 0, 0
    for persona, form, page in forms:
        if form.method != "post":
            continue
        client, user = clients[persona]
        base = filled_in(form)

        def send(data, client=client, user=user, form=form, page=page, persona=persona):
            with transaction.atomic():
                # logged in inside the transaction: a request that changes the session's key (a password change)
                # would otherwise leave the client with the key of a session the rollback removed
                login(client, user)
                response = client.post(form.action, data)
                body = response.content if not response.streaming else b""
                refused = response.status_code == 400 or (
                    response.status_code == 200 and any(mark.encode() in body for mark in REFUSED_MARKS)
                )
                changed = refused and table_counts() != rows
                transaction.set_rollback(True)
            where = f"{persona} POST {form.action} (form on {page})"
            if response.status_code >= 500:
                failures.append(f"{response.status_code}: {where}")
            elif refused and changed:
                failures.append(f"refused ({response.status_code}) but the database changed: {where}")
            logged_out = response.status_code == 302 and "/accounts/login/" in response["Location"]
            if user is not None and logged_out and not form.action.endswith("/logout/"):
                failures.append(f"logged out: {where}")
            return response.status_code < 400 and not refused

        accepted += send(base)
        for name, kind, _, _ in form.fields:
            if name == "csrfmiddlewaretoken":  # the test client does not check it
                continue
            for value in values.get(kind, ()):
                tried += 1
                found = len(failures)
                send({**base, name: value})
                if len(failures) > found:
                    failures[-1] += f" with {name} = {shown(value)}"
    assert tried > 700, tried
    # the filled-in forms did real work: most were accepted as they stand
    assert accepted > len([f for _, f, _ in forms if f.method == "post"]) / 2, accepted
    assert not failures, f"{len(failures)} of {tried} requests:\n" + "\n".join(failures)
