"""Operations on jobs. Tasks report through these functions; they write with ``update()`` so a task never
overwrites fields it did not mean to change, whichever process it runs in."""

import logging
import threading

from django.db import connections, transaction
from django.utils import timezone

from .models import Job


def create_job(kind, *, scope="", user=None, total=None, message=""):
    return Job.objects.create(kind=kind, scope=scope, total=total, message=message, created_by=user)


def latest_job(scope, kind=None):
    jobs = Job.objects.filter(scope=scope)
    if kind:
        jobs = jobs.filter(kind=kind)
    return jobs.order_by("-created_at").first()


def enqueue(job, task, *args):
    """Send ``task(job_id, *args)`` to Celery once the surrounding transaction commits."""
    transaction.on_commit(lambda: task.delay(str(job.pk), *args))
    return job


def enqueue_off_request(job, task, *args):
    """Like ``enqueue``, but never runs the task inside the caller: with a broker the task goes to a worker; on
    the embedded default (Celery eager) it runs in a thread of this process, started once the surrounding
    transaction commits, so a web request answers at once and the page follows the job's progress. The thread
    is not a daemon: a command that started it finishes it before the process exits."""
    if not task.app.conf.task_always_eager:
        return enqueue(job, task, *args)
    job_id = str(job.pk)

    def run():
        try:
            task.apply(args=(job_id, *args), throw=True)  # as delay() runs it when eager: signals and all
        except Exception:  # the task marks its job failed; keep the traceback in the log as well
            logging.getLogger(__name__).exception("job %s (%s) failed", job_id, task.name)
        finally:
            connections.close_all()

    transaction.on_commit(lambda: threading.Thread(target=run, name=f"job-{job_id}", daemon=False).start())
    return job


def unfinished_job(scope, kind, *, stale_after=None):
    """The queued or running job of this kind and scope, if any. A job without any news for ``stale_after``
    (a timedelta) is marked failed as abandoned (its process died) and not returned."""
    job = (
        Job.objects.filter(scope=scope, kind=kind, status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
        .order_by("-created_at")
        .first()
    )
    if job is not None and stale_after is not None and job.updated_at < timezone.now() - stale_after:
        mark_failed(job.pk, f"abandoned: no progress since {job.updated_at:%Y-%m-%d %H:%M} UTC")
        return None
    return job


def mark_running(job_id, *, total=None, message=""):
    fields = {"status": Job.Status.RUNNING, "message": message, "updated_at": timezone.now()}
    if total is not None:
        fields["total"] = total
    Job.objects.filter(pk=job_id).update(**fields)


def report_progress(job_id, done, *, total=None, message=None):
    fields = {"done": done, "updated_at": timezone.now()}
    if total is not None:
        fields["total"] = total
    if message is not None:
        fields["message"] = message
    Job.objects.filter(pk=job_id).update(**fields)


def mark_succeeded(job_id, result=None, *, message="done"):
    Job.objects.filter(pk=job_id).update(
        status=Job.Status.SUCCEEDED, result=result, message=message, updated_at=timezone.now()
    )


def mark_failed(job_id, error):
    Job.objects.filter(pk=job_id).update(status=Job.Status.FAILED, error=str(error), updated_at=timezone.now())
