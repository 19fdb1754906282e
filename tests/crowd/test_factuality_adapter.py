"""Factuality / rating projects plugged into crowd work: a crowd participant enters by a link study, takes a
video (Start), annotates on the signed annotation page (no account; draft and submit by token), ends on the
crowd's end page with a completion code; the payment decisions know projects have no hidden QC."""

import json
import re
import uuid
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.crowd import adapters, links
from annotation_site.crowd.models import Participation
from annotation_site.factuality.models import CaptionRating, Project

from ..factuality.conftest import make_project, small_dataset  # noqa: F401  (fixtures)
from .conftest import link_study, payments_dry_run, start_by_link

pytestmark = pytest.mark.django_db


def test_a_crowd_participant_rates_a_video_of_a_rating_project(client, make_project):  # noqa: F811
    project = make_project(name="fifa-crowd", kind=Project.Kind.RATING, annotators_per_video=1)
    study = link_study("factuality", project, "fifa-panel")
    adapter, target = adapters.resolve("factuality", "fifa-crowd")
    n_videos = len(adapter.describe(target).units)
    assert adapter.capacity(target) == n_videos
    token, started = start_by_link(client, study, {"pid": "rita"})
    assert started.status_code == 302 and started["Location"].startswith("/factuality/a/")
    annotate = client.get(started["Location"])
    assert annotate.status_code == 200 and annotate["Content-Security-Policy"].startswith("frame-ancestors")
    config = json.loads(
        re.search(
            r'<script id="annotation-config" type="application/json">(.*?)</script>', annotate.content.decode(), re.S
        ).group(1)
    )
    finish = reverse("crowd-finish", args=[token])
    assert re.search(r'<form method="get" action="/crowd/w/[^/]+/finish/" id="next-form"', annotate.content.decode())
    n = len(config["paragraphs"])
    # the token is the credential: no account, no session, no CSRF token
    saved = client.put(
        config["draftUrl"], {"answer": {"paragraphs": [{"score": 4}] * n}}, content_type="application/json"
    )
    assert saved.status_code == 200, saved.content
    submitted = client.post(
        config["submitUrl"],
        {"submission_uuid": str(uuid.uuid4()), "answer": {"paragraphs": [{"score": 4}] * n}},
        content_type="application/json",
    )
    assert submitted.status_code == 201, submitted.content
    assert CaptionRating.objects.filter(score=4).count() == n
    annotator = Annotator.objects.get(kind="crowd")
    assert annotator.external_id == "link:fifa-panel:rita"
    ended = client.get(finish)
    participation = Participation.objects.get()
    assert participation.status == "completed"
    code = links.completion_code(study.pk, participation.work_key, "link:fifa-panel:rita")
    assert code.encode() in ended.content
    # a bad token is refused
    assert (
        client.post(config["submitUrl"].replace("/a/", "/a/x"), {}, content_type="application/json").status_code == 404
    )
    # payments: no hidden QC in projects, so approve-passing reviews and approve-all approves
    [decision] = payments_dry_run("fifa-crowd", "approve-passing")["decisions"]
    assert (decision["action"], decision["qc"]["status"]) == ("review", "insufficient_data")
    assert payments_dry_run("fifa-crowd", "approve-all")["decisions"][0]["action"] == "approve"


class _Addresses(HTMLParser):
    """Every address a page lets its reader follow (a/area href, form action) and every element id."""

    def __init__(self):
        super().__init__()
        self.addresses, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag in ("a", "area") and attrs.get("href") is not None:
            self.addresses.append((tag, attrs["href"]))
        if tag == "form" and attrs.get("action"):
            self.addresses.append((tag, attrs["action"]))


def _addresses(response):
    parsed = _Addresses()
    parsed.feed(response.content.decode())
    return parsed.addresses, parsed.ids


def _followed(client, page_path, address):
    """The participant follows ``address`` of the page at ``page_path`` (GET, redirects followed)."""
    url = urlsplit(urljoin("http://testserver" + page_path, address))
    assert url.netloc == "testserver", f"{address} leaves the site"
    response = client.get(url.path, dict(p.split("=", 1) for p in url.query.split("&") if p), follow=True)
    visited = [url.path] + [hop for hop, _ in response.redirect_chain]
    assert not any("/accounts/login/" in hop for hop in visited), f"{address} leads to the login page: {visited}"
    assert response.status_code == 200, f"{address} answers {response.status_code} (via {visited})"
    return response


def test_every_link_of_the_crowd_annotation_page_works_without_an_account(make_project):  # noqa: F811
    """A crowd participant (no account) on the signed annotation page: every link and form on it (breadcrumbs,
    Instructions, "Save draft and leave", the next step, the site header) answers them 200 or is an anchor of
    the page, never the login page; the instructions are the project's and leaving goes to the crowd's page of
    this participant (the work's own link brings them back). Before, the breadcrumbs, Instructions and "Save
    draft and leave" were the annotators' pages: 302 to the login form."""
    project = make_project(
        name="fact-crowd-links", annotators_per_video=1, instructions="Flag every sentence the video contradicts."
    )
    study = link_study("factuality", project, "fact-links-panel")
    participant = Client()  # no account, no session
    token, started = start_by_link(participant, study, {"pid": "lena"})
    page_path = started["Location"]
    assert page_path.startswith("/factuality/a/")
    page = participant.get(page_path)
    assert page.status_code == 200
    addresses, ids = _addresses(page)
    assert addresses
    for _, address in addresses:
        if address.startswith("#"):
            assert address[1:] in ids, f"{address}: no such anchor on the page"
            continue
        landed = _followed(participant, page_path, address)
        if address.startswith(page_path + "instructions/"):  # the instructions page itself
            assert b"Flag every sentence the video contradicts." in landed.content
            for _, inner in _addresses(landed)[0]:
                if not inner.startswith("#"):
                    _followed(participant, address, inner)
    html = page.content.decode()
    instructions = re.search(r'<a href="([^"]+)"[^>]*>Instructions</a>', html).group(1)
    assert instructions.startswith("/factuality/a/") and instructions.endswith("/instructions/")
    leave = re.search(r'<a class="button button--quiet" id="leave" href="([^"]+)"', html).group(1)
    # the crowd's page for this participant (their work is unfinished: their study page); signed tokens carry the
    # second they were made, so the one the page signed may differ from the test's: compare whom they name
    leave_token = re.fullmatch(r"/crowd/w/([^/]+)/finish/", leave).group(1)
    assert reverse("crowd-finish", args=[leave_token]) == leave
    assert links.participation_id_from_token(leave_token) == links.participation_id_from_token(token)
    assert b"Continue your task" in _followed(participant, page_path, leave).content
    assert 'class="breadcrumbs"' not in html
    # a tampered token shows no instructions
    assert participant.get(instructions.replace("/a/", "/a/x")).status_code == 404


def test_submitted_factuality_work_is_not_released(make_project):  # noqa: F811
    from annotation_site.crowd import admission

    project = make_project(name="fact-crowd", annotators_per_video=1)
    study = link_study("factuality", project, "fact-panel")
    participation = admission.admit(study, {"pid": "sam"})
    participation, work = admission.take_slot(participation)
    assert admission.release(participation, "idle") is True  # untouched: the video goes back
    participation = admission.admit(study, {"pid": "sam"})
    participation, work = admission.take_slot(participation)
    from annotation_site.factuality.models import Assignment

    Assignment.objects.filter(pk=int(work.key)).update(status="submitted")
    Participation.objects.filter(pk=participation.pk).update(status="completed")
    participation.refresh_from_db()
    assert admission.release(participation, "rejected", completed_too=True) is False
    assert Participation.objects.get(pk=participation.pk).status == "completed"


def test_a_broken_crowd_annotation_link_says_what_to_do(client, db):
    """A damaged or unknown signed link of the crowd annotation page and of its instructions answers 404 with the
    shared link-problem page, whose only link is the skip link (the plain 404 page linked to the staff's datasets)."""
    for url in ("/factuality/a/nonsense/", "/factuality/a/nonsense/instructions/"):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 404, url
        assert "This link does not work" in page and "copy the whole link again" in page, url
        assert re.findall(r'<a\b[^>]*href="([^"]*)"', page) == ["#main"], url


def test_starting_in_a_study_of_a_closed_project_is_refused_with_a_page(client, make_project):  # noqa: F811
    """A project closed while its study was still published: pressing Start was a 500 (ProjectClosed escaped the
    adapter), and the place stayed taken."""
    from annotation_site.crowd.models import Study
    from annotation_site.factuality import projects

    project = make_project(name="fact-closing", annotators_per_video=1)
    study = link_study("factuality", project, "fact-closing-panel")
    projects.set_status(project, Project.Status.CLOSED)
    _, started = start_by_link(client, study, {"pid": "late"})
    assert started.status_code < 500
    follow = client.get(started["Location"]) if started.status_code == 302 else started
    assert "There is no task left for you in this study" in follow.content.decode()
    assert Study.objects.get(pk=study.pk).places_taken == 0


def test_the_end_page_gives_the_qc_reason_for_more_hits_only_where_qc_judges_over_several(client, make_project):  # noqa: F811
    """A factuality study allowing 2 HITs told its participants 'your ratings are checked over several HITs':
    factuality projects have no such quality control."""
    project = make_project(name="fifa-more", kind=Project.Kind.RATING, annotators_per_video=1)
    study = link_study("factuality", project, "fifa-more-panel", hits_per_participant=2)
    token, started = start_by_link(client, study, {"pid": "rita"})
    page = client.get(started["Location"]).content.decode()
    config = json.loads(
        re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    answer = {"paragraphs": [{"score": 4}] * len(config["paragraphs"])}
    body = {"submission_uuid": str(uuid.uuid4()), "answer": answer}
    assert client.post(config["submitUrl"], body, content_type="application/json").status_code == 201
    ended = client.get(reverse("crowd-finish", args=[token])).content.decode()
    assert "This study has 1 more HIT for you: please do it too." in ended
    assert "checked over several HITs" not in ended
