"""A recording while a payment run sends: the run reads the study's planned rows, then claims and sends them in
batches; a recording between the two may change a planned row (QC changed: an approval is now a rejection, or
the other way round). The run must act on each row as the ledger holds it when claimed, never on its earlier
read: a row Prolific was told to approve while the ledger says reject (or a REJECT sent with the approval's
reason) cannot be taken back."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation_site.crowd import ledger, sending
from annotation_site.crowd.models import LedgerEntry
from annotation_site.crowd.providers.prolific import ProlificProvider

from .conftest import FAILED, PASSED
from .test_payments_prolific import plan_and_record, study_setup  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("was,now", [("approve", "reject"), ("reject", "approve")])
def test_a_decision_changed_between_the_runs_read_and_its_claim_is_never_sent_as_it_was(
    study_setup,  # noqa: F811
    fake_prolific,
    monkeypatch,
    was,
    now,
):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    changed = LedgerEntry.objects.filter(kind="decision", action=was).order_by("pk").first()
    worker = changed.worker_id
    qc = toy.targets["camp"].qc
    key = next(k for k in qc if k.endswith(worker) or worker in k)
    send = ProlificProvider.send

    recorded = []

    def recording_meanwhile(self, decisions, bonuses):
        if decisions and not recorded:  # the run read its planned decisions: a recording changes one before it
            # claims them
            recorded.append(True)
            assert any(e.pk == changed.pk and e.action == was for e in decisions)
            qc[key] = FAILED if now == "reject" else PASSED
            plan_and_record(toy, target, study)
            assert LedgerEntry.objects.get(pk=changed.pk).action == now
        return send(self, decisions, bonuses)

    monkeypatch.setattr(ProlificProvider, "send", recording_meanwhile)
    sending.apply_study(study)
    approved = {s for call in fake_prolific.log("POST", "bulk-approve") for s in call.body["submission_ids"]}
    rejected = {c.path.split("/")[-3] for c in fake_prolific.log("POST", r"/transition/$")}
    changed.refresh_from_db()
    sent = fake_prolific.submissions[changed.submission_id]["status"]
    # never sent as what it no longer is; the same run sends it, as the ledger says, in its second pass
    assert recorded
    assert changed.submission_id not in (approved if now == "reject" else rejected)
    assert changed.submission_id in (rejected if now == "reject" else approved)
    assert changed.state == "confirmed" and changed.action == now
    assert sent == ("REJECTED" if now == "reject" else "APPROVED")
    # and each submission was decided once on the platform
    decided = [s for call in fake_prolific.log("POST", "bulk-approve") for s in call.body["submission_ids"]]
    decided += [c.path.split("/")[-3] for c in fake_prolific.log("POST", r"/transition/$")]
    assert len(decided) == len(set(decided))


def _ledger_statements(queries):
    return [q["sql"] for q in queries if "crowd_ledgerentry" in q["sql"]]


def _locks_in_pk_order(sql):
    """A SELECT that locks ledger rows (FOR UPDATE where the database has it) sorted by primary key alone
    (``ORDER BY 1`` when the primary key is the only column selected)."""
    sql = sql.strip()
    locks = "FOR UPDATE" in sql or not connection.features.has_select_for_update
    order = sql.split("ORDER BY")[-1].split("FOR UPDATE")[0].strip() if "ORDER BY" in sql else ""
    by_pk = order == '"crowd_ledgerentry"."id" ASC' or (
        order == "1 ASC" and sql.startswith('SELECT "crowd_ledgerentry"."id" AS "pk" FROM')
    )
    return sql.upper().startswith("SELECT") and locks and by_pk


def test_a_recording_and_a_claim_lock_ledger_rows_in_the_same_order(study_setup, staff_user):  # noqa: F811
    """A recording updates planned rows and a payment run claims a batch of them at the same time: on PostgreSQL
    each locks rows, and two transactions that lock the same rows in different orders deadlock (one is aborted:
    a 500 on the payments page, or a failed run). The recording locks every planned row of the target in one
    statement sorted by primary key before it changes any, and the claim locks its batch sorted the same way, so
    one simply waits for the other. Checked on the statements sent (a deadlock cannot be caused on demand without
    timing), on every database: on SQLite, which locks the whole file, the order is the same, without FOR UPDATE."""
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    qc = toy.targets["camp"].qc
    for key in [k for k, v in qc.items() if v == PASSED][:2]:
        qc[key] = FAILED  # two approvals (and their bonuses) change: the recording updates and deletes rows
    with CaptureQueriesContext(connection) as recording:
        plan_and_record(toy, target, study)
    statements = _ledger_statements(recording.captured_queries)
    writes = [i for i, sql in enumerate(statements) if sql.lstrip().upper().startswith(("UPDATE", "DELETE"))]
    assert writes, statements
    locked = [i for i, sql in enumerate(statements) if _locks_in_pk_order(sql) and '"state"' in sql]
    assert locked and locked[0] < writes[0], statements  # every planned row locked, in pk order, before any write

    planned = list(LedgerEntry.objects.filter(state="planned").order_by("-pk"))  # handed over in another order
    with CaptureQueriesContext(connection) as claiming:
        claimed = ledger.claim(planned)
    assert [r.pk for r in claimed] == sorted(e.pk for e in planned)
    lock = [sql for sql in _ledger_statements(claiming.captured_queries) if sql.lstrip().upper().startswith("SELECT")]
    assert _locks_in_pk_order(lock[0]), lock


def _decided_on_the_platform(fake_prolific):
    """Submission ids of every approval and transition the fake platform answered, once per call."""
    decided = [s for call in fake_prolific.log("POST", "bulk-approve") for s in call.body["submission_ids"]]
    return decided + [c.path.split("/")[-3] for c in fake_prolific.log("POST", r"/transition/$")]


def _approval_changed_back_during_the_run(setup, monkeypatch):
    """Prolific's send patched so that during a run an approval is changed to a rejection while the first pass
    sends, and back to an approval while the second pass sends the rejection (each a recording). Returns the
    study, that row, the passes' (pk, action) lists as the run makes them, and the unpatched send."""
    toy, target, study = setup
    plan_and_record(toy, target, study)
    changed = LedgerEntry.objects.filter(kind="decision", action="approve").order_by("pk").first()
    qc = toy.targets["camp"].qc
    key = next(k for k in qc if k.endswith(changed.worker_id) or changed.worker_id in k)
    send = ProlificProvider.send
    passes = []

    def recording_meanwhile(self, decisions, bonuses):
        if decisions:
            passes.append([(e.pk, e.action) for e in decisions])
            if len(passes) <= 2:  # first pass: to a rejection; second pass (sending it): back to an approval
                qc[key] = FAILED if len(passes) == 1 else PASSED
                plan_and_record(toy, target, study)
        return send(self, decisions, bonuses)

    monkeypatch.setattr(ProlificProvider, "send", recording_meanwhile)
    return study, changed, passes, send


def test_a_decision_changed_back_during_the_run_waits_and_is_then_sent_once(
    study_setup,  # noqa: F811
    fake_prolific,
    monkeypatch,
):
    """approve -> reject during the first pass, then back to approve while the second pass sends the rejection:
    the run has already tried the row as an approval, so it leaves it planned (a run does not try a row twice as
    it is); the next run approves it, once."""
    study, changed, passes, send = _approval_changed_back_during_the_run(study_setup, monkeypatch)
    result = sending.apply_study(study)
    assert len(passes) == 2 and passes[1] == [(changed.pk, "reject")]
    changed.refresh_from_db()
    assert changed.state == "planned" and changed.action == "approve"
    assert changed.submission_id not in _decided_on_the_platform(fake_prolific)
    assert result["pending"] == 1  # the run says it left a row to send (the task sends it a moment later)

    monkeypatch.setattr(ProlificProvider, "send", send)
    sending.apply_study(study)
    changed.refresh_from_db()
    assert changed.state == "confirmed" and fake_prolific.submissions[changed.submission_id]["status"] == "APPROVED"
    decided = _decided_on_the_platform(fake_prolific)
    assert decided.count(changed.submission_id) == 1 and len(decided) == len(set(decided))


def test_a_run_that_lost_its_lease_sends_nothing_more(study_setup, fake_prolific, monkeypatch):  # noqa: F811
    """A send outlasts the lease and another run takes it over: this run stops (no bonuses, no further pass);
    the lease holder sends the rest, each once."""
    from annotation_site.crowd.models import Study

    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    send = ProlificProvider.send
    calls = []

    def lease_taken_meanwhile(self, decisions, bonuses):
        calls.append((len(decisions), len(bonuses)))
        out = send(self, decisions, bonuses)
        Study.objects.filter(pk=study.pk).update(payments_lease_token="another-run")
        return out

    monkeypatch.setattr(ProlificProvider, "send", lease_taken_meanwhile)
    sending.apply_study(study)
    assert calls and calls == [(calls[0][0], 0)]  # the decisions only
    assert not LedgerEntry.objects.filter(kind="bonus").exclude(state="planned").exists()
    assert not fake_prolific.paid()

    monkeypatch.setattr(ProlificProvider, "send", send)
    Study.objects.filter(pk=study.pk).update(payments_lease_token="", payments_lease_until=None)  # (it ended)
    sending.apply_study(study)
    assert not LedgerEntry.objects.exclude(state="confirmed").exists()
    assert all(len(cents) == 1 for cents in fake_prolific.paid().values()) and fake_prolific.paid()


def test_a_run_that_sent_everything_leaves_nothing_pending(study_setup, fake_prolific):  # noqa: F811
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    result = sending.apply_study(study)
    assert result["pending"] == 0 and not LedgerEntry.objects.exclude(state="confirmed").exists()


class _Retried(Exception):
    pass


def _run_task_once(study, job, monkeypatch, **tries):
    """One run of the payment task as a worker runs it (not eager); returns its result, or the keyword arguments
    of the retry it asked for (``_Retried``)."""
    from annotation_site.crowd.tasks import apply_payments

    def retry(**kwargs):
        raise _Retried(kwargs)

    monkeypatch.setattr(apply_payments, "retry", retry)
    apply_payments.push_request(retries=sum(tries.values()), is_eager=False)
    try:
        return apply_payments.run(study.pk, str(job.pk), **tries)
    except _Retried as asked:
        return asked.args[0]
    finally:
        apply_payments.pop_request()


def test_a_decision_recorded_during_the_last_pass_is_sent_by_the_task_a_moment_later(
    study_setup,  # noqa: F811
    fake_prolific,
    monkeypatch,
):
    """A recording changes a decision while the run's last pass sends: the run leaves it planned (it already
    tried it, or has no pass left). Before, the task ended "succeeded" and the row waited, planned, until a person
    sent the payments again; now the task says so and runs again a few seconds later, which sends it once."""
    from annotation_site.crowd.tasks import PENDING_COUNTDOWN
    from annotation_site.jobs import services as jobs
    from annotation_site.jobs.models import Job

    study, changed, passes, send = _approval_changed_back_during_the_run(study_setup, monkeypatch)
    assert passes == []
    job = jobs.create_job("crowd-payments", scope=f"crowd-study:{study.pk}", total=1)
    retry = _run_task_once(study, job, monkeypatch)
    changed.refresh_from_db()
    assert changed.state == "planned" and changed.action == "approve"
    assert retry["countdown"] == PENDING_COUNTDOWN, retry
    assert (retry["kwargs"]["pending_tries"], retry["kwargs"]["unsettled_tries"]) == (1, 0), retry
    job.refresh_from_db()
    assert "1 planned row(s) not sent by this run" in job.message and "sending them in a moment" in job.message

    monkeypatch.setattr(ProlificProvider, "send", send)
    result = _run_task_once(study, job, monkeypatch, pending_tries=1)  # the retry
    assert result["pending"] == 0 and result["unsettled"] == 0, result
    changed.refresh_from_db()
    assert changed.state == "confirmed" and fake_prolific.submissions[changed.submission_id]["status"] == "APPROVED"
    decided = _decided_on_the_platform(fake_prolific)
    assert decided.count(changed.submission_id) == 1 and len(decided) == len(set(decided))
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and "not sent yet" not in job.message


def test_rows_left_planned_while_others_wait_for_the_platform_keep_the_platform_s_backoff(
    study_setup,  # noqa: F811
    fake_prolific,
    monkeypatch,
):
    """Pending rows and rows the platform has not settled at once: the retry keeps the backoff of the platform
    checks (asking Prolific again after 5 s would mark a batch it pays within minutes in doubt too early) and
    counts as one of their tries; that run sends the pending rows too. Rows only pending have their own count."""
    from annotation_site.crowd.tasks import PENDING_COUNTDOWN, PENDING_RETRIES
    from annotation_site.jobs import services as jobs
    from annotation_site.jobs.models import Job

    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    job = jobs.create_job("crowd-payments", scope=f"crowd-study:{study.pk}", total=1)
    outcome = {"busy": False, "states": sending.summary(study)["states"], "unsettled": 2, "pending": 1}
    monkeypatch.setattr(sending, "apply_study", lambda study: dict(outcome))
    retry = _run_task_once(study, job, monkeypatch, unsettled_tries=3)
    assert retry["countdown"] == 60 * 2**3 and retry["kwargs"]["unsettled_tries"] == 4, retry
    assert retry["kwargs"]["pending_tries"] == 0
    job.refresh_from_db()
    assert "1 planned row(s) not sent by this run" in job.message
    assert "sending them with the next check of the platform" in job.message, job.message

    outcome["unsettled"] = 0
    retry = _run_task_once(study, job, monkeypatch, unsettled_tries=4, pending_tries=2)
    assert retry["countdown"] == PENDING_COUNTDOWN and retry["kwargs"] == dict(
        job_id=str(job.pk), unsettled_tries=4, pending_tries=3
    )
    result = _run_task_once(study, job, monkeypatch, pending_tries=PENDING_RETRIES)
    assert result["pending"] == 1  # no retry: it says so instead
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and f"stopped after {PENDING_RETRIES} runs" in job.error
    assert "1 planned row(s) wait" in job.error
