"""Celery tasks of crowd work. They take primary keys, and are safe to run twice or at once: the payment engine
claims each ledger row with a conditional UPDATE and reconciles rows left ``sent`` with the platform before
anything is sent again (see payments.py, providers/)."""

import logging

from celery import shared_task

from annotation_site.jobs import services as jobs

from . import admission, sending
from .models import Study

log = logging.getLogger(__name__)


UNSETTLED_RETRIES = 12  # runs after which rows still waiting for the platform are left to a person
PENDING_COUNTDOWN = 5  # seconds before a run sends what a recording planned during the previous one
PENDING_RETRIES = 10  # such runs in one chain of retries after which the task leaves the rest to a person


@shared_task(bind=True, acks_late=True, max_retries=None)
def apply_payments(self, study_id, job_id=None, unsettled_tries=0, pending_tries=0):
    """Send a study's planned decisions and bonuses. Rows a platform could not settle (5xx, timeouts) stay
    ``sent`` and the task retries later; reconciliation runs first, so a retry never pays twice. Rows a
    recording planned or changed while the run sent, which it left planned (``sending.apply_study``:
    ``pending``), are sent by a retry a few seconds later (by the next check's run when rows also wait for the
    platform)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return None
    if job_id:
        jobs.mark_running(job_id, total=1, message="sending decisions and bonuses")
    try:
        result = sending.apply_study(study)
    except Exception as exc:
        if job_id:
            jobs.mark_failed(job_id, exc)
        raise
    if result.get("busy"):
        # another run holds the study's payment lease (or a crashed one did): try again when it ends
        if job_id:
            jobs.mark_running(
                job_id, total=1, message=f"another payment run holds this study; trying again in {result['retry_in']} s"
            )
        if self.request.is_eager:
            return result
        raise self.retry(countdown=result["retry_in"])  # (a busy study: not counted as a try)
    pending, unsettled = result.get("pending", 0), result["unsettled"]
    if job_id:
        states = result["states"]
        jobs.report_progress(job_id, 1)
        if self.request.is_eager:
            later = "send the payments again to send them"
        else:  # with rows waiting for the platform, the next check of it sends them
            later = "sending them with the next check of the platform" if unsettled else "sending them in a moment"
        jobs.mark_succeeded(
            job_id,
            result,
            message=f"{states['confirmed']} confirmed, {states['sent']} waiting for the "
            f"platform, {states['failed']} failed"
            + (
                f"; {pending} planned row(s) not sent by this run (recorded or planned again while it sent): {later}"
                if pending
                else ""
            ),
        )
    if self.request.is_eager or not (unsettled or pending):
        return result
    if unsettled:  # rows the platform has not settled are asked about later and later (that run sends the pending)
        tries, limit, countdown = unsettled_tries, UNSETTLED_RETRIES, min(60 * 2**unsettled_tries, 3600)
        stopped = f"stopped checking after {UNSETTLED_RETRIES} retries: {unsettled} row(s) still wait for the platform"
        stopped += f", {pending} planned row(s) are not sent yet" if pending else ""
    else:  # rows planned while the run sent only need sending
        tries, limit, countdown = pending_tries, PENDING_RETRIES, PENDING_COUNTDOWN
        stopped = (
            f"stopped after {PENDING_RETRIES} runs, each of which left rows recorded while it sent: {pending} "
            "planned row(s) wait"
        )
    if tries >= limit:
        # retrying for ever would hide rows that need a person; stopping silently would lose them: say so
        message = (
            f"{stopped}; send the recorded payments again (the study page, or crowd_ledger apply) to check them, "
            "and resolve any batch in doubt"
        )
        log.warning("study %s: %s", study.name, message)
        if job_id:
            jobs.mark_failed(job_id, message)
        return result
    raise self.retry(
        args=(study_id,),
        kwargs={
            "job_id": job_id,
            "unsettled_tries": unsettled_tries + bool(unsettled),
            "pending_tries": pending_tries + (not unsettled),
        },
        countdown=countdown,
    )


@shared_task(acks_late=True)
def sync_study(study_id):
    """Read the platform's submissions and release returned / timed-out / rejected work."""
    study = Study.objects.filter(pk=study_id).first()
    return admission.sync_submissions(study) if study is not None else None


@shared_task(acks_late=True)
def release_idle():
    """Release work without activity for its study's idle time (run by Celery beat)."""
    return admission.release_idle()
