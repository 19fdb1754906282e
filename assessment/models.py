"""Direct Assessment (Graham, Awad & Smeaton, PLoS ONE 2018): campaigns of 0-100 slider judgments of captions.

A Campaign evaluates some systems of a dataset plus a human caption set (a ``System`` with ``is_human``), which
is both a hidden extra system and the source of the quality-control pairs. It is planned into HITs of items
shown one at a time: system captions, hidden originals (human captions), their degraded copies and exact
repeats of system items. Every control item points at the item it pairs with (``control_of``). Workers rate the
items of a HIT through an Assignment; each rating is a Judgment. QCResult stores each worker's quality-control
test, with the parameters it was computed with.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation_site.corpus.models import DATASET_NAME, Caption, Dataset, System
from annotation_site.deletion import SET_NULL_IN_BATCHES

STATEMENT = "The text adequately describes what took place in the video."


class QCTest(models.TextChoices):
    WILCOXON = "wilcoxon", "one-sided Wilcoxon signed-rank test (paired)"
    PAIRED_T = "paired_t", "one-sided paired t-test"
    MANN_WHITNEY = "mann_whitney", "one-sided Mann-Whitney U test (unpaired)"


class QCStatus(models.TextChoices):
    """A worker's quality-control verdict in a campaign (what payment policies read, see
    ``services.qc_status``):

    - ``passed``: finished, at least ``qc_min_pairs`` pairs, the test's p below the threshold;
    - ``failed``: finished, enough pairs, p not below the threshold;
    - ``insufficient_data``: finished with fewer than ``qc_min_pairs`` pairs (no verdict is possible);
    - ``in_progress``: the worker has an assignment in the campaign that is not completed (the verdict may change).
    """

    PASSED = "passed", "passed"
    FAILED = "failed", "failed"
    INSUFFICIENT_DATA = "insufficient_data", "insufficient data"
    IN_PROGRESS = "in_progress", "in progress"


WATCH_FRACTION = 0.9
WATCH_MAX_SECONDS = 30.0


class Campaign(models.Model):
    class Source(models.TextChoices):
        PLANNED = "planned"
        IMPORTED = "imported"

    name = models.CharField(max_length=100, unique=True, validators=[DATASET_NAME])
    description = models.TextField(blank=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="da_campaigns")
    systems = models.ManyToManyField(
        System,
        related_name="da_campaigns",
        blank=True,
        help_text="The systems evaluated (the human system comes on top, hidden).",
    )
    human_system = models.ForeignKey(
        System,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="da_campaigns_as_human",
        help_text="Human captions: a hidden extra system and the source of QC pairs.",
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.PLANNED)
    statement = models.CharField(max_length=300, default=STATEMENT)
    # Plan layout (recorded so a plan can be re-created exactly from the seed).
    hit_size = models.PositiveSmallIntegerField(default=100)
    pairs_per_hit = models.PositiveSmallIntegerField(default=10, help_text="Original/degraded pairs per HIT.")
    repeats_per_hit = models.PositiveSmallIntegerField(default=10, help_text="Exact repeats of system items per HIT.")
    min_control_distance = models.PositiveSmallIntegerField(
        default=25, help_text="Minimum distance in positions between a control item and its partner (>= 2)."
    )
    workers_per_hit = models.PositiveSmallIntegerField(default=3, help_text="Assignments handed out per HIT.")
    seed = models.BigIntegerField(null=True, blank=True, help_text="Seed of the plan's random generator.")
    # Quality control and significance parameters.
    qc_test = models.CharField(max_length=15, choices=QCTest, default=QCTest.WILCOXON)
    qc_threshold = models.FloatField(default=0.05, help_text="A worker passes when p < this threshold.")
    qc_min_pairs = models.PositiveSmallIntegerField(default=10, help_text="Pairs a worker needs to be able to pass.")
    significance_threshold = models.FloatField(default=0.05)
    # The watch gate of the rating page: real playback time required before a score can be given.
    watch_fraction = models.FloatField(
        default=WATCH_FRACTION, help_text="Share of the clip's duration that must be played (real playback time)."
    )
    watch_max_seconds = models.FloatField(
        default=WATCH_MAX_SECONDS, help_text="Cap of the required playback time, in seconds (for long clips)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    planned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(qc_threshold__gt=0) & Q(qc_threshold__lt=1), name="da_campaign_qc_threshold_ok"
            ),
            models.CheckConstraint(
                condition=Q(significance_threshold__gt=0) & Q(significance_threshold__lt=1),
                name="da_campaign_significance_threshold_ok",
            ),
            models.CheckConstraint(condition=Q(min_control_distance__gte=2), name="da_campaign_distance_ok"),
            models.CheckConstraint(
                condition=Q(watch_fraction__gte=0) & Q(watch_fraction__lte=1), name="da_campaign_watch_fraction_ok"
            ),
            models.CheckConstraint(condition=Q(watch_max_seconds__gte=0), name="da_campaign_watch_max_ok"),
        ]

    def __str__(self):
        return self.name

    def required_watch_seconds(self, duration):
        """Seconds of real playback a clip of ``duration`` seconds needs before it counts as played:
        ``watch_fraction`` of the duration, at most ``watch_max_seconds``; None when the duration is unknown."""
        if duration is None or not duration > 0:
            return None
        return min(self.watch_max_seconds, self.watch_fraction * float(duration))

    @property
    def qc_parameters(self):
        return {"test": self.qc_test, "threshold": self.qc_threshold, "min_pairs": self.qc_min_pairs}


class HIT(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="hits")
    number = models.PositiveIntegerField(help_text="1, 2, ... within the campaign.")
    external_id = models.CharField(max_length=200, blank=True, help_text="Id in an imported file.")
    n_items = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "number"]
        verbose_name = "HIT"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="da_hit_unique_number"),
            models.UniqueConstraint(
                fields=["campaign", "external_id"], condition=~Q(external_id=""), name="da_hit_unique_external_id"
            ),
        ]

    def __str__(self):
        return f"{self.campaign} HIT {self.number}"


class ItemType(models.TextChoices):
    SYSTEM = "system"
    ORIGINAL = "original", "original (hidden human caption)"
    DEGRADED = "degraded"
    REPEAT = "repeat"


class Item(models.Model):
    """One thing to rate. ``caption`` is the caption shown (for a degraded copy: the human caption it was made
    from); ``text`` is the exact text shown (a snapshot, whitespace tokens joined by spaces), so the replaced
    range ``[degraded_start, degraded_end)`` of a degraded copy indexes ``text.split()``."""

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField(help_text="0-based place in the HIT.")
    item_type = models.CharField(max_length=10, choices=ItemType)
    caption = models.ForeignKey(Caption, on_delete=models.CASCADE, related_name="da_items")
    text = models.TextField(blank=True)
    control_of = models.ForeignKey(
        "self",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="controls",
        help_text="The item this control pairs with.",
    )
    degraded_start = models.PositiveSmallIntegerField(null=True, blank=True)
    degraded_end = models.PositiveSmallIntegerField(null=True, blank=True)
    donor_caption = models.ForeignKey(
        Caption,
        on_delete=SET_NULL_IN_BATCHES,  # a dataset of 250,000 captions is deleted in bounded statements
        null=True,
        blank=True,
        related_name="+",
        help_text="Degraded copies: the caption the replacement words came from.",
    )
    external_id = models.CharField(max_length=200, blank=True, help_text="Id in an imported file.")

    class Meta:
        ordering = ["hit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "position"], name="da_item_unique_position"),
            models.CheckConstraint(condition=Q(item_type__in=ItemType.values), name="da_item_type_valid"),
            # system items control nothing; degraded copies and repeats always name their partner (originals
            # are written before their degraded copy exists, then pointed at it)
            models.CheckConstraint(
                condition=(Q(item_type=ItemType.SYSTEM) & Q(control_of__isnull=True))
                | Q(item_type=ItemType.ORIGINAL)
                | (Q(item_type__in=[ItemType.DEGRADED, ItemType.REPEAT]) & Q(control_of__isnull=False)),
                name="da_item_control_of_ok",
            ),
            models.CheckConstraint(
                condition=(Q(degraded_start__isnull=True) & Q(degraded_end__isnull=True))
                | (Q(item_type=ItemType.DEGRADED) & Q(degraded_start__lt=F("degraded_end"))),
                name="da_item_degraded_range_ok",
            ),
        ]

    def __str__(self):
        return f"{self.hit} #{self.position + 1} ({self.item_type})"


class Worker(models.Model):
    """A person who rates: a site account (``kind`` account, bound to ``user``), a crowd participant (``kind``
    participant, ``external_id`` = the crowd's worker key ``NAMESPACE:ID``) or an id named from outside (``kind``
    external: entry links of old, imports, commands). The kinds never meet: external ids cannot use the reserved
    prefixes (``annotation_site.identities``), an account worker always has its user (database constraint), and
    lookups by external id never return an account's worker."""

    class Kind(models.TextChoices):
        ACCOUNT = "account", "site account"
        PARTICIPANT = "participant", "crowd participant"
        EXTERNAL = "external", "external id"

    external_id = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.EXTERNAL)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="da_worker"
    )
    source = models.CharField(max_length=20, blank=True, help_text="account, link, import, ...")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["external_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="account") | Q(user__isnull=True), name="assessment_worker_only_accounts_have_users"
            ),
        ]

    def __str__(self):
        return self.external_id


class Assignment(models.Model):
    """A worker's pass over one HIT. Crowd workers reach it by a signed link (see services.assignment_token)."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="assignments")
    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="assignments")
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Given back (returned, timed out, idle, rejected and replaced): it keeps its "
        "judgments but no longer holds a place on its HIT.",
    )
    release_reason = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["hit", "created_at"]
        constraints = [models.UniqueConstraint(fields=["worker", "hit"], name="da_assignment_unique")]

    def __str__(self):
        return f"{self.worker} on {self.hit}"


class Judgment(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judgments")
    score = models.PositiveSmallIntegerField(help_text="0 (does not describe it) to 100 (describes it adequately).")
    started_at = models.DateTimeField(null=True, blank=True, help_text="When the item was shown.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the score was submitted.")
    played = models.BooleanField(
        default=False,
        help_text="The campaign's watch gate was met before the score was given (decided by the server where it can).",
    )
    watched_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="Seconds of real playback (seeking does not count), at most the "
        "time the item was in front of the worker by the server's clock.",
    )
    client_uuid = models.UUIDField(
        null=True,
        blank=True,
        unique=True,
        default=None,
        help_text="Client submission id: a retry with the same id stores nothing new.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "item__position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="da_judgment_unique_item"),
            models.CheckConstraint(condition=Q(score__gte=0) & Q(score__lte=100), name="da_judgment_score_0_100"),
            models.CheckConstraint(
                condition=Q(started_at__isnull=True)
                | Q(finished_at__isnull=True)
                | Q(finished_at__gte=F("started_at")),
                name="da_judgment_time_ordered",
            ),
        ]

    def __str__(self):
        return f"{self.score} by {self.assignment_id} on {self.item_id}"

    @property
    def seconds(self):
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class QCResult(models.Model):
    """One worker's quality control in a campaign, with the parameters it was computed with."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="qc_results")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="qc_results")
    test = models.CharField(max_length=15, choices=QCTest)
    threshold = models.FloatField()
    min_pairs = models.PositiveSmallIntegerField()
    n_pairs = models.PositiveIntegerField()
    statistic = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(help_text="The status is 'passed' (kept for readers of the boolean).")
    status = models.CharField(
        max_length=20,
        choices=QCStatus,
        default=QCStatus.IN_PROGRESS,
        help_text="passed / failed / insufficient data / in progress (see QCStatus).",
    )
    n_repeats = models.PositiveIntegerField(default=0)
    repeats_p_value = models.FloatField(
        null=True, blank=True, help_text="Two-sided Wilcoxon signed-rank test of repeats vs first showing."
    )
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["campaign", "worker"]
        verbose_name = "QC result"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "worker"], name="da_qcresult_unique"),
            models.CheckConstraint(condition=Q(status__in=QCStatus.values), name="da_qcresult_status_valid"),
            models.CheckConstraint(
                condition=(Q(passed=True) & Q(status=QCStatus.PASSED)) | (Q(passed=False) & ~Q(status=QCStatus.PASSED)),
                name="da_qcresult_passed_is_status",
            ),
        ]
        indexes = [models.Index(fields=["campaign", "status"], name="da_qcresult_status")]

    def __str__(self):
        return f"{self.worker} in {self.campaign}: {self.get_status_display()}"
