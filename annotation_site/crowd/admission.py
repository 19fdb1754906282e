"""A participant's way through a study: admission (the provider vouches for them), consent and practice, taking
a slot (an explicit action: the protocol hands out a HIT), finishing (the completion code and the way back to
the platform), and releasing work that was returned, timed out or abandoned.

Caps: a study opens ``places`` slots (0: the target's HITs x workers per HIT, which the protocol's assignment
enforces itself); a slot is taken by one conditional UPDATE (``places_taken < places``), so invented ids can never
hold more than the places opened.
A participant holds one unfinished HIT of a study at a time (database constraint) and completes at most
``hits_per_participant``.
"""

import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from annotation_site import identities
from annotation_site.strict_numbers import column_range

from . import adapters, links, participant_ids, rows
from .models import Participant, ParticipantLink, Participation, Study
from .providers import provider_for
from .providers.base import AdmissionRefused

log = logging.getLogger(__name__)

RELEASING_STATUSES = ("RETURNED", "TIMED-OUT", "REJECTED")


@dataclass
class Ending:
    mode: str
    code: str
    url: str = ""
    fields: dict = None


def _not_open(study, now):
    """Why nobody is admitted to ``study`` now: its status (draft, paused, closed), "closing time", or None."""
    if study.status != Study.Status.PUBLISHED:
        return study.status
    if study.closes_at is not None and study.closes_at <= now:
        return "closing time"
    return None


def check_open(study, now=None):
    reason = _not_open(study, now or timezone.now())
    if reason == "closing time":
        raise AdmissionRefused("closed", "This study has closed.")
    if reason is not None:
        raise AdmissionRefused("closed", "This study is not taking participants at the moment.")


NOT_PUBLISHED = {
    Study.Status.DRAFT: "is a draft (not published yet)",
    Study.Status.PAUSED: "is paused",
    Study.Status.CLOSED: "is closed",
}


def links_warning(study, *, how_to_publish, now=None):
    """For the researcher: why the study's links (its entry address, per-participant links) let nobody in now
    and what to do, or None when they work. Participants are admitted only as ``check_open`` allows: a link made
    for a draft answered "This study is not taking participants" until the study was published, and nothing said
    so. ``how_to_publish`` says how in the caller's terms (the command, the page's button, the API action)."""
    reason = _not_open(study, now or timezone.now())
    if reason is None:
        return None
    if reason == "closing time":
        return (
            f"Study {study.name} closed at its closing time ({study.closes_at.isoformat(timespec='minutes')}): "
            "its links will not work (participants are told the study has closed)."
        )
    return (
        f"Study {study.name} {NOT_PUBLISHED[reason]}: its links will not work (participants are told the study "
        f"is not taking participants) until it is published: {how_to_publish}."
    )


def capacity(study, adapter=None, target=None):
    """The places a study may hand out: its own cap, else every HIT's capacity of its target."""
    if study.places:
        return study.places
    if adapter is None:
        adapter, target = adapters.study_target(study)
    return adapter.capacity(target)


def admit(study, params, *, participant=None):
    """The Participation of whoever arrives with ``params`` (the provider verifies them; ``participant`` comes
    from a per-participant link instead). Raises AdmissionRefused with the page to show.

    Constant queries, few of them (this is the first request of every arrival): the participant (one query),
    their participations in the study (one query, decided in Python) and, for a newcomer, one statement
    (PostgreSQL; elsewhere one transaction) that creates the participant and the participation together."""
    check_open(study)
    provider = provider_for(study)
    submission_id = unit_id = requested_unit = ""
    submit_url = ""
    namespace = platform_id = None
    if participant is None:
        admission = provider.admit(params)
        if admission.preview:
            raise AdmissionRefused("preview", "preview")
        namespace = provider.namespace()
        try:  # normalised and within the columns they go into, before anything is written
            platform_id = participant_ids.platform_id(namespace, admission.platform_id)
            submission_id = participant_ids.work_id(
                admission.submission_id, "external_submission_id", what="submission id"
            )
            unit_id = participant_ids.work_id(admission.unit_id, "external_unit_id", what="HIT id")
        except identities.IdentityError as exc:
            raise AdmissionRefused("invalid", f"This link is not valid: {exc}.") from None
        participant = rows.participant(namespace, platform_id)
        submit_url = admission.extra.get("submit_url", "")
        requested_unit = admission.extra.get("unit", "")
    fields = {
        "external_submission_id": submission_id,
        "external_unit_id": unit_id,
        "unit_key": requested_unit[:100],
        "submit_url": submit_url,
    }
    for _ in range(2):
        if participant is None:  # a newcomer: nothing to look up
            try:
                if rows.newcomers_in_one_statement():
                    made = rows.create_newcomer(study, namespace, platform_id, fields)
                    if made is not None:
                        return made
                    raise IntegrityError("the participant was created meanwhile")
                with transaction.atomic():
                    participant = Participant.objects.create(namespace=namespace, platform_id=platform_id)
                    return Participation.objects.create(
                        study=study, participant=participant, last_seen_at=timezone.now(), **fields
                    )
            except IntegrityError:  # the same newcomer arriving twice at once: the other request created them
                participant = first_row(Participant.objects.filter(namespace=namespace, platform_id=platform_id))
                if participant is None:
                    raise
        found = _existing_participation(study, participant, submission_id)
        if found is not None:
            return found
        try:
            with transaction.atomic():
                return Participation.objects.create(
                    study=study, participant=participant, last_seen_at=timezone.now(), **fields
                )
        except IntegrityError:  # the same person arriving twice at once: answer the other request's participation
            continue
    raise AdmissionRefused("unavailable", "Your arrival could not be recorded. Please reload the page.")


def first_row(queryset):
    """The first row of ``queryset`` without the ORDER BY that ``first()`` adds (lookups by a unique key)."""
    rows = list(queryset.order_by()[:1])
    return rows[0] if rows else None


def _existing_participation(study, participant, submission_id):
    """The participation to answer for a participant who arrives again (one query: all of theirs in the
    study); None when a new one may be made; AdmissionRefused when they may not take part (any more)."""
    if participant.blocked:
        raise AdmissionRefused("closed", "You cannot take part in this study.")
    mine = list(Participation.objects.filter(study=study, participant=participant).order_by("id"))
    if submission_id:
        known = next((p for p in mine if p.external_submission_id == submission_id), None)
        if known is not None:
            if known.status == Participation.Status.COMPLETED:
                raise AdmissionRefused("done", "You have already completed this task.")
            if known.status == Participation.Status.RELEASED:
                raise AdmissionRefused("closed", "This submission was returned or timed out; it cannot be resumed.")
            known.study, known.participant = study, participant
            return known
    current = next((p for p in mine if p.status in (Participation.Status.ADMITTED, Participation.Status.WORKING)), None)
    if current is not None:
        current.study, current.participant = study, participant
        return current
    done = sum(p.status == Participation.Status.COMPLETED for p in mine)
    if done >= study.hits_per_participant:
        raise AdmissionRefused("done", "You have already done every task this study has for you. Thank you!")
    return None


def link_for_token(token):
    """The ParticipantLink a per-participant token names (with its study and participant: one query), or None
    when the token is not valid or names no link."""
    found = links.participant_link_from_token(token)
    if found is None:
        return None
    return first_row(ParticipantLink.objects.select_related("study", "participant").filter(pk=found[0], nonce=found[1]))


def participant_for_link(link, now=None):
    """The participant of a per-participant link; AdmissionRefused when it is revoked, expired or used up."""
    if link is None or link.revoked:
        raise AdmissionRefused("invalid", "This link is not valid. Please ask the researcher for a new one.")
    if link.expires_at <= (now or timezone.now()):
        raise AdmissionRefused("expired", "This link has expired. Please ask the researcher for a new one.")
    if _completed(link.study, link.participant_id) >= link.max_hits:
        raise AdmissionRefused("done", "This link has been used: you have already completed its task.")
    return link.participant


def _completed(study, participant_id):
    """How many HITs of ``study`` the participant has completed (one query)."""
    return Participation.objects.filter(
        study=study, participant_id=participant_id, status=Participation.Status.COMPLETED
    ).count()


def hits_left(participation):
    """How many more HITs of its study the participant of a finished ``participation`` may take: the study's
    ``hits_per_participant``, or the per-participant link's ``max_hits`` when they came by one (its cap applies,
    as ``participant_for_link`` enforces), less those completed. 0 without a query for a study of one HIT each."""
    study = participation.study
    if study.hits_per_participant <= 1:
        return 0
    allowed = study.hits_per_participant
    link_hits = list(
        ParticipantLink.objects.filter(
            study=study, participant_id=participation.participant_id, revoked=False
        ).values_list("max_hits", flat=True)
    )
    if link_hits:
        allowed = min(allowed, max(link_hits))
    return max(0, allowed - _completed(study, participation.participant_id))


def _normalised_ids(namespace, platform_ids):
    """The ids as ``participant_ids.platform_id`` makes them for ``namespace``, each once, in order (an id it
    refuses kept as given), and the ids it refused."""
    normalised, refused = [], []
    for raw in platform_ids:
        try:
            normalised.append(participant_ids.platform_id(namespace, raw))
        except identities.IdentityError:
            normalised.append(raw)
            refused.append(raw)
    return list(dict.fromkeys(normalised)), refused


MAX_LINK_DAYS = 3650  # ten years
MAX_LINK_HITS = column_range(ParticipantLink, "max_hits")[1]


def create_participant_links(study, platform_ids, *, expires_at, max_hits=None):
    """Per-participant links (one per id; an existing link of that id is renewed). Returns [(id, token)].
    ``max_hits``: the HITs each link allows; by default the study's ``hits_per_participant`` (a link allowing
    fewer HITs than quality control needs leaves its participant without a verdict: ``studies.qc_warning``)."""
    if max_hits is None:
        max_hits = min(study.hits_per_participant, MAX_LINK_HITS)
    namespace = provider_for(study).namespace()
    platform_ids, refused = _normalised_ids(namespace, platform_ids)
    bad = refused + [i for i in platform_ids if i not in refused and not identities.NAMED_ID_CHARACTERS.fullmatch(i)]
    if bad:
        raise ValueError(
            f"not valid participant ids: {', '.join(str(i)[:40] for i in bad[:5])} (at most "
            f"{participant_ids.platform_id_limit(namespace)} letters, digits and . _ - @ + : in this study)"
        )
    out = []
    with transaction.atomic():
        for platform_id in platform_ids:
            participant, _ = Participant.objects.get_or_create(namespace=namespace, platform_id=platform_id)
            link, created = ParticipantLink.objects.get_or_create(
                study=study, participant=participant, defaults={"expires_at": expires_at, "max_hits": max_hits}
            )
            if not created:
                link.expires_at, link.max_hits, link.revoked = expires_at, max_hits, False
                link.save(update_fields=["expires_at", "max_hits", "revoked"])
            out.append((platform_id, links.participant_link_token(link)))
    return out


def finish_url(participation):
    return reverse("crowd-finish", args=[links.participation_token(participation)])


def take_slot(participation, *, now=None):
    """Hand the participant a HIT (an explicit action: pressing "Start"). Returns (participation, Work)."""
    now = now or timezone.now()
    study = participation.study
    adapter, target = adapters.study_target_unchecked(study)
    if participation.status == Participation.Status.WORKING:
        work = adapter.work(target, participation.work_key)
        if work is not None:
            return participation, work
    if participation.status != Participation.Status.ADMITTED:
        raise AdmissionRefused("done", "This task is finished.")
    check_open(study, now)
    # A study's own cap is checked by the conditional UPDATE; without one (places 0: every unit's capacity) the
    # protocol's assignment is the cap (it hands out no unit beyond its capacity), so no capacity query is made.
    if not rows.take_place(study):
        raise AdmissionRefused("full", "Every place in this study has been taken. Thank you for your interest!")
    try:
        unit_key = _unit_key(study, participation)
        # the protocol's assignment and the participation's new state commit together (one commit per Start)
        with transaction.atomic():
            work = adapter.assign(
                target, participation.participant.worker_key, unit_key=unit_key, finish_url=finish_url(participation)
            )
            if work is None:  # nothing handed out: what the protocol wrote on the way (its worker record) goes too
                transaction.set_rollback(True)
            updated = work is not None and rows.mark_working(participation, work, now)
    except Exception:
        Study.objects.filter(pk=study.pk, places_taken__gt=0).update(places_taken=F("places_taken") - 1)
        raise
    if work is None:
        Study.objects.filter(pk=study.pk, places_taken__gt=0).update(places_taken=F("places_taken") - 1)
        if adapter.target_by_id(target.object_id) is None:
            raise AdmissionRefused("closed", "The task of this study no longer exists. Please tell the researcher.")
        raise AdmissionRefused("full", "There is no task left for you in this study. Thank you!")
    if updated:
        participation.status, participation.work_key = Participation.Status.WORKING, work.key
        participation.unit_key, participation.unit_label = work.unit_key, work.unit_label
        participation.started_at = participation.last_seen_at = now
        return participation, work
    participation.refresh_from_db()  # a concurrent Start won: give this place back, answer that one's work
    if participation.work_key != work.key:
        Study.objects.filter(pk=study.pk, places_taken__gt=0).update(places_taken=F("places_taken") - 1)
    return participation, adapter.work(target, participation.work_key)


def work_page(request, participation, work, *, finish_url):
    """The page of the participant's work as Start's answer, or None when the protocol has only its address."""
    adapter, target = adapters.study_target_unchecked(participation.study)
    return adapter.page(request, target, work, finish_url=finish_url)


def _unit_key(study, participation):
    """The HIT a platform fixed (MTurk: its HIT, known by ExternalUnit or by the ``unit`` of the HIT page's
    address, which is then remembered for the HIT); None when the protocol chooses."""
    if not participation.external_unit_id:
        return None
    from .models import ExternalUnit

    unit = ExternalUnit.objects.filter(study=study, external_id=participation.external_unit_id).first()
    if unit is not None:
        return unit.unit_key
    if participation.unit_key:
        try:
            with transaction.atomic():
                ExternalUnit.objects.get_or_create(
                    study=study,
                    external_id=participation.external_unit_id,
                    defaults={"unit_key": participation.unit_key},
                )
        except IntegrityError:
            pass  # that unit is published as another HIT already: the address's unit still decides
        return participation.unit_key
    return None


def touch(participation, now=None):
    """Record activity (at most once a minute: a page view right after the last one writes nothing)."""
    now = now or timezone.now()
    if participation.last_seen_at is None or (now - participation.last_seen_at).total_seconds() >= 60:
        Participation.objects.filter(pk=participation.pk).update(last_seen_at=now)
        participation.last_seen_at = now


def finish(participation, now=None):
    """Mark the participation completed once the protocol says its work is done; the Ending tells the page how
    the participant goes back (code, redirect, or the MTurk form)."""
    study = participation.study
    adapter, target = adapters.study_target_unchecked(study)
    if participation.status == Participation.Status.WORKING:
        work = adapter.work(target, participation.work_key)
        if work is None or not work.completed:
            return None
        Participation.objects.filter(pk=participation.pk, status=Participation.Status.WORKING).update(
            status=Participation.Status.COMPLETED, completed_at=now or timezone.now()
        )
        participation.refresh_from_db()
    if participation.status != Participation.Status.COMPLETED:
        return None
    code = links.completion_code(study.pk, participation.work_key, participation.participant.worker_key)
    ending = provider_for(study).finish(participation, code)
    return Ending(mode=ending["mode"], code=code, url=ending.get("url", ""), fields=ending.get("fields") or {})


def release(participation, reason, *, now=None, completed_too=False):
    """Give the participation's HIT back for someone else (returned, timed out, idle, rejected)."""
    study = participation.study
    statuses = [Participation.Status.ADMITTED, Participation.Status.WORKING]
    if completed_too:
        statuses.append(Participation.Status.COMPLETED)
    with transaction.atomic():
        current = Participation.objects.select_for_update().filter(pk=participation.pk, status__in=statuses).first()
        if current is None:
            return False
        if current.work_key:
            adapter, target = adapters.study_target(study)
            given_back = adapter.release(target, current.work_key)
            if not given_back and current.status == Participation.Status.COMPLETED:
                return False  # the protocol keeps finished work (e.g. submitted factuality answers)
        Participation.objects.filter(pk=current.pk).update(
            status=Participation.Status.RELEASED, released_at=now or timezone.now(), release_reason=reason[:100]
        )
        if current.work_key:
            Study.objects.filter(pk=study.pk, places_taken__gt=0).update(places_taken=F("places_taken") - 1)
    return True


def release_idle(now=None):
    """Release WORKING participations with no activity for their study's ``idle_minutes`` (the protocol's last
    activity counts too). Returns how many were released."""
    now = now or timezone.now()
    released = 0
    candidates = Participation.objects.filter(
        status=Participation.Status.WORKING, study__idle_minutes__gt=0
    ).select_related("study", "participant")
    for participation in candidates.iterator():
        limit = now - timezone.timedelta(minutes=participation.study.idle_minutes)
        last = participation.last_seen_at or participation.started_at or participation.created_at
        if last > limit:
            continue
        adapter, target = adapters.study_target(participation.study)
        work = adapter.work(target, participation.work_key)
        if work is not None and work.completed:
            finish(participation, now)
            continue
        if work is not None and work.last_activity is not None and work.last_activity > limit:
            touch(participation, work.last_activity)
            continue
        released += release(participation, f"idle for {participation.study.idle_minutes} minutes", now=now)
    return released


def apply_platform_status(study, submission_id, status):
    """A platform status for one submission (from a sync or a webhook): returned / timed-out / rejected
    submissions release their HIT. Returns what was done."""
    participation = Participation.objects.filter(study=study, external_submission_id=submission_id).first()
    if participation is None:
        return "unknown submission"
    Participation.objects.filter(pk=participation.pk).update(platform_status=status[:30])
    if status in RELEASING_STATUSES:
        done = release(participation, f"{status.lower()} on {study.provider}", completed_too=status == "REJECTED")
        return "released" if done else "already settled"
    return "recorded"


def sync_submissions(study):
    """Read every submission of the study from the platform (paginated) and apply their statuses."""
    outcomes = {}
    for info in provider_for(study).submissions():
        outcome = apply_platform_status(study, info.submission_id, info.status)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def open_participations(study):
    return Participation.objects.filter(study=study).filter(
        Q(status=Participation.Status.ADMITTED) | Q(status=Participation.Status.WORKING)
    )


def block(study, platform_ids, reason):
    """Never admit these participants again (any study); on MTurk the worker is also blocked on the platform.
    Returns how many were blocked."""
    provider = provider_for(study)
    namespace = provider.namespace()
    platform_ids, refused = _normalised_ids(namespace, platform_ids)
    if refused:
        raise ValueError(f"not valid participant ids: {', '.join(str(i)[:40] for i in refused[:5])}")
    blocked = 0
    for platform_id in platform_ids:
        participant, _ = Participant.objects.get_or_create(namespace=namespace, platform_id=platform_id)
        if not participant.blocked:
            Participant.objects.filter(pk=participant.pk).update(blocked=True)
            blocked += 1
        provider.block(participant, reason)
    for participation in open_participations(study).filter(
        participant__namespace=namespace, participant__platform_id__in=platform_ids
    ):
        release(participation, "blocked")
    return blocked
