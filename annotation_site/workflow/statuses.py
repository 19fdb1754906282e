"""The states every protocol's units, assignments and submissions share (choices of their model fields, not
models): a unit of work (a project, a task) is open until staff close it; an assignment is open until its
annotator submits; a submission came from the web page or an imported file."""

from django.db import models


class UnitStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"


class AssignmentStatus(models.TextChoices):
    OPEN = "open", "in progress"
    SUBMITTED = "submitted"


class SubmissionSource(models.TextChoices):
    WEB = "web"
    IMPORT = "import", "imported file"
