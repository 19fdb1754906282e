"""Operations of Direct Assessment work: assignments and their signed links, the next item, idempotent
submissions and stored quality control. Views, the API, commands and tasks are thin adapters over these."""

import contextlib
import math
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Subquery
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation_site import newest_wins
from annotation_site.jobs import services as jobs
from annotation_site.jobs.models import Job
from annotation_site.prepared_queries import Prepared
from annotation_site.strict_numbers import integer_score

from . import loading, quality_control, workers
from .models import HIT, Assignment, Campaign, Item, Judgment, QCResult, QCStatus, Worker

ASSIGNMENT_SALT = "assessment.assignment"
CAMPAIGN_SALT = "assessment.campaign-entry"
MAX_ELAPSED = timedelta(hours=24)
WATCH_SLACK_SECONDS = 1.0  # the server's clock against the page's: latency and timer granularity
WATCH_TOLERANCE_SECONDS = 0.05  # the page rounds what it sends


# --- Assignments and links ------------------------------------------------------------------------------


def assignment_token(assignment):
    return signing.dumps(assignment.pk, salt=ASSIGNMENT_SALT)


def assignment_from_token(token):
    """The Assignment a signed token names (with its HIT, campaign and worker), or None."""
    try:
        pk = signing.loads(token, salt=ASSIGNMENT_SALT)
    except signing.BadSignature:
        return None
    if type(pk) is not int:
        return None
    found = _ASSIGNMENT.run(pk=pk)
    return found[0] if found else None


# compiled once per connection (annotation_site.prepared_queries): a submission's two reads were a third of its CPU
_ASSIGNMENT = Prepared(
    lambda pk: Assignment.objects.select_related("hit__campaign", "worker").filter(pk=pk).order_by()[:1],
    pk=-914_270_001,
)


def assignment_path(assignment: Assignment) -> str:
    """The rating page of ``assignment`` by its signed link (a path: pages make it absolute from the request,
    commands with ``annotation_site.links.absolute_url``)."""
    return reverse("da-rate-token", args=[assignment_token(assignment)])


def owned_by_another_account(assignment: Assignment, user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when ``assignment`` belongs to a site account other than ``user`` (a link worker's belongs to none)."""
    return assignment.worker.user_id is not None and assignment.worker.user_id != user.pk


def campaign_entry_token(campaign):
    return signing.dumps(campaign.pk, salt=CAMPAIGN_SALT)


def campaign_entry_path(campaign: Campaign) -> str:
    """The campaign's entry link (a path), to which a crowd platform appends ``?worker_id=ID``."""
    return reverse("da-join", args=[campaign_entry_token(campaign)])


def campaign_from_entry_token(token):
    try:
        pk = signing.loads(token, salt=CAMPAIGN_SALT)
    except signing.BadSignature:
        return None
    return Campaign.objects.filter(pk=pk).first()


def open_assignment(campaign, worker):
    """The worker's unfinished, unreleased assignment in the campaign, or None (a read: takes nothing)."""
    return (
        Assignment.objects.filter(
            worker=worker, hit__campaign=campaign, completed_at__isnull=True, released_at__isnull=True
        )
        .select_related("hit__campaign", "worker")
        .order_by("created_at")
        .first()
    )


def assign(campaign, worker):
    """The worker's open assignment in the campaign, else a new one on the HIT with the fewest assignments that
    still needs workers and that the worker has not done; None when there is no such HIT. Released assignments
    (given back to the pool) hold no place.

    Concurrency: the worker's row is locked (one worker's simultaneous requests queue); the HIT is then taken
    under its own row lock with ``skip_locked`` (PostgreSQL), so workers arriving together take different HITs
    without waiting for each other, and its live assignments are counted again under that lock, so a HIT never
    gets more than ``workers_per_hit``. On SQLite the IMMEDIATE transactions serialise writers instead."""
    with transaction.atomic():
        Worker.objects.select_for_update().filter(pk=worker.pk).order_by().values_list("pk").first()
        assignment = _assign_locked(campaign.pk, worker.pk, fresh=False)
    if assignment is None:
        return None
    return Assignment.objects.select_related("hit__campaign", "worker").get(pk=assignment.pk)


def assign_by_external_id(campaign_id, external_id, *, source="crowd"):
    """``assign`` for a worker known by an external id (crowd participants), made for the arrival of a crowd:
    the worker is created in the same transaction when new (one ``INSERT ... ON CONFLICT DO NOTHING``), and a
    worker created here has nothing open and no verdict to look up. Returns the Assignment (its ``hit`` carries
    the HIT's number and external id only) or None when no HIT is left for the worker. Inside the caller's
    transaction when there is one (no savepoint: the crowd's Start commits the assignment with its own rows)."""
    with transaction.atomic(savepoint=False):
        worker_id = workers.insert_participant_worker(external_id, source)
        fresh = worker_id is not None
        if not fresh:
            row = (
                Worker.objects.select_for_update()
                .filter(external_id=external_id)
                .order_by()
                .values_list("pk", "kind")
                .first()
            )
            if row is None:  # cannot happen: the INSERT found it (no deletion runs during arrivals)
                raise RuntimeError(f"worker {external_id!r} vanished while being admitted")
            worker_id, kind = row
            if kind != Worker.Kind.PARTICIPANT:  # the kinds never meet (see Worker)
                raise ValueError(f"the worker key {external_id!r} belongs to another kind of worker ({kind})")
        return _assign_locked(campaign_id, worker_id, fresh=fresh)


def _assign_locked(campaign_id, worker_id, *, fresh):
    """The body of ``assign`` once the worker's row is locked (or was created in this transaction: ``fresh``,
    nothing open, no verdict). Two statements hand out a HIT (``_lock_hit_with_room``, ``_insert_if_room``); the
    returned Assignment's ``hit`` carries the HIT's number and external id."""
    if not fresh:
        open_assignment = (
            Assignment.objects.filter(
                worker_id=worker_id, hit__campaign_id=campaign_id, completed_at__isnull=True, released_at__isnull=True
            )
            .order_by("created_at")
            .first()
        )
        if open_assignment is not None:
            return open_assignment
    assignment = None
    skip_locked = True
    for _ in range(ASSIGN_TRIES):
        row = _lock_hit_with_room(campaign_id, None if fresh else worker_id, skip_locked=skip_locked)
        if row is None:
            if not skip_locked:
                return None  # no HIT has room, even counting those being handed out
            skip_locked = False  # every HIT with room is being handed out right now: wait for one
            continue
        pk, number, external_id, workers_per_hit = row
        now = timezone.now()
        assignment_id = _insert_if_room(worker_id, pk, workers_per_hit, now)
        if assignment_id is not None:
            assignment = Assignment(pk=assignment_id, worker_id=worker_id, hit_id=pk, created_at=now)
            assignment.hit = HIT(pk=pk, number=number, external_id=external_id, campaign_id=campaign_id)
            break
        skip_locked = True  # filled by whoever held it just before: look again (a new snapshot)
    if assignment is not None and not fresh:
        _mark_in_progress(campaign_id, worker_id)
    return assignment


# A HIT taken from under an arrival means another arrival got one: many arrivals at once may each lose a few such
# races before they win one, and none of them is "no HIT left".
ASSIGN_TRIES = 64


def _lock_hit_with_room(campaign_id, exclude_worker_id, *, skip_locked):
    """(id, number, external_id, workers_per_hit) of the HIT with the fewest live assignments (then the lowest
    number) that still needs workers and that ``exclude_worker_id`` has never had, locked; None when there is
    none. One statement written by hand (the arrival path: the ORM's compilation of it cost more than running
    it). PostgreSQL: ``FOR UPDATE SKIP LOCKED``, so arrivals take different HITs without waiting for each other
    (``skip_locked=False``: wait for a locked one). SQLite has no row locks: its IMMEDIATE transactions
    serialise writers. The count is taken again under the lock by ``_insert_if_room``."""
    from django.db import connection

    qn = connection.ops.quote_name
    hit, campaign, assignment = (qn(m._meta.db_table) for m in (HIT, Campaign, Assignment))
    params = [campaign_id]
    exclude = ""
    if exclude_worker_id is not None:
        exclude = f" AND NOT EXISTS (SELECT 1 FROM {assignment} d WHERE d.hit_id = h.id AND d.worker_id = %s)"
        params.append(exclude_worker_id)
    live = f"SELECT COUNT(*) FROM {assignment} a WHERE a.hit_id = h.id AND a.released_at IS NULL"
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT h.id, h.number, h.external_id, c.workers_per_hit FROM {hit} h "
            f"JOIN {campaign} c ON c.id = h.campaign_id CROSS JOIN LATERAL ({live}) AS live(n) "
            f"WHERE h.campaign_id = %s AND live.n < c.workers_per_hit{exclude} ORDER BY live.n, h.number "
            f"LIMIT 1 FOR UPDATE OF h{' SKIP LOCKED' if skip_locked else ''}"
        )
    else:
        sql = (
            f"SELECT h.id, h.number, h.external_id, c.workers_per_hit, ({live}) AS n FROM {hit} h "
            f"JOIN {campaign} c ON c.id = h.campaign_id WHERE h.campaign_id = %s AND n < c.workers_per_hit"
            f"{exclude} ORDER BY n, h.number LIMIT 1"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else tuple(row[:4])


def _insert_if_room(worker_id, hit_id, workers_per_hit, now):
    """The id of a new assignment of the worker on the (locked) HIT, or None when its live assignments reached
    ``workers_per_hit`` meanwhile. One statement, a new snapshot taken after the lock: the count sees every
    assignment of whoever held the lock before."""
    from django.db import connection

    qn = connection.ops.quote_name
    table = qn(Assignment._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (worker_id, hit_id, created_at, completed_at, released_at, release_reason) "
            f"SELECT %s, %s, %s, NULL, NULL, '' WHERE (SELECT COUNT(*) FROM {table} WHERE hit_id = %s AND "
            f"released_at IS NULL) < %s RETURNING id",
            [worker_id, hit_id, connection.ops.adapt_datetimefield_value(now), hit_id, workers_per_hit],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def assign_on_hit(hit, worker):
    """An assignment of the worker on this very HIT (MTurk fixes the HIT): theirs if it exists and was not
    released, else a new one while the HIT still needs workers; None otherwise."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=hit.campaign_id)
        existing = Assignment.objects.filter(worker=worker, hit=hit).first()
        if existing is not None:
            return (
                None
                if existing.released_at is not None
                else Assignment.objects.select_related("hit__campaign", "worker").get(pk=existing.pk)
            )
        live = Assignment.objects.filter(hit=hit, released_at__isnull=True).count()
        if live >= campaign.workers_per_hit:
            return None
        assignment = Assignment.objects.create(worker=worker, hit=hit)
        _mark_in_progress(campaign, worker)
    return Assignment.objects.select_related("hit__campaign", "worker").get(pk=assignment.pk)


def release_idle_assignments(idle_minutes=None, now=None):
    """Give back the slots of unfinished assignments nobody worked on for ``idle_minutes`` (setting
    ``DA_ASSIGNMENT_IDLE_MINUTES``, default 120): no judgment since then and made before then. Crowd
    participants' assignments are left to the crowd's own idle release (it keeps their participations in step).
    Returns how many were released. Safe to run twice (conditional UPDATE)."""
    from django.conf import settings
    from django.db.models import Max

    minutes = idle_minutes if idle_minutes is not None else int(getattr(settings, "DA_ASSIGNMENT_IDLE_MINUTES", 120))
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=minutes)
    idle = (
        Assignment.objects.filter(completed_at__isnull=True, released_at__isnull=True, created_at__lt=cutoff)
        .exclude(worker__kind=Worker.Kind.PARTICIPANT)
        .annotate(last=Max("judgments__finished_at"))
        .filter(Q(last__isnull=True) | Q(last__lt=cutoff))
        .values_list("pk", flat=True)
    )
    return Assignment.objects.filter(pk__in=list(idle), released_at__isnull=True).update(
        released_at=now, release_reason=f"idle for {minutes} minutes"
    )


def release_assignment(assignment_id, reason=""):
    """Give an assignment's place on its HIT back (it keeps its judgments). True if it was released now."""
    return bool(
        Assignment.objects.filter(pk=assignment_id, released_at__isnull=True).update(
            released_at=timezone.now(), release_reason=(reason or "")[:100]
        )
    )


def create_assignment(hit, worker):
    assignment, created = Assignment.objects.get_or_create(worker=worker, hit=hit)
    if created:
        _mark_in_progress(hit.campaign_id, worker)
    return assignment


def _mark_in_progress(campaign, worker):
    """A stored verdict no longer holds once the worker takes more work: their status is in progress until the
    QC computed at the end of the HIT replaces it."""
    QCResult.objects.filter(campaign=campaign, worker=worker).update(
        status=QCStatus.IN_PROGRESS, passed=False, computed_at=newest_wins.now_expression()
    )  # stamped: a campaign's QC that read before the worker took the HIT must not replace it


# --- Rating ----------------------------------------------------------------------------------------------


def next_item(assignment, *, shown_since=False):
    """The first item of the assignment's HIT (in planned order) that it has not judged yet: one query.
    ``shown_since``: also annotate when it became the current item (the assignment's last judgment, see
    ``checked_watch``)."""
    found = unjudged_items(assignment, 1, shown_since=shown_since)
    return found[0] if found else None


def unjudged_items(assignment, n, *, shown_since=False):
    """The first ``n`` items of the assignment's HIT (in planned order) not judged yet, in one query: a
    submission reads the current item and the one after it together."""
    key = (n, shown_since)
    query = _UNJUDGED.get(key)
    if query is None:
        query = _UNJUDGED.setdefault(
            key,
            Prepared(
                lambda assignment_id, hit_id: _unjudged_queryset(assignment_id, hit_id, n, shown_since),
                assignment_id=-914_270_002,
                hit_id=-914_270_003,
            ),
        )
    return query.run(assignment_id=assignment.pk, hit_id=assignment.hit_id)


_UNJUDGED: dict = {}


def _unjudged_queryset(assignment_id, hit_id, n, shown_since, also=()):
    judged = Judgment.objects.filter(assignment_id=assignment_id)
    items = (
        Item.objects.filter(hit_id=hit_id)
        .exclude(pk__in=judged.values("item_id"))
        .select_related("caption__video", *also)
        .order_by("position")
    )
    if shown_since:
        items = items.annotate(last_judged_at=Subquery(judged.order_by("-finished_at").values("finished_at")[:1]))
    return items[:n]


_PAGE_ITEM = Prepared(
    lambda assignment_id, hit_id: _unjudged_queryset(assignment_id, hit_id, 1, False, also=("hit__campaign",)),
    assignment_id=-914_270_004,
    hit_id=-914_270_005,
)


def page_item(assignment_id, hit_id):
    """The current item of an assignment on ``hit_id`` with all its page shows (caption, video, the HIT and its
    campaign) in one query, or None when every item is judged. Compiled once per connection (a crowd arrival's
    Start answers with this page: the ORM's compilation of this five-table join cost more than running it)."""
    found = _PAGE_ITEM.run(assignment_id=assignment_id, hit_id=hit_id)
    return found[0] if found else None


def item_payload(item, assignment):
    """What the rating page shows of an item (no item type: the controls stay hidden). ``watch_seconds``: the
    real playback the campaign's watch gate asks for (None when the clip's duration is unknown: the page then
    applies the campaign's share and cap to the duration the browser reports)."""
    video = item.caption.video
    return {
        "id": item.pk,
        "position": item.position + 1,
        "total": assignment.hit.n_items,
        "text": item.text,
        "video": {"kind": video.kind, "url": video.playback_url, "youtube_id": video.youtube_id},
        "watch_seconds": assignment.hit.campaign.required_watch_seconds(video.duration),
    }


def state(assignment, item=None, *, lookup=True):
    """The page's state: progress and the current item (``item``; looked up unless ``lookup`` is False)."""
    if lookup and item is None:
        item = next_item(assignment)
    total = assignment.hit.n_items
    campaign = assignment.hit.campaign
    return {
        "statement": campaign.statement,
        "watch": {"fraction": campaign.watch_fraction, "max_seconds": campaign.watch_max_seconds},
        "total": total,
        "done": total if item is None else item.position,
        "complete": item is None,
        "item": None if item is None else item_payload(item, assignment),
        "completion_code": completion_code(assignment) if item is None else None,
    }


def completion_code(assignment):
    """A code the worker copies back to a crowd platform to show the HIT was completed: an HMAC of the assignment
    and the worker's id, so it is bound to both (another worker's code for the same HIT differs)."""
    return (
        salted_hmac("assessment.completion", f"{assignment.pk}:{assignment.worker.external_id}")
        .hexdigest()[:12]
        .upper()
    )


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


class AssignmentReleased(SubmissionError):
    status, code = 409, "released"


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
    """0-100, strictly (``annotation_site.strict_numbers``: no "1e2", no digits of other scripts, no NaN)."""
    try:
        return integer_score(score, 0, 100)
    except ValueError as exc:
        raise SubmissionError(str(exc)) from None


def clean_uuid(value):
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        raise SubmissionError("client_uuid must be a UUID") from None


def _replay(existing, assignment, item_id):
    if existing.assignment_id != assignment.pk or existing.item_id != item_id:
        raise SubmissionIdConflict("this submission id was used for another item")
    return Submission(
        judgment=existing,
        created=False,
        next_item=next_item(assignment),
        completed=assignment.completed_at is not None or existing.assignment.completed_at is not None,
    )


def _not_current(assignment, item_id, client_uuid):
    """A submission for an item that is not the assignment's current one: the replay of a stored judgment
    (same submission id: the stored result), another tab's item (already judged), an id used for another
    item, an item of another HIT, or one further down the HIT."""
    existing = Judgment.objects.select_related("assignment").filter(client_uuid=client_uuid).first()
    if existing is not None:
        return _replay(existing, assignment, item_id)
    item = Item.objects.filter(pk=item_id, hit_id=assignment.hit_id).first()
    if item is None:
        raise ItemNotInAssignment("this item is not part of your assignment")
    stored = Judgment.objects.filter(assignment=assignment, item=item).first()
    if stored is not None:
        raise AlreadyJudged("this item has been rated already", judgment=stored)
    raise OutOfOrder("items are rated in order: this is not the current item")


def checked_watch(assignment, item, now, *, played, watched):
    """What the server stores of the watch gate: ``(played, watched_seconds)``.

    The page measures real playback (seeking does not count) and reports it; the server does not take that on
    trust where it can check: the item has been in front of the worker at most since the previous judgment of
    the assignment (or since the assignment was made), so more seconds than that (plus a second of slack) are
    cut to it. When the clip's duration is known, ``played`` is decided here from the campaign's watch gate
    (``Campaign.required_watch_seconds``), whatever the page says; otherwise the page's ``played`` stands
    (YouTube embeds, items without a video)."""
    shown_since = getattr(item, "last_judged_at", None) or assignment.created_at
    if watched is not None:
        watched = min(watched, max(0.0, (now - shown_since).total_seconds()) + WATCH_SLACK_SECONDS)
    video = item.caption.video
    required = assignment.hit.campaign.required_watch_seconds(video.duration)
    if required is not None and video.kind != "none":
        played = watched is not None and watched + WATCH_TOLERANCE_SECONDS >= required
    return bool(played), watched


def submit(assignment, *, item_id, score, client_uuid, elapsed_ms=None, played=False, watched_seconds=None):
    """Store a worker's score of the current item of ``assignment``, once per ``client_uuid``: a retry with the
    same id returns the stored judgment (``created`` False). The item must be the assignment's next item.
    ``played`` and ``watched_seconds`` are checked against the server's clock (``checked_watch``).
    Completing the HIT sends the worker's quality control to Celery once the transaction commits."""
    score = clean_score(score)
    client_uuid = clean_uuid(client_uuid)
    try:
        item_id = int(item_id)
    except (TypeError, ValueError):
        raise SubmissionError("item must be an item id") from None
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
    # One query reads the current item and the one after it; the insert is the only write unless the HIT is
    # finished. A replay (same submission id) finds its item judged already, so it is not current any more:
    # _not_current answers the stored judgment; racing with itself, the unique submission id answers it.
    pending = unjudged_items(assignment, 2, shown_since=True)
    current = pending[0] if pending else None
    if current is None or current.pk != item_id:
        return _not_current(assignment, item_id, client_uuid)
    if assignment.released_at is not None:
        raise AssignmentReleased("this HIT was given back (returned, timed out or left idle); it takes no more ratings")
    played, watched = checked_watch(assignment, current, now, played=played, watched=watched)
    following = pending[1] if len(pending) > 1 else None
    completed = following is None
    # Not the HIT's last item: the INSERT is the only write, and alone it is its own transaction (autocommit: no
    # BEGIN and COMMIT round trips). The last item also marks the assignment completed: one transaction for both.
    # Inside a caller's transaction a savepoint keeps a refused insert from spoiling it.
    alone = not completed and not transaction.get_connection().in_atomic_block
    try:
        with contextlib.nullcontext() if alone else transaction.atomic():
            judgment = Judgment.objects.create(
                assignment=assignment,
                item=current,
                score=score,
                client_uuid=client_uuid,
                started_at=now - elapsed if elapsed is not None else None,
                finished_at=now,
                played=bool(played),
                watched_seconds=watched,
            )
            if completed and Assignment.objects.filter(pk=assignment.pk, completed_at__isnull=True).update(
                completed_at=now
            ):
                assignment.completed_at = now
                campaign_id, worker_id = assignment.hit.campaign_id, assignment.worker_id
                from .tasks import compute_worker_qc

                transaction.on_commit(lambda: compute_worker_qc.delay(campaign_id, worker_id))
    except IntegrityError:
        # a concurrent submit got there first: the same id (a double click, a retry) or the same item (two tabs)
        return _not_current(assignment, item_id, client_uuid)
    return Submission(judgment=judgment, created=True, next_item=following, completed=completed)


# --- Quality control and progress -------------------------------------------------------------------------


def store_qc(campaign, worker_ids=None):
    """Compute the QC of the campaign's workers (or of ``worker_ids``) with the campaign's parameters and store
    it (one row per worker, replaced): n_pairs, the test's statistic and p-value, and the status (passed, failed,
    insufficient data, in progress). Safe to run twice, also concurrently: each row is stamped with the time before
    the judgments were read, and a row stored from a later read is never replaced by this one's (a campaign's QC
    job that read before a worker's last judgments does not undo the worker's own QC after the HIT;
    ``annotation_site.newest_wins``). Returns the QC DataFrame."""
    as_of = newest_wins.database_now()
    # the parameters as they are now, not as when the caller read the campaign: a computation that reads after
    # a change of them (da_qc --test ...) stores the new ones, whoever stamps last
    current = Campaign.objects.filter(pk=campaign.pk).values_list("qc_test", "qc_threshold", "qc_min_pairs").first()
    if current is not None:  # (a campaign deleted meanwhile: nothing can be stored for it anyway)
        campaign.qc_test, campaign.qc_threshold, campaign.qc_min_pairs = current
    # who is still rating, read before their judgments: one who finishes between the two reads is then "in
    # progress" (their own QC follows), not judged on the judgments of a HIT read half done
    unfinished = loading.unfinished_workers(campaign, worker_ids)
    frame = loading.judgments_frame(campaign, worker_ids)
    qc = quality_control.worker_qc(
        frame,
        test=campaign.qc_test,
        threshold=campaign.qc_threshold,
        min_pairs=campaign.qc_min_pairs,
        unfinished=unfinished,
    )

    def value(x):
        return None if x is None or math.isnan(x) else float(x)

    rows = [
        QCResult(
            campaign=campaign,
            worker_id=int(row.worker),
            test=campaign.qc_test,
            threshold=campaign.qc_threshold,
            min_pairs=campaign.qc_min_pairs,
            n_pairs=int(row.n_pairs),
            statistic=value(row.statistic),
            p_value=value(row.p_value),
            passed=bool(row.passed),
            status=row.status,
            n_repeats=int(row.n_repeats),
            repeats_p_value=value(row.repeats_p_value),
            computed_at=as_of,
        )
        for row in qc.itertuples()
    ]
    newest_wins.upsert_newest(
        QCResult,
        rows,
        unique_fields=["campaign", "worker"],
        update_fields=[
            "test",
            "threshold",
            "min_pairs",
            "n_pairs",
            "statistic",
            "p_value",
            "passed",
            "status",
            "n_repeats",
            "repeats_p_value",
            "computed_at",
        ],
        stamp_field="computed_at",
    )
    return qc


def qc_statuses(campaign, worker_ids=None):
    """``{worker pk: QCStatus}`` of the campaign's workers (or of ``worker_ids``), from the stored QC results
    (two queries). A worker with an unfinished assignment is IN_PROGRESS whatever is stored; a worker who
    finished but has no stored verdict yet (the QC task has not run) is computed and stored first; one who
    finished without any judgment has INSUFFICIENT_DATA. Workers without any assignment in the campaign are
    left out."""
    assignments = Assignment.objects.filter(hit__campaign=campaign).exclude(
        released_at__isnull=False, completed_at__isnull=True
    )  # given back unfinished: not theirs any more
    if worker_ids is not None:
        assignments = assignments.filter(worker_id__in=list(worker_ids))
    workers: dict = {}
    for worker_id, completed_at in assignments.values_list("worker_id", "completed_at"):
        workers[worker_id] = workers.get(worker_id, True) and completed_at is not None
    stored = dict(
        QCResult.objects.filter(campaign=campaign, worker_id__in=list(workers)).values_list("worker_id", "status")
    )
    missing = [
        w for w, finished in workers.items() if finished and stored.get(w, QCStatus.IN_PROGRESS) == QCStatus.IN_PROGRESS
    ]
    if missing:
        qc = store_qc(campaign, missing)
        stored.update(zip(qc["worker"].astype(int), qc["status"]))
    statuses = {}
    for w, finished in workers.items():
        if not finished:
            statuses[w] = QCStatus.IN_PROGRESS
        else:  # finished without a single judgment (an imported empty assignment): nothing to judge them by
            statuses[w] = QCStatus(stored.get(w, QCStatus.INSUFFICIENT_DATA))
    return statuses


def qc_status(campaign, worker):
    """The QC status of one worker in a campaign (a ``QCStatus``: PASSED, FAILED, INSUFFICIENT_DATA or
    IN_PROGRESS), or None when the worker has no assignment in the campaign. Payment policies read this."""
    worker_id = worker.pk if isinstance(worker, Worker) else int(worker)
    return qc_statuses(campaign, [worker_id]).get(worker_id)


def progress(campaign):
    """HITs planned and done, assignments, workers, judgments and the stored QC pass rate (constant queries)."""
    hits = HIT.objects.filter(campaign=campaign).annotate(
        done=Count(
            "assignments", filter=Q(assignments__completed_at__isnull=False, assignments__released_at__isnull=True)
        )
    )
    n_hits = hits.count()
    hits_done = hits.filter(done__gte=1).count()
    hits_full = hits.filter(done__gte=campaign.workers_per_hit).count()
    assignments = Assignment.objects.filter(hit__campaign=campaign).aggregate(
        total=Count("id"),
        completed=Count("id", filter=Q(completed_at__isnull=False)),
        workers=Count("worker", distinct=True),
    )
    qc = QCResult.objects.filter(campaign=campaign).aggregate(
        n=Count("id"),
        passed=Count("id", filter=Q(status=QCStatus.PASSED)),
        decided=Count("id", filter=Q(status__in=[QCStatus.PASSED, QCStatus.FAILED])),
    )
    return {
        "hits": n_hits,
        "hits_done": hits_done,
        "hits_complete": hits_full,
        "assignments": assignments["total"],
        "assignments_completed": assignments["completed"],
        "workers": assignments["workers"],
        "judgments": Judgment.objects.filter(assignment__hit__campaign=campaign).count(),
        "qc_workers": qc["n"],
        "qc_passed": qc["passed"],
        "qc_decided": qc["decided"],
        "pass_rate": (qc["passed"] / qc["decided"]) if qc["decided"] else None,
    }


def start_qc_job(campaign: Campaign, user: AbstractBaseUser | AnonymousUser | None = None) -> Job:
    """Recompute quality control for every worker of ``campaign`` as a Job (sent after commit); returns the Job."""
    from .tasks import compute_campaign_qc

    job = jobs.create_job(
        "da-qc",
        scope=f"da-campaign:{campaign.pk}",
        user=user if user and user.is_authenticated else None,
        total=1,
        message="waiting for a worker",
    )
    return jobs.enqueue(job, compute_campaign_qc, campaign.pk)
