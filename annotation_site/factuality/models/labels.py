"""Factuality labels of captions, at the three levels of ActivityNet-Fact (Liu & Wan, EMNLP 2023).

A LabelSet is one consolidated labelling of a dataset's captions: the final labels of a release that was
imported (``origin=imported``), or the aggregate of a project's annotators. For each caption it holds the
paragraph Likert score (1-5), for each sentence whether it has a factual error, and the error spans as token
ranges (end exclusive) into the sentence's stored tokens.
"""

from django.db import models
from django.db.models import F, Q

from annotation_site.corpus.models import Caption, Dataset, Sentence


class LabelSet(models.Model):
    class Origin(models.TextChoices):
        IMPORTED = "imported"
        AGGREGATED = "aggregated"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="label_sets")
    name = models.CharField(max_length=100)
    origin = models.CharField(max_length=12, choices=Origin.choices)
    source = models.CharField(max_length=500, blank=True, help_text="File or project the labels came from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="labelset_unique_name")]

    def __str__(self):
        return f"{self.dataset} / {self.name} ({self.origin})"


class ParagraphLabel(models.Model):
    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="paragraph_labels")
    caption = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="paragraph_labels")
    score = models.PositiveSmallIntegerField(help_text="Factuality Likert score, 1 (many errors) to 5 (none).")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["label_set", "caption"], name="paragraphlabel_unique"),
            models.CheckConstraint(condition=Q(score__gte=1) & Q(score__lte=5), name="paragraphlabel_score_1_5"),
        ]


class SentenceLabel(models.Model):
    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="sentence_labels")
    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="labels")
    error = models.BooleanField(help_text="The sentence contains a factual error.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["label_set", "sentence"], name="sentencelabel_unique")]


class ErrorSpan(models.Model):
    """Erroneous words of a labelled sentence: tokens [start, end) of the sentence."""

    sentence_label = models.ForeignKey(SentenceLabel, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["sentence_label", "start"]
        constraints = [
            models.CheckConstraint(condition=Q(end__gt=F("start")), name="errorspan_nonempty"),
            models.UniqueConstraint(fields=["sentence_label", "start"], name="errorspan_unique_start"),
        ]
