"""Who judges: an Annotator is one person's identity in the platform, whatever way they came in.

- ``staff`` and ``invited``: a local account (``user``); invited annotators get a link to set their password.
- ``crowd``: a crowd worker (MTurk, Prolific, plain link) named by ``provider`` and ``external_id``; the crowd
  entry itself comes with the crowd issue, the identity shape is here already.
- ``imported``: someone whose labels were collected elsewhere and imported (``external_id`` as in the file).

Judgments point at Annotator, never at User, so the same statistics cover every kind of annotator.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Annotator(models.Model):
    class Kind(models.TextChoices):
        STAFF = "staff"
        INVITED = "invited"
        CROWD = "crowd"
        IMPORTED = "imported"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="annotator"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    provider = models.CharField(
        max_length=30, blank=True, help_text="Crowd provider (mturk, prolific, link) or source of imported labels."
    )
    external_id = models.CharField(max_length=200, blank=True, help_text="The id the provider or file uses.")
    display_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "provider", "external_id"],
                condition=~Q(external_id=""),
                name="annotator_unique_external_id",
            ),
            models.CheckConstraint(
                condition=Q(user__isnull=False) | ~Q(external_id=""), name="annotator_has_account_or_external_id"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def name(self):
        """How staff see this annotator (annotators never see each other)."""
        if self.display_name:
            return self.display_name
        if self.user_id is not None:
            return self.user.get_username()
        return f"{self.provider}:{self.external_id}" if self.provider else self.external_id

    @property
    def identifier(self):
        """The stable id written to raw label exports when they are not anonymised."""
        if self.user_id is not None:
            return self.user.get_username()
        return self.external_id
