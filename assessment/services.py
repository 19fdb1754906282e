"""Operations of Direct Assessment work: workers, assignments and their signed links, the next item, idempotent
submissions and stored quality control. Views, the API, commands and tasks are thin adapters over these."""
import math
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.core import signing
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from . import loading, quality_control
from .models import HIT, Assignment, Campaign, Item, Judgment, QCResult, Worker

ASSIGNMENT_SALT = "assessment.assignment"
CAMPAIGN_SALT = "assessment.campaign-entry"
MAX_ELAPSED = timedelta(hours=24)


# --- Workers, assignments and links ------------------------------------------------------------------------

def worker_for_user(user):
    """The Worker of a site account (created on first use)."""
    worker = Worker.objects.filter(user=user).first()
    if worker is None:
        worker, _ = Worker.objects.get_or_create(external_id=f"account:{user.get_username()}",
                                                 defaults={"user": user, "source": "account"})
    return worker


def worker_by_external_id(external_id, source="link"):
    external_id = (external_id or "").strip()
    if not external_id or len(external_id) > 200:
        raise ValueError("a worker id is 1 to 200 characters")
    worker, _ = Worker.objects.get_or_create(external_id=external_id, defaults={"source": source})
    return worker


def assignment_token(assignment):
    return signing.dumps(assignment.pk, salt=ASSIGNMENT_SALT)


def assignment_from_token(token):
    """The Assignment a signed token names (with its HIT, campaign and worker), or None."""
    try:
        pk = signing.loads(token, salt=ASSIGNMENT_SALT)
    except signing.BadSignature:
        return None
    return Assignment.objects.select_related("hit__campaign", "worker").filter(pk=pk).first()


def campaign_entry_token(campaign):
    return signing.dumps(campaign.pk, salt=CAMPAIGN_SALT)


def campaign_from_entry_token(token):
    try:
        pk = signing.loads(token, salt=CAMPAIGN_SALT)
    except signing.BadSignature:
        return None
    return Campaign.objects.filter(pk=pk).first()


def assign(campaign, worker):
    """The worker's open assignment in the campaign, else a new one on the HIT with the fewest assignments that
    still needs workers and that the worker has not done; None when there is no such HIT."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()  # one assigner at a time
        open_assignment = (Assignment.objects.filter(worker=worker, hit__campaign=campaign, completed_at__isnull=True)
                           .select_related("hit__campaign", "worker").order_by("created_at").first())
        if open_assignment is not None:
            return open_assignment
        hit = (HIT.objects.filter(campaign=campaign).exclude(assignments__worker=worker)
               .annotate(n=Count("assignments")).filter(n__lt=campaign.workers_per_hit)
               .order_by("n", "number").first())
        if hit is None:
            return None
        assignment = Assignment.objects.create(worker=worker, hit=hit)
    return Assignment.objects.select_related("hit__campaign", "worker").get(pk=assignment.pk)


def create_assignment(hit, worker):
    assignment, _ = Assignment.objects.get_or_create(worker=worker, hit=hit)
    return assignment


# --- Rating ----------------------------------------------------------------------------------------------

def next_item(assignment):
    """The first item of the assignment's HIT (in planned order) that it has not judged yet: one query."""
    return (Item.objects.filter(hit_id=assignment.hit_id)
            .exclude(pk__in=Judgment.objects.filter(assignment_id=assignment.pk).values("item_id"))
            .select_related("caption__video").order_by("position").first())


def item_payload(item, assignment):
    """What the rating page shows of an item (no item type: the controls stay hidden)."""
    video = item.caption.video
    return {
        "id": item.pk,
        "position": item.position + 1,
        "total": assignment.hit.n_items,
        "text": item.text,
        "video": {"kind": video.kind, "url": video.playback_url, "youtube_id": video.youtube_id},
    }


def state(assignment, item=None, *, lookup=True):
    """The page's state: progress and the current item (``item``; looked up unless ``lookup`` is False)."""
    if lookup and item is None:
        item = next_item(assignment)
    total = assignment.hit.n_items
    return {
        "statement": assignment.hit.campaign.statement,
        "total": total,
        "done": total if item is None else item.position,
        "complete": item is None,
        "item": None if item is None else item_payload(item, assignment),
        "completion_code": completion_code(assignment) if item is None else None,
    }


def completion_code(assignment):
    """A code the worker copies back to a crowd platform to show the HIT was completed."""
    return salted_hmac("assessment.completion", str(assignment.pk)).hexdigest()[:12].upper()


class SubmissionError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message, judgment=None):
        super().__init__(message)
        self.judgment = judgment


class ItemNotInAssignment(SubmissionError):
    status, code = 403, "item_not_in_assignment"


class AlreadyJudged(SubmissionError):
    status, code = 409, "already_judged"


class OutOfOrder(SubmissionError):
    status, code = 409, "out_of_order"


class SubmissionIdConflict(SubmissionError):
    status, code = 409, "submission_id_conflict"


@dataclass
class Submission:
    judgment: Judgment
    created: bool
    next_item: Item | None
    completed: bool


def clean_score(score):
    if isinstance(score, bool) or not isinstance(score, (int, float, str)):
        raise SubmissionError("the score must be an integer from 0 to 100")
    try:
        value = float(score)
    except ValueError:
        raise SubmissionError("the score must be an integer from 0 to 100") from None
    if not math.isfinite(value) or value != int(value) or not 0 <= value <= 100:
        raise SubmissionError(f"the score must be an integer from 0 to 100, not {score!r}")
    return int(value)


def clean_uuid(value):
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        raise SubmissionError("client_uuid must be a UUID") from None


def _replay(existing, assignment, item_id):
    if existing.assignment_id != assignment.pk or existing.item_id != item_id:
        raise SubmissionIdConflict("this submission id was used for another item")
    return Submission(judgment=existing, created=False, next_item=next_item(assignment),
                      completed=assignment.completed_at is not None or existing.assignment.completed_at is not None)


def submit(assignment, *, item_id, score, client_uuid, elapsed_ms=None, played=False, watched_seconds=None):
    """Store a worker's score of the current item of ``assignment``, once per ``client_uuid``: a retry with the
    same id returns the stored judgment (``created`` False). The item must be the assignment's next item.
    Completing the HIT sends the worker's quality control to Celery once the transaction commits."""
    score = clean_score(score)
    client_uuid = clean_uuid(client_uuid)
    try:
        item_id = int(item_id)
    except (TypeError, ValueError):
        raise SubmissionError("item must be an item id") from None
    existing = Judgment.objects.select_related("assignment").filter(client_uuid=client_uuid).first()
    if existing is not None:
        return _replay(existing, assignment, item_id)
    now = timezone.now()
    elapsed = None
    if elapsed_ms is not None:
        try:
            elapsed = min(max(timedelta(milliseconds=float(elapsed_ms)), timedelta(0)), MAX_ELAPSED)
        except (TypeError, ValueError, OverflowError):
            raise SubmissionError("elapsed_ms must be a number of milliseconds") from None
    try:
        watched = None if watched_seconds in (None, "") else max(0.0, float(watched_seconds))
    except (TypeError, ValueError):
        raise SubmissionError("watched_seconds must be a number") from None
    if watched is not None and not math.isfinite(watched):
        raise SubmissionError("watched_seconds must be a finite number")
    with transaction.atomic():
        current = next_item(assignment)
        if current is None or current.pk != item_id:
            item = Item.objects.filter(pk=item_id, hit_id=assignment.hit_id).first()
            if item is None:
                raise ItemNotInAssignment("this item is not part of your assignment")
            stored = Judgment.objects.filter(assignment=assignment, item=item).first()
            if stored is not None:
                raise AlreadyJudged("this item has been rated already", judgment=stored)
            raise OutOfOrder("items are rated in order: this is not the current item")
        try:
            with transaction.atomic():
                judgment = Judgment.objects.create(
                    assignment=assignment, item=current, score=score, client_uuid=client_uuid,
                    started_at=now - elapsed if elapsed is not None else None, finished_at=now,
                    played=bool(played), watched_seconds=watched)
        except IntegrityError:
            # a concurrent submit got there first: the same id (a double click) or the same item (two tabs)
            existing = Judgment.objects.select_related("assignment").filter(client_uuid=client_uuid).first()
            if existing is not None:
                return _replay(existing, assignment, item_id)
            stored = Judgment.objects.filter(assignment=assignment, item_id=item_id).first()
            if stored is not None:
                raise AlreadyJudged("this item has been rated already", judgment=stored) from None
            raise
        following = next_item(assignment)
        completed = following is None
        if completed and Assignment.objects.filter(pk=assignment.pk, completed_at__isnull=True).update(completed_at=now):
            assignment.completed_at = now
            campaign_id, worker_id = assignment.hit.campaign_id, assignment.worker_id
            from .tasks import compute_worker_qc

            transaction.on_commit(lambda: compute_worker_qc.delay(campaign_id, worker_id))
    return Submission(judgment=judgment, created=True, next_item=following, completed=completed)


# --- Quality control and progress -------------------------------------------------------------------------

def store_qc(campaign, worker_ids=None):
    """Compute the QC of the campaign's workers (or of ``worker_ids``) with the campaign's parameters and store
    it (one row per worker, replaced). Safe to run twice, also concurrently."""
    frame = loading.judgments_frame(campaign, worker_ids)
    qc = quality_control.worker_qc(frame, test=campaign.qc_test, threshold=campaign.qc_threshold,
                                   min_pairs=campaign.qc_min_pairs)
    now = timezone.now()

    def value(x):
        return None if x is None or math.isnan(x) else float(x)

    rows = [
        QCResult(campaign=campaign, worker_id=int(row.worker), test=campaign.qc_test, threshold=campaign.qc_threshold,
                 min_pairs=campaign.qc_min_pairs, n_pairs=int(row.n_pairs), statistic=value(row.statistic),
                 p_value=value(row.p_value), passed=bool(row.passed), n_repeats=int(row.n_repeats),
                 repeats_p_value=value(row.repeats_p_value), computed_at=now)
        for row in qc.itertuples()
    ]
    QCResult.objects.bulk_create(
        rows, batch_size=1000, update_conflicts=True, unique_fields=["campaign", "worker"],
        update_fields=["test", "threshold", "min_pairs", "n_pairs", "statistic", "p_value", "passed", "n_repeats",
                       "repeats_p_value", "computed_at"])
    return qc


def progress(campaign):
    """HITs planned and done, assignments, workers, judgments and the stored QC pass rate (constant queries)."""
    hits = HIT.objects.filter(campaign=campaign).annotate(
        done=Count("assignments", filter=Q(assignments__completed_at__isnull=False)))
    n_hits = hits.count()
    hits_done = hits.filter(done__gte=1).count()
    hits_full = hits.filter(done__gte=campaign.workers_per_hit).count()
    assignments = Assignment.objects.filter(hit__campaign=campaign).aggregate(
        total=Count("id"), completed=Count("id", filter=Q(completed_at__isnull=False)),
        workers=Count("worker", distinct=True))
    qc = QCResult.objects.filter(campaign=campaign).aggregate(n=Count("id"), passed=Count("id", filter=Q(passed=True)))
    return {
        "hits": n_hits, "hits_done": hits_done, "hits_complete": hits_full,
        "assignments": assignments["total"], "assignments_completed": assignments["completed"],
        "workers": assignments["workers"],
        "judgments": Judgment.objects.filter(assignment__hit__campaign=campaign).count(),
        "qc_workers": qc["n"], "qc_passed": qc["passed"],
        "pass_rate": (qc["passed"] / qc["n"]) if qc["n"] else None,
    }
