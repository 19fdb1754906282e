"""Operations on jobs. Tasks report through these functions; they write with ``update()`` so a task never
overwrites fields it did not mean to change, whichever process it runs in."""
from django.db import transaction
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
