"""Automatic metric scores of captions, correct/foil caption pairs, and stored correlation reports.

A Metric belongs to one dataset (its parameters, e.g. the reference sets used, are the dataset's); a MetricScore
is its score for one caption. A PairScore holds a metric's scores of both captions of a correct/foil pair with a
caption of a human system, scored against the same references: the video's references less the human caption's
own (docs/metrics.md, "Correct/foil pairs with a human caption"). A Report is one correlation analysis as it was computed: its parameters, the
snapshot of the data it used (counts and hashes), the package versions and the result, so a researcher can cite
it and anyone can check whether the data changed since.
"""

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q

from annotation_site.corpus.models import Caption, Dataset

METRIC_NAME = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z",
    "Use letters, digits, '.', '_', '+' and '-' (starting with a letter or digit).",
)


class Metric(models.Model):
    class Source(models.TextChoices):
        IMPORTED = "imported"
        COMPUTED = "computed"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="metrics")
    name = models.CharField(
        max_length=60,
        validators=[METRIC_NAME],
        help_text="Short name used on the command line and in the API, e.g. bleu4, emscore.",
    )
    label = models.CharField(max_length=100, blank=True, help_text="Display name, e.g. CIDEr-D.")
    source = models.CharField(max_length=10, choices=Source.choices)
    version = models.CharField(max_length=200, blank=True, help_text="Implementation and version of the metric.")
    parameters = models.JSONField(default=dict, blank=True)
    origin = models.CharField(max_length=500, blank=True, help_text="File the scores were imported from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["dataset", "name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="metric_unique_name_per_dataset")]

    def __str__(self):
        return f"{self.dataset} / {self.name}"

    @property
    def display_name(self):
        return self.label or self.name


class MetricScore(models.Model):
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="scores")
    caption = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="metric_scores")
    score = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["metric", "caption"], name="metricscore_unique")]


class CaptionPair(models.Model):
    """A correct caption and a foil caption of the same video (ActivityNet-FOIL style), in a named pair set."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="caption_pairs")
    pair_set = models.CharField(max_length=100, validators=[METRIC_NAME])
    correct = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="+")
    foil = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["dataset", "pair_set", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pair_set", "correct", "foil"], name="captionpair_unique"),
            models.CheckConstraint(condition=~Q(correct=F("foil")), name="captionpair_distinct_captions"),
        ]


class PairScore(models.Model):
    """A computed metric's scores of both captions of a pair with a caption of a human system, each scored against
    the video's references without the reference(s) the human caption is. Both empty: no reference was left."""

    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="pair_scores")
    pair = models.ForeignKey(CaptionPair, on_delete=models.CASCADE, related_name="scores")
    correct = models.FloatField(null=True, blank=True)
    foil = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["metric", "pair"], name="pairscore_unique"),
            models.CheckConstraint(
                condition=Q(correct__isnull=True, foil__isnull=True) | Q(correct__isnull=False, foil__isnull=False),
                name="pairscore_both_or_neither",
            ),
        ]


class Report(models.Model):
    class Kind(models.TextChoices):
        FACTUALITY = "factuality"
        DA = "da", "Direct Assessment"
        PAIRS = "pairs", "correct/foil pairs"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="metric_reports")
    campaign = models.CharField(max_length=200, blank=True, help_text="DA campaign name (kind da).")
    parameters = models.JSONField(default=dict)
    parameters_hash = models.CharField(max_length=64, db_index=True)
    snapshot = models.JSONField(default=dict, help_text="Counts and hashes of the data used.")
    data_hash = models.CharField(max_length=64, db_index=True)
    versions = models.JSONField(default=dict, help_text="Package versions the result was computed with.")
    result = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"report {self.pk}: {self.kind} on {self.dataset}"

    @property
    def level(self):
        """The level the report is at, as every place names it: "pairs" for correct/foil pairs (measured pair by
        pair; their stored parameters keep the default "segment"), else the level asked for."""
        return "pairs" if self.kind == self.Kind.PAIRS else self.parameters.get("level")

    @property
    def method(self):
        """The measure of the report: "ranking_accuracy" for pairs (their stored parameters keep "pearson")."""
        return "ranking_accuracy" if self.kind == self.Kind.PAIRS else self.parameters.get("method")
