"""The states every protocol's assignments and submissions share (choices of their model fields, not models):
an assignment is open until its annotator submits; a submission came from the web page or an imported file."""

from django.db import models


class AssignmentStatus(models.TextChoices):
    OPEN = "open", "in progress"
    SUBMITTED = "submitted"


class SubmissionSource(models.TextChoices):
    WEB = "web"
    IMPORT = "import", "imported file"
