"""Playback and late drafts on the server (issue #9, items 3 and 4): the real time played is stored, cut to the
server's clock; an answer for a video that was never played needs confirmation; a draft written by a page that
predates the current submission is refused, so a late autosave never shadows a submitted answer."""

import json
import re
import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.models import Assignment, Submission

from .conftest import answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(client, make_project, annotator_accounts):
    [annotator] = annotator_accounts(1)
    project = make_project(annotators=[annotator], videos=["v1", "v2"])
    client.force_login(annotator.user)
    found = next_assignment(project, annotator)
    return client, found, presented_captions(found)


def post_json(client, url, data, method="post"):
    return getattr(client, method)(url, json.dumps(data), content_type="application/json")


def test_an_unplayed_video_needs_confirmation(started):
    client, found, presented = started
    url = reverse("api-factuality-submit", args=[found.pk])
    body = {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer(presented, [5, 4, 3]),
        "video_played": False,
        "watched_seconds": 0,
    }
    refused = post_json(client, url, body)
    assert refused.status_code == 409 and refused.json()["needs_confirmation"] is True
    assert [p["code"] for p in refused.json()["problems"]] == ["video_not_played"]
    assert not Submission.objects.exists()
    confirmed = post_json(client, url, dict(body, confirm=True))
    assert confirmed.status_code == 201
    submission = Submission.objects.get()
    assert submission.video_played is False and submission.watched_seconds == 0 and submission.confirmed_incomplete


def test_the_time_played_is_stored_and_cut_to_the_servers_clock(started):
    client, found, presented = started
    handed_out = timezone.now() - timedelta(seconds=20)
    Assignment.objects.filter(pk=found.pk).update(created_at=handed_out)
    url = reverse("api-factuality-submit", args=[found.pk])
    # the page says it played 300 s, but the video was handed out 20 s ago; and "played" without any playback
    body = {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer(presented, [5, 4, 3]),
        "video_played": True,
        "watched_seconds": 300,
    }
    assert post_json(client, url, body).status_code == 201
    # cut to the time since it was handed out, plus the server's 1 s of slack (measured, not assumed to be < 1 s)
    bound = (timezone.now() - handed_out).total_seconds() + 1.0
    submission = Submission.objects.get()
    assert 20 <= submission.watched_seconds <= bound and submission.video_played is True
    body = {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer(presented, [5, 4, 3]),
        "video_played": True,
        "watched_seconds": 0,
    }
    assert post_json(client, url, body).status_code == 409  # played, it says, but nothing played: confirm first
    # an API client that measures nothing keeps its own statement (embeds, imports)
    body = {"submission_uuid": str(uuid.uuid4()), "answer": answer(presented, [5, 4, 3]), "video_played": True}
    assert post_json(client, url, body).status_code == 201
    latest = Submission.objects.get(is_current=True)
    assert latest.video_played is True and latest.watched_seconds is None


def test_a_late_draft_of_a_submitted_page_is_refused(started):
    client, found, presented = started
    draft_url = reverse("api-factuality-draft", args=[found.pk])
    page_draft = {
        "answer": {"paragraphs": []},
        "time_spent": 3.0,
        "video_played": True,
        "watched_seconds": 2.5,
        "based_on": None,
    }
    assert post_json(client, draft_url, page_draft, method="put").status_code == 200
    Assignment.objects.filter(pk=found.pk).update(created_at=timezone.now() - timedelta(minutes=1))
    found.refresh_from_db()
    assert found.draft["watched_seconds"] == 2.5
    submitted = str(uuid.uuid4())
    assert (
        post_json(
            client,
            reverse("api-factuality-submit", args=[found.pk]),
            {
                "submission_uuid": submitted,
                "answer": answer(presented, [5, 4, 3]),
                "video_played": True,
                "watched_seconds": 4,
            },
        ).status_code
        == 201
    )
    late = post_json(client, draft_url, page_draft, method="put")  # the autosave of the page that just submitted
    assert late.status_code == 409 and late.json()["stale"] is True
    found.refresh_from_db()
    assert found.draft is None and found.status == "submitted"
    # the page of the submitted video, opened again, bases its drafts on that submission
    page = client.get(reverse("factuality-annotate", args=[found.pk])).content.decode()
    assert f'"basedOn": "{submitted}"' in page
    assert post_json(client, draft_url, dict(page_draft, based_on=submitted), method="put").status_code == 200


def page_config(client, found):
    page = client.get(reverse("factuality-annotate", args=[found.pk])).content.decode()
    return json.loads(
        re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S)[1]
    )


def test_the_page_names_the_version_of_the_draft_it_rendered(started):
    """The page keeps an answer in the tab until a save of it is acknowledged, and restores it over the draft it
    rendered only when that draft is the version its last acknowledged save answered (static/js/
    annotation-session.js, DraftKeeper): the page's ``draftVersion`` and the draft endpoint's ``saved_at`` are
    the same string for the same save, by the server's clock."""
    client, found, presented = started
    draft_url = reverse("api-factuality-draft", args=[found.pk])
    assert page_config(client, found)["draftVersion"] is None  # no draft yet
    versions = []
    for score in (4, 2):
        body = {"answer": answer(presented, [score, None, None]), "time_spent": 1.0, "based_on": None}
        saved = post_json(client, draft_url, body, method="put")
        assert saved.status_code == 200
        versions.append(saved.json()["saved_at"])
        config = page_config(client, found)
        assert config["draftVersion"] == versions[-1] and config["state"]["source"] == "draft"
    assert versions[0] != versions[1]
    submitted = post_json(
        client,
        reverse("api-factuality-submit", args=[found.pk]),
        {"submission_uuid": str(uuid.uuid4()), "answer": answer(presented, [5, 4, 3]), "confirm": True},
    )
    assert submitted.status_code == 201
    assert page_config(client, found)["draftVersion"] is None  # a submit ends the draft
