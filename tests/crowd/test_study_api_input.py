"""The study actions of the REST API read what they are sent strictly: a body that is not a JSON object, counts
that are not whole numbers in range, participant ids that are not a list of ids are answered 400 saying what is
expected, never a 500, and nothing is changed (issue #11, "every ... JSON endpoint")."""

import pytest
from django.urls import reverse

from annotation_site.crowd.models import Participant, ParticipantLink, Study

pytestmark = pytest.mark.django_db


def act(client, action, body):
    return client.post(
        reverse("api-crowd-study-action", args=["camp-7-panel", action]), body, content_type="application/json"
    )


@pytest.mark.parametrize(
    "action,body",
    [
        ("places", []),
        ("places", "7"),
        ("places", {"add": None}),
        ("places", {"add": "\uff15"}),
        ("places", {"add": 2.5}),
        ("places", {"add": True}),
        ("places", {"add": 10**12}),
        ("links", {"participant_ids": ["p1"], "days": None}),
        ("links", {"participant_ids": ["p1"], "days": 10**12}),
        ("links", {"participant_ids": ["p1"], "days": 1e308}),
        ("links", {"participant_ids": ["p1"], "max_hits": [1]}),
        ("links", {"participant_ids": 5}),
        ("links", {"participant_ids": "p1"}),
        ("links", {"participant_ids": [{"id": "p1"}]}),
        ("block", {"participant_ids": 5}),
        ("block", {"participant_ids": ["x" * 5000]}),
        ("block", {"participant_ids": ["p\u200b1"]}),
        ("block", {"participant_ids": [None]}),
    ],
)
def test_study_actions_refuse_what_they_cannot_use(client, staff_user, toy_campaign, action, body):
    client.force_login(staff_user)
    client.raise_request_exception = False
    places = Study.objects.get(name="camp-7-panel").places
    participants = Participant.objects.count()
    answer = act(client, action, body)
    assert answer.status_code == 400, (answer.status_code, answer.content[:300])
    assert answer.json()["detail"]
    assert Study.objects.get(name="camp-7-panel").places == places
    assert Participant.objects.count() == participants and not ParticipantLink.objects.exists()


def test_study_actions_take_numbers_as_json_numbers_or_digits(client, staff_user, toy_campaign):
    client.force_login(staff_user)
    before = Study.objects.get(name="camp-7-panel")
    assert act(client, "places", {"add": 3}).status_code == 200
    assert act(client, "places", {"add": "2"}).status_code == 200
    assert Study.objects.get(pk=before.pk).places == (before.places or 5) + 5
    made = act(client, "links", {"participant_ids": ["p1", 42], "days": "3", "max_hits": 2})
    assert made.status_code == 201 and len(made.json()["links"]) == 2
    blocked = act(client, "block", {"participant_ids": ["w-pass"], "reason": "test"})
    assert blocked.status_code == 200 and blocked.json()["blocked"] == 1


def test_study_command_refuses_counts_out_of_range(toy_campaign):
    from django.core.management import CommandError

    from .test_commands_api import run

    for args in (["places", "--add", "10000000000"], ["links", "--participants", "p1", "--days", "x"]):
        with pytest.raises(CommandError, match="must be a whole number from 1 to"):
            run("crowd_study", *args, "--name", "camp-7-panel")
    assert not ParticipantLink.objects.exists()
