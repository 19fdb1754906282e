"""Every HTML form the platform shows, submitted with values hypothesis generates (issue #11, "Prove it" 3:
"every form ... is refused with a clear message and the database is unchanged").

The forms are not listed by hand: every route of the URL resolver (the admin's aside, which is Django's own) is
opened by GET as staff, as an annotator and anonymously with the world's signed tokens, and every ``<form>`` of
every page that answers is read from its HTML (fields, their kinds, defaults and options). Each form is then sent
with generated values: its defaults, hostile text in any field (control characters, formulas, digits of other
scripts, very long values, markup), options that are not among the select's, fields left out, files that are
empty, binary or not what they claim. The rules:

- no answer is a server error (5xx);
- an answer that refuses the input (400, or the form shown again with its errors) leaves the database unchanged.

Each example runs in a transaction rolled back afterwards, so examples do not see each other's changes.
"""

import os
from dataclasses import dataclass, field
from datetime import timedelta
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import resolve, reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .test_importers_fuzz import HOSTILE, table_counts
from .test_permission_matrix import routes
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("CAPTIONEVAL_FUZZ_EXAMPLES", "12"))
REFUSED_MARKS = ("field__error", "notice--error")  # templates/partials/field.html and form_errors.html
FILES = [b"", b"\x00\x01\x02", b"PK\x03\x04 not a zip", b"\xff\xfe\x00b", b'=HYPERLINK("x"),1\n', b"{" * 200]


@dataclass
class Form:
    method: str
    action: str
    fields: list = field(default_factory=list)  # (name, kind, default, options)

    def key(self):
        """One form per route, method and field names (signed tokens in the path differ by their timestamps)."""
        route = resolve(urlsplit(self.action).path).route
        return (self.method, route, tuple(sorted({name for name, *_ in self.fields})))


class FormReader(HTMLParser):
    """The forms of a page: each input, select (with its options) and textarea that has a name."""

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.page, self.forms, self.form, self.select, self.textarea = page, [], None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            method = (attrs.get("method") or "get").lower()
            self.form = Form(method, urljoin(self.page, attrs.get("action") or self.page))
            self.forms.append(self.form)
        elif self.form is None or not attrs.get("name"):
            return
        elif tag == "input":
            kind = (attrs.get("type") or "text").lower()
            if kind not in ("submit", "button", "reset", "image"):
                self.form.fields.append([attrs["name"], kind, attrs.get("value") or "", []])
        elif tag == "select":
            self.select = [attrs["name"], "select", None, []]
            self.form.fields.append(self.select)
        elif tag == "option" and self.select is not None:
            self.select[3].append(attrs.get("value", ""))
            if self.select[2] is None or "selected" in attrs:
                self.select[2] = attrs.get("value", "")
        elif tag == "textarea":
            self.textarea = [attrs["name"], "textarea", "", []]
            self.form.fields.append(self.textarea)
        elif tag == "button" and (attrs.get("type") or "submit").lower() == "submit":
            # a named submit button sends its value: one "field" per name, its buttons' values as options
            same = [f for f in self.form.fields if f[0] == attrs["name"] and f[1] == "button"]
            if same:
                same[0][3].append(attrs.get("value", ""))
            else:
                self.form.fields.append([attrs["name"], "button", attrs.get("value", ""), [attrs.get("value", "")]])

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[2] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        elif tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None


def hostile_text():
    return st.one_of(st.sampled_from(HOSTILE), st.text(max_size=30))


def value_for(kind, default, options):
    """A strategy for one field's value; None leaves the field out."""
    if kind == "file":
        return st.one_of(st.none(), st.sampled_from(FILES))
    if kind in ("checkbox", "radio"):
        return st.one_of(st.none(), st.just(default or "on"), hostile_text())
    if kind == "hidden":  # ids and tokens the page put there: mostly kept, so the view gets past them
        return st.one_of(st.just(default), st.just(default), st.just(default), st.none(), hostile_text())
    if kind == "select":
        return st.one_of(st.sampled_from(options or [""]), st.none(), hostile_text())
    if kind == "button":  # mostly one of the form's own actions, so each is reached
        return st.one_of(st.sampled_from(options), st.sampled_from(options), st.sampled_from(options), hostile_text())
    return st.one_of(st.just(default), st.none(), hostile_text())


def submissions(form):
    """Strategy: the data of one submission of ``form`` ({name: value or [values]})."""
    names = []
    parts = []
    for name, kind, default, options in form.fields:
        names.append((name, kind))
        parts.append(value_for(kind, default, options))

    def assemble(values):
        data = {}
        for (name, kind), value in zip(names, values):
            if value is None:
                continue
            if kind == "file":
                value = SimpleUploadedFile(f"{name}.csv", value)
            if name in data:  # several checkboxes or inputs of one name: a list
                previous = data[name]
                data[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
            else:
                data[name] = value
        return data

    return st.tuples(*parts).map(assemble)


def personas(world):
    staff, annotator = Client(raise_request_exception=False), Client(raise_request_exception=False)
    return {
        "staff": (staff, world.users["staff"]),
        "annotator": (annotator, world.users["annotator"]),
        "anonymous": (Client(raise_request_exception=False), None),
    }


def login(client, user):
    client.logout()
    if user is not None:
        client.force_login(user)


def pages_beyond_the_routes(world):
    """(persona, path) of pages whose forms the routes' own values do not show. The world's study asks neither
    for consent nor for practice; here it asks for both, and one participant stands at each step: consent,
    practice, Start (the world's own participant now stands at consent); the practice participant's page is
    also opened after an answer (a POST: the page with the feedback and its form to go on). And the page of an
    MTurk study (the world's study is a link study), with its results-file form. Participants' pages are opened
    anonymously, the study's as staff. Each entry is (persona, path) or (persona, path, data to POST)."""
    from annotation_site.crowd import admission, links
    from annotation_site.crowd.models import PracticeItem, Study

    study = Study.objects.get(name="perm-study")
    study.consent_text = "Your ratings are used for research. Do you agree to take part?"
    study.save(update_fields=["consent_text"])
    item = PracticeItem.objects.create(
        study=study, text="a man rides a bike", accept_min=40, accept_max=100, feedback="The caption is right."
    )
    pages = []
    for step, done in (
        ("consent", ()),
        ("practice", ("consented_at",)),
        ("start", ("consented_at", "practice_done_at")),
    ):
        [(_, token)] = admission.create_participant_links(
            study, [f"perm-{step}"], expires_at=timezone.now() + timedelta(days=1)
        )
        participation = admission.admit(
            study, {}, participant=admission.participant_for_link(admission.link_for_token(token))
        )
        for moment in done:
            setattr(participation, moment, timezone.now())
        participation.save(update_fields=list(done))
        token = links.participation_token(participation)
        pages.append(("anonymous", reverse("crowd-participant", args=[token])))
        if step == "practice":
            pages.append(("anonymous", reverse("crowd-practice", args=[token]), {"item": item.pk, "value": "50"}))
    world.mturk_study("perm-mturk")
    pages.append(("staff", reverse("crowd-study", args=["perm-mturk"])))
    # the DA import with its campaign filled in (as a campaign's "Add judgments from a file" opens it), so the
    # generated files reach the import into an existing campaign, not only the campaign name's check
    pages.append(("staff", reverse("da-judgments-import") + f"?campaign={world.campaign.name}"))
    return pages


def collect_forms(world, clients, extra_pages=()):
    """(persona, form, page path) of every form on every page a persona of ``clients`` can open, once each;
    ``extra_pages``: (persona, path) or (persona, path, data to POST) of pages no route's own values reach."""
    found = {}
    for persona, (client, user) in clients.items():
        login(client, user)
        paths = [
            reverse(name, kwargs=world.kwargs(name, params))
            for name, _, params in routes()
            if not name.startswith("admin:") and not name.endswith("logout")
        ]
        visits = [(path, None) for path in paths]
        visits += [(path, data[0] if data else None) for who, path, *data in extra_pages if who == persona]
        for path, data in visits:
            response = client.get(path) if data is None else client.post(path, data)
            if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
                continue
            reader = FormReader(path)
            reader.feed(response.content.decode("utf-8", "replace"))
            for form in reader.forms:
                if form.action.startswith("/"):
                    found.setdefault((persona, form.key()), (persona, form, path))
    return list(found.values())


def check_form(persona, client, user, form, page):
    failures = []

    @given(data=submissions(form))
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    def one(data):
        with transaction.atomic():
            login(client, user)
            before = table_counts()
            if form.method == "post":
                response = client.post(form.action, data)
            else:
                response = client.get(form.action, {k: v for k, v in data.items() if isinstance(v, (str, list))})
            where = f"{persona} {form.method.upper()} {form.action} (form on {page}) with {str(data)[:300]}"
            body = response.content if not response.streaming else b""
            refused = response.status_code == 400 or (
                response.status_code == 200 and any(mark.encode() in body for mark in REFUSED_MARKS)
            )
            if response.status_code >= 500:
                failures.append(f"{response.status_code}: {where}")
            elif refused and form.method == "post" and table_counts() != before:
                failures.append(f"refused ({response.status_code}) but the database changed: {where}")
            transaction.set_rollback(True)

    one()
    return failures


def test_every_form_refuses_generated_input_cleanly(settings):
    without_rate_limits(settings)
    world = World()
    clients = personas(world)
    forms = collect_forms(world, clients, pages_beyond_the_routes(world))
    # the crawl found the platform's forms: the researcher's, the annotator's and a participant's
    assert {persona for persona, _, _ in forms} == {"staff", "annotator", "anonymous"}, forms
    reached = {resolve(urlsplit(form.action).path).url_name for _, form, _ in forms}
    assert {"crowd-consent", "crowd-practice", "crowd-start", "crowd-mturk-file"} <= reached, sorted(reached)
    practice_fields = {
        tuple(sorted(name for name, *_ in form.fields))
        for _, form, _ in forms
        if resolve(urlsplit(form.action).path).url_name == "crowd-practice"
    }
    assert ("item", "next", "value") in practice_fields, practice_fields  # the form after an answer
    assert len(forms) > 30, [(p, f.action) for p, f, _ in forms]
    failures = []
    for persona, form, page in forms:
        client, user = clients[persona]
        failures += check_form(persona, client, user, form, page)
    assert not failures, "\n".join(failures)
