"""A Job records one long operation run by Celery, so pages and the API can show its progress."""

import uuid

from django.conf import settings
from django.db import models


class Job(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=100)
    scope = models.CharField(
        max_length=200,
        blank=True,
        db_index=True,
        help_text="What the job works on, e.g. 'dataset:12', so its page can show it.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    message = models.CharField(max_length=500, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.kind} ({self.status})"

    @property
    def percent(self):
        if not self.total:
            return 100 if self.status == self.Status.SUCCEEDED else 0
        return round(100 * self.done / self.total)

    @property
    def finished(self):
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)
