"""Recording a target's payment decisions twice: a double click on the payments page ("Record as planned" /
"Record and send"), two staff members at once, an API call retried after a dropped connection, or
``crowd_payments`` while the page records. Every entry point goes through ``payments.record``: each ledger row
is stored once, and the second recording is answered with what the ledger holds ("already recorded"), never a
server error. Two recordings at once met the ledger's unique constraint on PostgreSQL (an IntegrityError, a
500 for the second person) because both checked the ledger before either wrote to it.

The race runs on the real database in threads (PostgreSQL, or an SQLite file as in production): the first
recording is held right before its first INSERT into the ledger, after every check, until the second is seen
waiting for it: on PostgreSQL another backend of the test database waiting on a lock (``pg_stat_activity``),
on SQLite the second inside ``payments.decide_and_record`` (where its IMMEDIATE transaction waits for the
file's write lock). Never a fixed delay: on a loaded machine the second may take seconds to get there, and a test that
gave up waiting passed with the lock removed."""

import threading
import time
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotation_site.crowd import adapters, payments
from annotation_site.crowd.models import LedgerEntry

from ..factuality.conftest import in_thread, race, thread_database

pytestmark = pytest.mark.django_db
ENTRIES = ["page", "api", "command"]
WAIT_SECONDS = 30  # how long the first recording waits to see the second waiting (a failure, not a pass, after)
# camp-7 under the study's settings (approve-passing, 0.40 per passing HIT): w-pass approved with a bonus,
# w-fail rejected; w-short and w-busy are for review (no rows)
EXPECTED = [("approve", None), ("bonus", Decimal("0.40")), ("reject", None)]


def _ledger():
    return sorted((action, amount) for action, amount in LedgerEntry.objects.values_list("action", "amount"))


def _page_digest():
    adapter, target = adapters.resolve("toy", "camp-7")
    study = payments.provider_study(target)
    return payments.decisions_digest(
        payments.preview(
            adapter,
            target,
            policy=study.policy,
            bonus_scope=study.bonus_scope,
            bonus_amount=study.bonus_amount,
            study=study,
        )
    )


def _clicker(entry, user, seen):
    """A person about to record camp-7's decisions through ``entry`` (logged in already); calling the result
    records and returns what they are told: the page's text after the redirect, the API's body, the command's
    message."""
    if entry == "command":

        def run_command():
            err = StringIO()
            call_command("crowd_payments", "--campaign", "camp-7", stdout=StringIO(), stderr=err)
            return err.getvalue()

        return run_command
    client = Client()
    client.force_login(user)
    if entry == "page":
        url = reverse("crowd-payments", args=["toy", "camp-7"])
        form = {
            "policy": "approve-passing",
            "bonus_scope": "per-passing-hit",
            "bonus_amount": "0.40",
            "confirm": "yes",
            "send": "no",
            "seen": seen,
        }

        def click():
            response = client.post(url, form, follow=True)
            assert response.status_code == 200
            return response.content.decode()

        return click

    def call_api():
        response = client.post(reverse("api-crowd-payments"), {"campaign": "camp-7"}, content_type="application/json")
        assert response.status_code == 201, response.content
        return response.json()

    return call_api


class HoldFirstLedgerInsert:
    """A connection wrapper: the first INSERT into the ledger waits (every check of its recording is done, nothing
    is written yet) until the second recording is seen waiting for it (``second_waiting_seen``), at most
    WAIT_SECONDS: on PostgreSQL another backend of this database waiting on a lock; on SQLite the second inside
    ``payments.decide_and_record`` (``second_entered``, set by ``watch_second``). Then it goes on, and
    ``second_finished_meanwhile`` says whether the second had finished without waiting (it must not have)."""

    def __init__(self):
        self.reached = threading.Event()
        self.second_entered = threading.Event()
        self.second_done = threading.Event()
        self.held = False
        self.second_waiting_seen = None
        self.second_finished_meanwhile = None

    def watch_second(self, monkeypatch):
        """Sets ``second_entered`` when a recording starts (``payments.decide_and_record``, the entry points' one
        way to record) after the held one reached its hold: it then waits for the database's write lock."""
        record, held = payments.decide_and_record, self

        def watched(*args, **kwargs):
            if held.reached.is_set():
                held.second_entered.set()
            return record(*args, **kwargs)

        monkeypatch.setattr(payments, "decide_and_record", watched)

    def _second_waiting(self):
        if connection.vendor != "postgresql":
            return self.second_entered.wait(timeout=WAIT_SECONDS)
        deadline = time.monotonic() + WAIT_SECONDS
        with connection.cursor() as cursor:  # this connection is the held one's (the wrapper lets it through)
            while time.monotonic() < deadline:
                # inside a transaction pg_stat_activity is a snapshot taken at its first read: take a new one
                cursor.execute("SELECT pg_stat_clear_snapshot()")
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND pid <> pg_backend_pid() AND datname = current_database()"
                )
                if cursor.fetchone()[0]:
                    return True
                if self.second_done.is_set():  # it finished without ever waiting for this recording
                    return False
                time.sleep(0.02)
        return False

    def __call__(self, execute, sql, params, many, context):
        if not self.held and sql.lstrip().upper().startswith("INSERT") and "crowd_ledgerentry" in sql:
            self.held = True
            self.reached.set()
            self.second_waiting_seen = self._second_waiting()
            self.second_finished_meanwhile = self.second_done.is_set()
        return execute(sql, params, many, context)


def _said_recorded(entry, answer, rows):
    if entry == "api":
        return answer["recorded"] == rows and answer["already_recorded"] == 0
    return f"{rows} ledger row(s) recorded as planned" in answer


def _said_already_recorded(entry, answer, rows):
    if entry == "api":
        return answer["recorded"] == 0 and answer["already_recorded"] == rows
    return "already recorded" in answer and f"{rows} ledger row(s)" in answer


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "entry,recorded_before",
    [("page", False), ("api", False), ("command", False), ("page", True)],
    ids=["page", "api", "command", "page-target-recorded-before"],
)
def test_two_recordings_at_once_store_every_row_once_and_both_are_answered(
    toy_campaign, staff_user, monkeypatch, entry, recorded_before
):
    """``recorded_before``: the target's lock row exists (an earlier recording, of nothing here); otherwise both
    recordings are the target's first and create it at once."""
    if recorded_before:
        target, _ = toy_campaign
        adapter, _ = adapters.resolve("toy", "camp-7")
        outcome = payments.record(target, payments.preview(adapter, target, policy="review"), policy="review")
        assert outcome.written == 0 and not LedgerEntry.objects.exists()
    seen = _page_digest()
    hold = HoldFirstLedgerInsert()
    hold.watch_second(monkeypatch)

    def record(ready, role):
        click = _clicker(entry, staff_user, seen)  # logged in before the race (a session is a write)
        ready()
        if role == "first":
            with connection.execute_wrapper(hold):
                return click()
        assert hold.reached.wait(timeout=30), "the first recording never reached the ledger"
        try:
            return click()
        finally:
            hold.second_done.set()

    with thread_database() as use:
        (first, second), errors = race(record, [("first",), ("second",)], use=use)
        ledger = in_thread(use, _ledger)
    assert not errors, errors  # on PostgreSQL the first met the second's rows: IntegrityError (a 500)
    assert hold.second_waiting_seen is True  # the second was seen waiting for the held first recording
    assert hold.second_finished_meanwhile is False  # it did not finish meanwhile: recordings are serialised
    assert ledger == EXPECTED  # every decision and bonus once
    assert _said_recorded(entry, first, 3), first
    assert _said_already_recorded(entry, second, 3), second


@pytest.mark.parametrize("entry", ENTRIES)
def test_recording_again_answers_already_recorded_and_changes_nothing(
    toy_campaign, staff_user, django_user_model, entry
):
    """A second click (a retry, a reload that sends the form again, another staff member) after the first one
    committed: the rows stay as the first recording wrote them (who recorded them, their idempotency tokens) and
    the person is told the decisions were recorded already, not "3 rows recorded" as if it had written them."""
    seen = _page_digest()
    assert _said_recorded(entry, _clicker(entry, staff_user, seen)(), 3)
    before = sorted(LedgerEntry.objects.values_list("pk", "request_token", "created_by", "state", "amount"))
    other = django_user_model.objects.create_user("second-researcher", "s@example.org", "pw-second-1", is_staff=True)
    again = _clicker(entry, other, seen)()
    assert _said_already_recorded(entry, again, 3), again
    assert sorted(LedgerEntry.objects.values_list("pk", "request_token", "created_by", "state", "amount")) == before


def test_a_changed_decision_is_still_brought_up_to_date(toy_campaign, staff_user):
    """Recording again after QC changed updates the planned rows (and only then counts them as recorded)."""
    from .conftest import PASSED

    target, _ = toy_campaign
    adapter, _ = adapters.resolve("toy", "camp-7")

    def record():
        study = payments.provider_study(target)
        decisions = payments.preview(
            adapter, target, policy=study.policy, bonus_scope=study.bonus_scope, bonus_amount=study.bonus_amount
        )
        return payments.record(target, decisions, policy=study.policy, user=staff_user)

    assert record().written == 3
    worker = next(k for k in adapter.targets["camp-7"].qc if k.endswith("w-fail"))
    adapter.targets["camp-7"].qc[worker] = PASSED  # w-fail's QC result changed: approve and bonus now
    outcome = record()
    assert (outcome.created, outcome.updated, outcome.removed, outcome.already) == (1, 1, 0, 2)
    assert _ledger() == [("approve", None), ("approve", None), ("bonus", Decimal("0.40")), ("bonus", Decimal("0.40"))]


def test_a_bonus_a_payment_run_claims_while_recording_is_never_deleted(toy_campaign, staff_user):
    """Recording without the bonus removes a planned bonus row; a payment run that claimed the row (planned ->
    sent) between the recording's read and its DELETE has sent it to the platform, so the row must stay: it was
    deleted by primary key, and a later recording would have planned, and paid, that bonus again."""
    target, _ = toy_campaign
    adapter, _ = adapters.resolve("toy", "camp-7")
    planned = payments.preview(
        adapter, target, policy="approve-passing", bonus_scope="per-passing-hit", bonus_amount=Decimal("0.40")
    )
    payments.record(target, planned, policy="approve-passing", user=staff_user)
    bonus = LedgerEntry.objects.get(kind=LedgerEntry.Kind.BONUS)
    without_bonus = payments.preview(adapter, target, policy="approve-passing", bonus_scope="none")

    def claim_before_delete(execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("DELETE") and '"id"' in sql and bonus.pk in (params or ()):
            with connection.cursor() as cursor:  # the payment run's claim (ledger.claim's conditional UPDATE)
                cursor.execute("UPDATE crowd_ledgerentry SET state = 'sent' WHERE id = %s", [bonus.pk])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(claim_before_delete):
        payments.record(target, without_bonus, policy="approve-passing", user=staff_user)
    assert LedgerEntry.objects.filter(pk=bonus.pk, state="sent").exists()


def test_recording_reads_the_ledger_once(toy_campaign, staff_user, django_assert_max_num_queries):
    """Recording again (every row already there) locks the target's planned rows in one statement and reads its
    ledger in one query under the lock, and writes nothing: not one statement per assignment."""
    target, study = toy_campaign
    adapter, _ = adapters.resolve("toy", "camp-7")
    decisions = payments.preview(
        adapter, target, policy=study.policy, bonus_scope=study.bonus_scope, bonus_amount=study.bonus_amount
    )
    payments.record(target, decisions, policy=study.policy, user=staff_user)
    with django_assert_max_num_queries(5):  # savepoint, the lock, the planned rows locked, the ledger, release
        outcome = payments.record(target, decisions, policy=study.policy, user=staff_user)
    assert outcome.written == 0 and outcome.already == 3


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_change_to_a_row_sent_meanwhile_is_reported_not_changed_never_already_recorded(
    toy_campaign, staff_user, monkeypatch, entry
):
    """QC changed (w-pass now fails: its approval should become a rejection, its bonus go) and a person records
    again, but a payment run claimed w-pass's rows after the preview: they went to the platform with their earlier
    decision, and the recording leaves them. The person must be told that their change did not happen (which
    assignments, how many), not "already recorded; nothing changed"."""
    from annotation_site.crowd import ledger

    from .conftest import FAILED

    target, _ = toy_campaign
    adapter, _ = adapters.resolve("toy", "camp-7")
    assert _said_recorded(entry, _clicker(entry, staff_user, _page_digest())(), 3)
    qc = adapter.targets["camp-7"].qc
    key = next(k for k in qc if k.endswith("w-pass"))
    qc[key] = FAILED
    sent = list(LedgerEntry.objects.filter(worker_id__endswith="w-pass"))
    assert len(sent) == 2  # the approval and its bonus
    assignment = sent[0].assignment_key
    record = payments._record_locked  # what every entry point's recording runs, under the ledger's lock

    def run_claims_first(*args, **kwargs):  # after the entry point's preview, before its recording
        ledger.claim(sent)
        return record(*args, **kwargs)

    monkeypatch.setattr(payments, "_record_locked", run_claims_first)
    answer = _clicker(entry, staff_user, _page_digest())()
    assert sorted(LedgerEntry.objects.filter(pk__in=[e.pk for e in sent]).values_list("action", "state")) == [
        ("approve", "sent"),
        ("bonus", "sent"),
    ]
    if entry == "api":
        assert answer["not_changed"] == [assignment] and answer["recorded"] == 0, answer
        assert answer["kept"] == [], answer
    else:
        assert "These decisions were already recorded" not in answer and "nothing changed" not in answer, answer
        assert "1 assignment(s) were sent to the platform meanwhile" in answer, answer
        assert f"as you asked ({assignment})" in answer, answer
        assert "NOT changed" in answer


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_recording_that_waited_decides_from_the_qc_of_now_not_from_before(
    toy_campaign, staff_user, monkeypatch, entry
):
    """A person records camp-7's decisions (w-fail failed QC: reject) but waits for the ledger's lock behind
    another recording, made after w-fail's QC result changed to passed (approve, with its bonus). When the
    first gets the lock it must not record its older decisions over the newer ones: it decides again under the
    lock (the API and the command record the QC of now; the page, whose shown decisions no longer match, records
    nothing and says so)."""
    from .conftest import PASSED

    target, study = toy_campaign
    adapter, _ = adapters.resolve("toy", "camp-7")
    seen = _page_digest()
    qc = adapter.targets["camp-7"].qc
    key = next(k for k in qc if k.endswith("w-fail"))
    lock, state = payments._lock_ledger, {"waited": False}

    def another_recording_first(target):  # the lock was held by a newer recording, which commits first
        if not state["waited"]:
            state["waited"] = True
            qc[key] = PASSED
            newer = payments.preview(
                adapter, target, policy=study.policy, bonus_scope=study.bonus_scope, bonus_amount=study.bonus_amount
            )
            payments.record(target, newer, policy=study.policy, user=staff_user)
        return lock(target)

    monkeypatch.setattr(payments, "_lock_ledger", another_recording_first)
    answer = _clicker(entry, staff_user, seen)()
    assert state["waited"]
    decided = {w: a for w, a in LedgerEntry.objects.filter(kind="decision").values_list("worker_id", "action")}
    w_fail = [a for w, a in decided.items() if w.endswith("w-fail")]
    if entry == "page":
        # nothing recorded by the page (here the newer recording, made inside the page's transaction by this
        # test's hook, is rolled back with it): above all, never the older rejection
        assert "The decisions changed since this page was shown" in answer
        assert w_fail in ([], ["approve"]), (decided, answer)
    else:
        assert w_fail == ["approve"], (decided, answer)
        assert LedgerEntry.objects.filter(kind="bonus").count() == 2
