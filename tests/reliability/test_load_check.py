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


def test_a_run_whose_participants_ran_out_of_work_says_its_mix_was_not_sustained():
    """A time-bounded run whose participants of one protocol finish their work early has another mix for the rest
    of the run: its throughput and CPU per submission are not of the mix asked for, and the report says so
    (instead of a target verdict for a mix that drifted to the cheapest protocol)."""
    import argparse

    from benchmarks.load import run

    args = argparse.Namespace(participants=40, mix=(("da", 2), ("factuality", 1), ("task", 1)))
    recorder = run.client.Recorder()
    assert run.mix_drift(recorder, args) == []
    recorder.ran_out["task"] = [29.5]  # 1 of 10: not more than a tenth, the end of a run
    assert run.mix_drift(recorder, args) == []
    recorder.ran_out["factuality"] = [21.0, 18.25]
    [line] = run.mix_drift(recorder, args)
    assert line.startswith("2 of 10 factuality participants ran out of work before the run's end (the first after 18.2")
    assert "--videos-each" in line


def test_a_participant_counts_as_out_of_work_only_while_the_run_goes_on():
    import asyncio

    from benchmarks.load import run

    class Done(run.client.Participant):
        async def run_da(self):  # its work is done at once
            pass

    def finish(budget):
        recorder = run.client.Recorder(started=0.0)
        spec = {"protocol": "da", "key": "da0000", "url": "/"}
        participant = Done(spec, "http://127.0.0.1:9", recorder, budget, think=0, retries=0, timeout=1, seed=0)
        asyncio.run(participant.run())
        return recorder.ran_out

    assert list(finish(run.client.Budget(60, 100))) == ["da"]
    assert dict(finish(run.client.Budget(0, 100))) == {}  # the run's time was up: it did not run out of work
    assert dict(finish(run.client.Budget(60, 0))) == {}  # nor its requests
