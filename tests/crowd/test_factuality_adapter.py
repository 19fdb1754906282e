"""Factuality / rating projects plugged into crowd work: a crowd participant enters by a link study, takes a
video (Start), annotates on the signed annotation page (no account; draft and submit by token), ends on the
crowd's end page with a completion code; the payment decisions know projects have no hidden QC."""

import json
import re
import uuid

import pytest
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
