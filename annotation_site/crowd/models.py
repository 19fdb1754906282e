"""Crowd work: studies on a provider, the participants who come through them, what each participant did
(Participation), webhook events received, and the payment ledger.

The crowd app sits below the protocols: a Study points at a campaign or project only through a *generic
reference* (``protocol`` + ``object_id``) that the protocol's adapter understands (see ``adapters.py``), so
nothing here imports a protocol.

Money rules (enforced by the database where a constraint can say it):
- one ledger row per (target, protocol assignment, kind): an assignment is decided once and bonused once;
- a row moves planned -> sent -> confirmed | failed and is never sent again once confirmed;
- a row records the QC result (status, test, p-value, pairs, threshold) and the policy it came from.
"""

import uuid
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q

STUDY_NAME = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z", "Use letters, digits, '.', '_' and '-' (starting with a letter or digit)."
)


class Provider(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    LINK = "link", "signed links"
    MTURK = "mturk", "Amazon Mechanical Turk (files and read-only API)"
    NONE = "none", "no platform (decisions recorded for the researcher)"


class Policy(models.TextChoices):
    APPROVE_ALL = "approve-all", "approve every completed assignment"
    APPROVE_PASSING = "approve-passing", "approve QC passers, reject QC failures, review the rest"
    REVIEW = "review", "review every assignment manually"


class BonusScope(models.TextChoices):
    NONE = "none", "no bonus"
    PER_HIT = "per-hit", "a bonus for every approved HIT"
    PER_PASSING_HIT = "per-passing-hit", "a bonus for every HIT of a worker who passed QC"


class EndMode(models.TextChoices):
    CODE = "code", "show the completion code"
    REDIRECT = "redirect", "redirect to a completion URL with the code"
    SUBMIT = "submit", "post the assignment back (MTurk externalSubmit)"


class Study(models.Model):
    """A campaign or project published on one provider (a Prolific study, a set of signed links, an MTurk
    batch). Several studies may serve the same target (say Prolific and a lab panel by link)."""

    class Status(models.TextChoices):
        DRAFT = "draft"
        PUBLISHED = "published"
        PAUSED = "paused"
        CLOSED = "closed"

    name = models.CharField(max_length=100, unique=True, validators=[STUDY_NAME])
    provider = models.CharField(max_length=10, choices=Provider)
    protocol = models.CharField(max_length=30, help_text="The adapter of the target: 'da', 'factuality', ...")
    object_id = models.PositiveBigIntegerField(help_text="The target's primary key, as the adapter knows it.")
    target_name = models.CharField(max_length=200, help_text="The target's name when the study was made.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    external_id = models.CharField(max_length=100, blank=True, help_text="Prolific study id, MTurk batch, ...")
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    # recruitment
    reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(0)],
        help_text="Per HIT, in the currency.",
    )
    currency = models.CharField(max_length=3, default="GBP")
    estimated_minutes = models.PositiveIntegerField(default=10)
    places = models.PositiveIntegerField(default=0, help_text="Slots open in total (0: HITs x workers per HIT).")
    places_taken = models.PositiveIntegerField(default=0, help_text="Slots held by active or completed work.")
    hits_per_participant = models.PositiveSmallIntegerField(default=1)
    closes_at = models.DateTimeField(null=True, blank=True)
    id_parameter = models.CharField(
        max_length=50,
        default="participant_id",
        help_text="Entry links: the query parameter carrying the platform's id.",
    )
    idle_minutes = models.PositiveIntegerField(default=30, help_text="Work untouched this long is released.")
    # worker experience
    consent_text = models.TextField(blank=True, help_text="Shown before the first HIT; empty: no consent step.")
    instructions = models.TextField(blank=True)
    end_mode = models.CharField(max_length=10, choices=EndMode, default=EndMode.CODE)
    completion_url = models.URLField(
        blank=True,
        help_text="REDIRECT: where to send finished participants ('{code}' is replaced by the completion code).",
    )
    completion_code = models.CharField(
        max_length=40, blank=True, help_text="Prolific: the study's 'completed' code (one per study)."
    )
    screened_out_code = models.CharField(max_length=40, blank=True, help_text="Prolific: 'failed screening'.")
    # payments
    policy = models.CharField(max_length=20, choices=Policy, default=Policy.APPROVE_PASSING)
    bonus_scope = models.CharField(max_length=20, choices=BonusScope, default=BonusScope.NONE)
    bonus_amount = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    rejection_category = models.CharField(max_length=30, default="LOW_EFFORT")
    rejection_message = models.TextField(blank=True, help_text="Sent with every rejection (Prolific: 100+ chars).")
    replace_rejected = models.BooleanField(
        default=True, help_text="A rejected HIT goes back to the pool for someone else."
    )
    payments_lease_until = models.DateTimeField(
        null=True, blank=True, help_text="A payment run holds the study until then (one run at a time)."
    )
    payments_lease_token = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "name"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(provider__in=Provider.values), name="crowd_study_provider_valid"),
            models.CheckConstraint(
                condition=Q(places_taken__lte=F("places")) | Q(places=0), name="crowd_study_places_not_exceeded"
            ),
            models.CheckConstraint(condition=Q(hits_per_participant__gte=1), name="crowd_study_hits_positive"),
        ]
        indexes = [models.Index(fields=["protocol", "object_id"], name="crowd_study_target")]

    def __str__(self):
        return self.name

    def clean(self):
        """The bonus is at most the largest allowed (``payments.check_bonus``, ``CAPTIONEVAL_MAX_BONUS``). Prolific
        refuses a rejection without one of its categories or with a message shorter than 100 characters: said
        when the study is made or changed, not found when its rejections fail in a payment run (a participant
        never rejected is approved by Prolific on its own after a while)."""
        from .payments import check_bonus

        problems = {}
        try:
            if isinstance(self.bonus_amount, Decimal):  # else its field's own check refused it
                check_bonus(self.bonus_amount, what="the bonus", currency=self.currency)
        except ValueError as exc:
            problems["bonus_amount"] = str(exc)
        if self.provider == Provider.PROLIFIC:
            problems |= self._prolific_problems()
        if problems:
            raise ValidationError(problems)

    def _prolific_problems(self):
        from .providers.prolific_client import MIN_REJECTION_MESSAGE, REJECTION_CATEGORIES

        problems = {}
        if self.rejection_category not in REJECTION_CATEGORIES:
            problems["rejection_category"] = f"Prolific's categories are {', '.join(REJECTION_CATEGORIES)}"
        message = (self.rejection_message or "").strip()
        if message and len(message) < MIN_REJECTION_MESSAGE:
            problems["rejection_message"] = (
                f"Prolific needs at least {MIN_REJECTION_MESSAGE} characters ({len(message)} given); leave it "
                "empty for the platform's explanation of the hidden checks"
            )
        return problems


class Participant(models.Model):
    """A person as a platform knows them. Platform ids live in their own namespace (``prolific``, ``mturk``,
    ``link:STUDY``), so the same string on two platforms is two participants and never a site account."""

    namespace = models.CharField(max_length=120)
    platform_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    blocked = models.BooleanField(default=False, help_text="Never admitted again (any study).")

    class Meta:
        ordering = ["namespace", "platform_id"]
        constraints = [models.UniqueConstraint(fields=["namespace", "platform_id"], name="crowd_participant_unique")]

    def __str__(self):
        return self.worker_key

    @property
    def worker_key(self):
        """The id the protocols know this participant by (their worker / annotator external id)."""
        return f"{self.namespace}:{self.platform_id}"


class Participation(models.Model):
    """One participant's pass through one HIT of a study: admitted, consented, holding a slot (the protocol's
    assignment ``work_key``), completed or released."""

    class Status(models.TextChoices):
        ADMITTED = "admitted", "admitted (no HIT yet)"
        WORKING = "working"
        COMPLETED = "completed"
        RELEASED = "released", "released (returned, timed out or idle)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participations")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="participations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ADMITTED)
    external_submission_id = models.CharField(
        max_length=100, blank=True, help_text="Prolific SESSION_ID (submission), MTurk AssignmentId."
    )
    external_unit_id = models.CharField(max_length=100, blank=True, help_text="MTurk HITId.")
    work_key = models.CharField(max_length=100, blank=True, help_text="The protocol's assignment id.")
    unit_key = models.CharField(max_length=100, blank=True, help_text="The protocol's HIT / video id.")
    unit_label = models.CharField(max_length=200, blank=True)
    platform_status = models.CharField(max_length=30, blank=True, help_text="Last status the platform reported.")
    submit_url = models.URLField(blank=True, help_text="MTurk: where the finished assignment is posted (checked).")
    release_reason = models.CharField(max_length=100, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    practice_done_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "external_submission_id"],
                condition=~Q(external_submission_id=""),
                name="crowd_participation_unique_submission",
            ),
            models.UniqueConstraint(
                fields=["study", "work_key"], condition=~Q(work_key=""), name="crowd_participation_unique_work"
            ),
            # a participant holds at most one unfinished HIT of a study at a time
            models.UniqueConstraint(
                fields=["study", "participant"],
                condition=Q(status__in=["admitted", "working"]),
                name="crowd_participation_one_open",
            ),
            models.CheckConstraint(
                condition=~Q(status="working") | ~Q(work_key=""), name="crowd_participation_working_has_work"
            ),
        ]
        indexes = [models.Index(fields=["study", "status", "last_seen_at"], name="crowd_participation_idle")]

    def __str__(self):
        return f"{self.participant} in {self.study} ({self.status})"


class PracticeItem(models.Model):
    """A practice item shown before the first HIT: rated like the real thing, answered with feedback, never
    stored as a judgment nor scored."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="practice_items")
    position = models.PositiveSmallIntegerField(default=0)
    video_url = models.CharField(max_length=500, blank=True)
    text = models.TextField(help_text="The caption to rate.")
    scale_min = models.SmallIntegerField(default=0)
    scale_max = models.SmallIntegerField(default=100)
    accept_min = models.SmallIntegerField(help_text="Answers in [accept_min, accept_max] count as right.")
    accept_max = models.SmallIntegerField()
    feedback = models.TextField(help_text="Why: shown after the answer, right or wrong.")

    class Meta:
        ordering = ["study", "position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(scale_max__gt=F("scale_min")), name="crowd_practice_scale_ordered"),
            models.CheckConstraint(
                condition=Q(accept_min__lte=F("accept_max"))
                & Q(accept_min__gte=F("scale_min"))
                & Q(accept_max__lte=F("scale_max")),
                name="crowd_practice_accept_in_scale",
            ),
        ]


class ExternalUnit(models.Model):
    """A unit of work (HIT) as published on a platform: an MTurk HIT created from one of our HITs."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="external_units")
    unit_key = models.CharField(max_length=100)
    unit_label = models.CharField(max_length=200, blank=True)
    external_id = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "unit_key"], name="crowd_external_unit_once"),
            models.UniqueConstraint(fields=["study", "external_id"], name="crowd_external_unit_id_once"),
        ]


class ParticipantLink(models.Model):
    """A per-participant link: works for one participant id, until it expires, for a number of HITs."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participant_links")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="links")
    nonce = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    expires_at = models.DateTimeField()
    max_hits = models.PositiveSmallIntegerField(default=1)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [models.UniqueConstraint(fields=["study", "participant"], name="crowd_link_one_per_participant")]


class WebhookEvent(models.Model):
    """A platform event received (de-duplicated by the platform's event id: a redelivery changes nothing)."""

    provider = models.CharField(max_length=10, choices=Provider)
    event_id = models.CharField(max_length=200)
    event_type = models.CharField(max_length=100)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [models.UniqueConstraint(fields=["provider", "event_id"], name="crowd_webhook_event_once")]


class Dispatch(models.Model):
    """One platform operation covering ledger rows: a Prolific bulk approve, a bonus batch (created, then paid
    once), one MTurk call. Its state says how far it got, so a crash or retry resumes instead of repeating."""

    class State(models.TextChoices):
        PREPARED = "prepared", "prepared (nothing sent)"
        CREATED = "created", "created on the platform, not paid"
        PAYING = "paying", "pay request sent (outcome being checked)"
        DONE = "done"
        FAILED = "failed"
        IN_DOUBT = "in_doubt", "in doubt: check on the platform, then resolve"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="dispatches")
    kind = models.CharField(max_length=10)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PREPARED)
    external_id = models.CharField(max_length=100, blank=True, help_text="Prolific bulk bonus payment id, ...")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]


class LedgerLock(models.Model):
    """The payment ledger of one target (a campaign or project) as a row to lock: ``payments.record`` holds it
    for its whole transaction, so two recordings of the same target (a double click on the payments page, two
    staff members, a retried API call, ``crowd_payments`` at the same moment) run one after the other, and the
    later one finds the earlier one's rows. Not the Study row: every arrival updates its places counter, and
    arrivals must not wait for a recording of hundreds of rows."""

    protocol = models.CharField(max_length=30)
    object_id = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["protocol", "object_id"], name="crowd_ledger_lock_once_per_target")
        ]

    def __str__(self):
        return f"ledger of {self.protocol} {self.object_id}"


class LedgerEntry(models.Model):
    """One decision (approve / reject) or one bonus for one protocol assignment."""

    class Kind(models.TextChoices):
        DECISION = "decision"
        BONUS = "bonus"

    class Action(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"
        BONUS = "bonus"

    class State(models.TextChoices):
        PLANNED = "planned"
        SENT = "sent"
        CONFIRMED = "confirmed"
        FAILED = "failed"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="ledger")
    protocol = models.CharField(max_length=30)
    object_id = models.PositiveBigIntegerField()
    assignment_key = models.CharField(max_length=100, help_text="The protocol's assignment id.")
    participation = models.ForeignKey(
        Participation, on_delete=models.SET_NULL, null=True, blank=True, related_name="ledger"
    )
    worker_id = models.CharField(max_length=250)
    hit_id = models.CharField(max_length=200)
    submission_id = models.CharField(max_length=100, blank=True, help_text="The platform's id for the work.")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    action = models.CharField(max_length=10, choices=Action.choices)
    amount = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    reason = models.TextField(blank=True)
    rejection_category = models.CharField(max_length=30, blank=True)
    policy = models.CharField(max_length=20)
    qc_status = models.CharField(max_length=20, blank=True)
    qc_test = models.CharField(max_length=20, blank=True)
    qc_p_value = models.FloatField(null=True, blank=True)
    qc_n_pairs = models.PositiveIntegerField(null=True, blank=True)
    qc_threshold = models.FloatField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PLANNED)
    dispatch = models.ForeignKey(Dispatch, on_delete=models.PROTECT, null=True, blank=True, related_name="entries")
    request_token = models.CharField(max_length=64, unique=True, help_text="Idempotency token sent with it.")
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "kind", "id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.UniqueConstraint(
                fields=["protocol", "object_id", "assignment_key", "kind"],
                name="crowd_ledger_once_per_assignment_and_kind",
            ),
            models.CheckConstraint(
                condition=(Q(kind="decision") & Q(action__in=["approve", "reject"]) & Q(amount__isnull=True))
                | (Q(kind="bonus") & Q(action="bonus") & Q(amount__gt=0)),
                name="crowd_ledger_kind_action_amount",
            ),
            models.CheckConstraint(condition=~Q(action="reject") | ~Q(reason=""), name="crowd_ledger_reject_reason"),
            models.CheckConstraint(
                condition=Q(state__in=["planned", "sent", "confirmed", "failed"]), name="crowd_ledger_state_valid"
            ),
        ]
        indexes = [models.Index(fields=["study", "state"], name="crowd_ledger_study_state")]

    def __str__(self):
        return f"{self.action} {self.worker_id} {self.hit_id} ({self.state})"
