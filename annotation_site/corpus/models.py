"""The corpus: datasets of videos, the systems that caption them, their captions and the reference captions.

A caption is one system's paragraph for one video; its sentences are stored once, with their tokens, so that
every judgment elsewhere can point at words by token index ranges (start inclusive, end exclusive).
"""

import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q

from .tokens import tokenize

YOUTUBE_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
_YOUTUBE_URL = re.compile(
    r"^https?://(?:www\.|m\.)?(?:youtube\.com/(?:watch\?(?:.*&)?v=|embed/|shorts/)|youtu\.be/)([A-Za-z0-9_-]{11})"
)


DATASET_NAME = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z", "Use letters, digits, '.', '_' and '-' (starting with a letter or digit)."
)


NAME_LENGTH = 100  # unique_name_field, Campaign.name


def check_unit_name(name):
    """Raise ValidationError unless ``name`` is a short unique name: DATASET_NAME's characters and at most
    NAME_LENGTH of them (the validator alone does not bound the length, which SQLite does not enforce and
    PostgreSQL does: a longer name was a database error there)."""
    if isinstance(name, str) and len(name) > NAME_LENGTH:
        raise ValidationError(f"Use at most {NAME_LENGTH} characters (this name has {len(name)}).")
    DATASET_NAME(name)


def unique_name_field():
    """The unique short name of a dataset, a factuality project or a judgment task (the same rule for all)."""
    return models.CharField(
        max_length=NAME_LENGTH,
        unique=True,
        validators=[DATASET_NAME],
        help_text="Short unique name, used on the command line and in addresses.",
    )


class Dataset(models.Model):
    name = unique_name_field()
    description = models.TextField(blank=True)
    source_format = models.CharField(max_length=20, blank=True, help_text="Format it was imported from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class System(models.Model):
    """A captioning model, or the human authors of reference captions (``is_human``)."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=100)
    is_human = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset", "position", "name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="system_unique_name_per_dataset")]

    def __str__(self):
        return self.name


class Video(models.Model):
    """A video: a file in media storage, or an external URL (YouTube links render as an embed)."""

    class Status(models.TextChoices):
        PENDING = "pending", "waiting for processing"
        READY = "ready"
        FAILED = "failed", "processing failed"
        EXTERNAL = "external", "external (not processed)"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="videos")
    external_id = models.CharField(max_length=200, help_text="The video's id in its dataset (e.g. v_-A6e83tl4Y8).")
    position = models.PositiveIntegerField(default=0)
    file = models.FileField(upload_to="videos/%Y/%m/", blank=True, max_length=500)
    url = models.URLField(blank=True, max_length=1000, help_text="External address, when there is no file.")
    duration = models.FloatField(null=True, blank=True, help_text="Seconds.")
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    thumbnail = models.FileField(upload_to="thumbnails/%Y/%m/", blank=True, max_length=500)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.EXTERNAL)
    processing_error = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset", "position", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="video_unique_id_per_dataset"),
            models.CheckConstraint(condition=~(~Q(file="") & ~Q(url="")), name="video_file_or_url_not_both"),
            models.CheckConstraint(condition=Q(duration__isnull=True) | Q(duration__gte=0), name="video_duration_ok"),
        ]

    def __str__(self):
        return self.external_id

    @property
    def youtube_id(self):
        match = _YOUTUBE_URL.match(self.url or "")
        return match.group(1) if match else None

    @property
    def playback_url(self):
        """Where a browser fetches the video: the storage URL (presigned on S3) or the external address."""
        if self.file:
            return self.file.url
        return self.url or None

    @property
    def kind(self):
        if self.file:
            return "file"
        if self.youtube_id:
            return "youtube"
        return "url" if self.url else "none"


class Caption(models.Model):
    """One system's caption paragraph for one video."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="captions")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="captions")
    position = models.PositiveIntegerField(default=0, help_text="Order in the imported file (kept for export).")
    prompt = models.TextField(
        blank=True,
        help_text="The prompt that produced the text, when there was one (FIFA's "
        "V2T responses); rating tasks show it beside the caption.",
    )

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.UniqueConstraint(fields=["video", "system"], name="caption_unique_per_video_system")]

    def __str__(self):
        return f"{self.system} on {self.video}"

    @property
    def text(self):
        return " ".join(sentence.text for sentence in self.sentences.all())


class Sentence(models.Model):
    """A sentence of a caption: its text and its tokens (whitespace tokens of the text)."""

    caption = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="sentences")
    index = models.PositiveIntegerField()
    text = models.TextField()
    tokens = models.JSONField()
    start = models.FloatField(null=True, blank=True, help_text="Start time in the video (seconds), if known.")
    end = models.FloatField(null=True, blank=True, help_text="End time in the video (seconds), if known.")

    class Meta:
        ordering = ["caption", "index"]
        constraints = [
            models.UniqueConstraint(fields=["caption", "index"], name="sentence_unique_index"),
            models.CheckConstraint(
                condition=Q(start__isnull=True) | Q(end__isnull=True) | Q(end__gte=F("start")),
                name="sentence_time_ordered",
            ),
        ]

    def __str__(self):
        return self.text

    def save(self, *args, **kwargs):
        if not self.tokens:
            self.tokens = tokenize(self.text)
        super().save(*args, **kwargs)


class Reference(models.Model):
    """A human reference caption (paragraph) of a video, from a named reference set (e.g. ``gt_ae_test_1``)."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="references")
    reference_set = models.CharField(max_length=100)
    text = models.TextField()

    class Meta:
        ordering = ["video", "reference_set"]
        constraints = [models.UniqueConstraint(fields=["video", "reference_set"], name="reference_unique_per_set")]

    def __str__(self):
        return f"{self.reference_set}: {self.text[:60]}"
