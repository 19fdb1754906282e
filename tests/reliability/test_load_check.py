"""The load benchmark's own parts, so that its "nothing lost" can be trusted: the work it sets up is workable through
the platform's services, and the database check finds a lost acknowledgment, a submission no client sent and a
wrong score (a check that always says OK would make every load and fault figure meaningless)."""

import uuid

import pytest

from benchmarks.load import client, verify, work

pytestmark = pytest.mark.django_db


@pytest.fixture
def made():
    return work.make_work(
        "check", work.Plan(participants=4, mix=(("da", 2), ("factuality", 1), ("task", 1)), videos_each=2, items_each=2)
    )


def submit_da(made, index, score):
    from assessment import services

    spec = [p for p in made["participants"] if p["protocol"] == "da"][index]
    assignment = services.assignment_from_token(spec["url"].split("/")[3])
    key = uuid.uuid4()
    item = services.next_item(assignment)
    services.submit(assignment, item_id=item.pk, score=score, client_uuid=key, played=True)
    return str(key), item.pk


def test_the_work_is_made_for_every_protocol_and_removed_again(made):
    from annotation_site.corpus.models import Dataset

    assert [p["protocol"] for p in made["participants"]] == ["da", "da", "factuality", "task"]
    assert {"campaign", "project", "task"} <= set(made)
    work.remove(made)
    assert not Dataset.objects.filter(name=made["name"]).exists()


def test_the_check_passes_when_what_was_acknowledged_is_what_is_stored(made):
    recorder = client.Recorder()
    for index, score in ((0, 10), (1, 90)):
        key, item = submit_da(made, index, score)
        recorder.sent["da"].add(key)
        recorder.acked["da"][key] = {"item": item, "score": score}
    report = verify.verify(made, recorder)
    assert report["da"]["ok"] and report["da"]["acknowledged"] == report["da"]["stored"] == 2


def test_the_check_finds_lost_invented_and_altered_submissions(made):
    recorder = client.Recorder()
    key, item = submit_da(made, 0, 40)
    recorder.sent["da"].add(key)
    recorder.acked["da"][key] = {"item": item, "score": 41}  # the client was told 40 was stored as 41
    lost = str(uuid.uuid4())
    recorder.sent["da"].add(lost)
    recorder.acked["da"][lost] = {"item": item, "score": 1}  # acknowledged, never stored
    submit_da(made, 1, 50)  # stored, but no client sent it
    report = verify.verify(made, recorder)["da"]
    assert not report["ok"]
    assert report["n_lost"] == 1 and report["lost"] == [lost]
    assert len(report["unexpected"]) == 1
    assert report["wrong_score"] == [key]


def test_percentiles_are_nearest_rank():
    values = list(range(1, 101))
    assert (client.percentile(values, 50), client.percentile(values, 95), client.percentile(values, 99)) == (50, 95, 99)
    assert client.percentile([7], 99) == 7
