"""Studies: creating one for a campaign or project, publishing, pausing, adding places, closing, participant
links, and the MTurk batch files of a study. Commands, the API and the pages call these."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotation_site.strict_numbers import column_range

from . import adapters, config, links, mturk_formats
from .models import ExternalUnit, ParticipantLink, Participation, PracticeItem, Provider, Study
from .providers import provider_for


class StudyError(Exception):
    pass


def _checked(instance):
    """``full_clean`` the model instance; its refusal as a StudyError naming each field (commands, the API and the
    pages show StudyError's text)."""
    try:
        instance.full_clean()
    except ValidationError as exc:
        raise StudyError(
            "; ".join(
                message if field == "__all__" else f"{field}: {message}"
                for field, messages in exc.message_dict.items()
                for message in messages
            )
        ) from None


def create_study(protocol, target_name, *, name, provider, **fields):
    """A draft Study for the target (``protocol`` may be empty: the name is looked up in every protocol)."""
    if provider not in Provider.values:
        raise StudyError(f"unknown provider {provider!r} (one of {', '.join(Provider.values)})")
    try:
        adapter, target = adapters.resolve(protocol, target_name) if protocol else adapters.find_target(target_name)
    except adapters.AdapterError as exc:
        raise StudyError(str(exc)) from None
    if Study.objects.filter(name=name).exists():
        raise StudyError(f"a study named {name!r} exists already")
    description = adapter.describe(target)
    defaults = {
        "title": description.title,
        "description": description.description,
        "estimated_minutes": description.estimated_minutes,
    }
    if provider == Provider.MTURK:
        defaults["end_mode"] = "submit"
        defaults["currency"] = "USD"
    if provider == Provider.PROLIFIC:
        defaults["end_mode"] = "redirect"
    defaults.update({k: v for k, v in fields.items() if v is not None})
    study = Study(
        name=name,
        provider=provider,
        protocol=target.protocol,
        object_id=target.object_id,
        target_name=target.name,
        **defaults,
    )
    _checked(study)
    study.save()
    return study


def add_practice_item(study, *, text, accept, feedback, scale=(0, 100), video_url=""):
    """Add a practice item to ``study`` (shown before the work, in the order added): the caption ``text`` rated
    on ``scale`` (low, high), answers within ``accept`` (low, high) count as right, ``feedback`` explains why.
    Raises StudyError saying what is wrong."""
    (scale_min, scale_max), (accept_min, accept_max) = scale, accept
    if not scale_min < scale_max:
        raise StudyError(f"the scale must run from a lower to a higher number, not {scale_min} to {scale_max}")
    if not scale_min <= accept_min <= accept_max <= scale_max:
        raise StudyError(
            f"the right answers ({accept_min} to {accept_max}) must be a range from low to high within the scale "
            f"({scale_min} to {scale_max})"
        )
    if not (feedback or "").strip():
        raise StudyError("a practice item needs feedback: why an answer is right or wrong")
    item = PracticeItem(
        study=study,
        position=PracticeItem.objects.filter(study=study).count(),
        text=text,
        video_url=video_url,
        scale_min=scale_min,
        scale_max=scale_max,
        accept_min=accept_min,
        accept_max=accept_max,
        feedback=feedback,
    )
    _checked(item)
    item.save()
    return item


def qc_warning(study):
    """For the researcher: why participants of this study can never get a quality-control verdict, or "" when
    they can. A study letting each participant complete fewer units (``hits_per_participant``) than the
    target's quality control needs of one participant (``ProtocolAdapter.units_for_qc``: a DA campaign whose
    layout puts fewer pairs in a HIT than QC needs) leaves every participant ``insufficient_data``: never
    passed, so ``approve-passing`` sends them all to review, and the campaign gets no scores of theirs. The same
    holds for the participants of per-participant links allowing fewer HITs than that (their ``max_hits`` caps
    them: ``admission.hits_left``). Warned, not refused (as an MTurk import above a unit's capacity): the study
    and its links may be made first and changed later."""
    try:
        adapter, target = adapters.study_target(study)
    except adapters.AdapterError:
        return ""
    needed = adapter.units_for_qc(target)
    allowed = study.hits_per_participant
    if allowed < needed:
        return (
            f"Quality control needs {needed} HITs of one participant of {target.name}, but study {study.name} lets "
            f"each participant do {_hits(allowed)}: nobody can pass or fail quality control (everyone stays "
            "'insufficient data' and the payments preview sends them all to review). Give each participant "
            f"{needed} HITs (the study page's 'HITs per participant', crowd_study hits --hits-per-participant "
            f"{needed}, the API's hits-per-participant action; per-participant links: max hits), or plan the "
            "campaign with more original/degraded pairs per HIT."
        )
    short = short_links(study, needed)
    if not short:
        return ""
    most = max(short)
    return (
        f"Quality control needs {needed} HITs of one participant of {target.name}, but {len(short)} "
        f"per-participant link{'s' if len(short) != 1 else ''} of study {study.name} let their participant do "
        f"{'at most ' if len(short) != 1 else ''}{_hits(most)}: they cannot pass or fail quality control "
        f"(they stay 'insufficient data'). Make their links again with max hits {needed} (an id's link is "
        "renewed, its address unchanged)."
    )


def qc_over_several_hits(study):
    """Whether the quality control of the study's target judges a participant over several HITs (a DA campaign
    whose QC needs k > 1 HITs of one worker): the end page then gives that as the reason to do the next HITs."""
    try:
        adapter, target = adapters.study_target(study)
    except adapters.AdapterError:
        return False
    return adapter.units_for_qc(target) > 1


def _hits(n):
    return f"{n} HIT{'s' if n != 1 else ''}"


def short_links(study, needed):
    """The ``max_hits`` of the study's live per-participant links (not revoked, not expired) that allow fewer
    than ``needed`` HITs (one query; none for a protocol whose QC needs one unit)."""
    if needed <= 1:
        return []
    return list(
        ParticipantLink.objects.filter(
            study=study, revoked=False, expires_at__gt=timezone.now(), max_hits__lt=needed
        ).values_list("max_hits", flat=True)
    )


def planned_places(study):
    adapter, target = adapters.study_target(study)
    return sum(unit.capacity for unit in adapter.describe(target).units)


def publish(study):
    """Open the study: on Prolific the draft is created (once) and published; links simply open."""
    provider = provider_for(study)
    if study.provider == Provider.PROLIFIC and not study.external_id:
        places = study.places or planned_places(study)
        external = provider.create_study(places)
        Study.objects.filter(pk=study.pk, external_id="").update(external_id=external, places=places)
        study.refresh_from_db()
    if study.provider == Provider.PROLIFIC:
        provider.publish()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PUBLISHED)
    study.refresh_from_db()
    return study


def pause(study):
    """Stop admitting participants of a published study (on Prolific, pause it there too). A draft has admitted
    nobody: pausing it (which made it look paused and dropped the "not published yet" guidance) is refused."""
    if study.status == Study.Status.DRAFT:
        raise StudyError(
            f"Study {study.name} is a draft (not published yet): it admits nobody, so there is nothing to pause; "
            "publish it when it is ready"
        )
    if study.provider == Provider.PROLIFIC and study.external_id:
        provider_for(study).pause()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PAUSED)
    study.refresh_from_db()
    return study


def close(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    return study


MAX_PLACES_ADDED = 100_000  # at once: a typing slip, not a study, beyond that


MAX_HITS_PER_PARTICIPANT = column_range(Study, "hits_per_participant")[1]


def set_hits_per_participant(study, hits):
    """How many HITs each participant of the study may complete (``hits_per_participant``): the way to do what
    ``qc_warning`` asks after creation (it was settable only when the study was made, or in the admin). Returns
    the study; StudyError for a number outside the column."""
    if not isinstance(hits, int) or not 1 <= hits <= MAX_HITS_PER_PARTICIPANT:
        raise StudyError(
            f"HITs per participant must be a whole number from 1 to {MAX_HITS_PER_PARTICIPANT}, not {hits!r}"
        )
    Study.objects.filter(pk=study.pk).update(hits_per_participant=hits)
    study.refresh_from_db()
    return study


def add_places(study, extra):
    """Open ``extra`` more places (Prolific: total_available_places grows too), e.g. to replace rejected work."""
    if extra <= 0:
        raise StudyError("add at least one place")
    if extra > MAX_PLACES_ADDED:
        raise StudyError(f"add at most {MAX_PLACES_ADDED} places at once")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        current = study.places or planned_places(study)
        study.places = current + extra
        study.save(update_fields=["places"])
    if study.provider == Provider.PROLIFIC and study.external_id:
        provider_for(study).add_places(study.places)
    return study


def entry_url(study, request=None):
    """The study's entry address: on the address ``request`` came to (pages and the API, as every page's links),
    else on the platform's public address (``config.base_url``: commands, and what is sent to the panel)."""
    return _absolute(reverse("crowd-entry", args=[links.entry_token(study)]), request)


def participant_link_url(token, request=None):
    return _absolute(reverse("crowd-participant-link", args=[token]), request)


def _absolute(path, request):
    return request.build_absolute_uri(path) if request is not None else config.base_url() + path


def unit_url(study, unit_key):
    return f"{entry_url(study)}?unit={unit_key}"


def mturk_batch(study):
    """The batch input CSV (one row per HIT: our HIT id and label, the HIT page's URL) and the ExternalQuestion
    XML of the first HIT, for an MTurk batch of this study."""
    adapter, target = adapters.study_target(study)
    units = adapter.describe(target).units
    rows = [
        {
            "hit_id": unit.key,
            "hit_label": unit.label,
            "assignments": unit.capacity,
            "hit_url": unit_url(study, unit.key),
        }
        for unit in units
    ]
    csv_text = mturk_formats.batch_input_csv(rows, ["hit_id", "hit_label", "assignments", "hit_url"])
    xml = (
        mturk_formats.external_question(rows[0]["hit_url"])
        if rows and rows[0]["hit_url"].startswith("https://")
        else ""
    )
    return csv_text, xml


def publish_mturk_hits(study):
    """Create one MTurk HIT per unit on the configured endpoint (UniqueRequestToken per study and unit, so a
    repeat creates nothing new); returns [(unit key, HITId)]."""
    adapter, target = adapters.study_target(study)
    provider = provider_for(study)
    out = []
    for unit in adapter.describe(target).units:
        known = ExternalUnit.objects.filter(study=study, unit_key=unit.key).first()
        if known is None:
            hit_id = provider.create_hit(unit, unit_url(study, unit.key), unit.capacity)
            known, _ = ExternalUnit.objects.get_or_create(
                study=study, unit_key=unit.key, defaults={"unit_label": unit.label, "external_id": hit_id}
            )
        out.append((unit.key, known.external_id))
    return out


def progress(study):
    counts = {status: 0 for status in Participation.Status.values}
    for status in Participation.objects.filter(study=study).values_list("status", flat=True):
        counts[status] += 1
    return {"participations": counts, "places": study.places, "places_taken": study.places_taken}


def money(amount):
    return f"{Decimal(amount):.2f}"
