"""What protocols ask the crowd app from their own pages (protocols import crowd, never the other way):

- ``finish_path(protocol, work_key)``: where a participant whose work came through a crowd study goes when the
  unit is complete (the crowd end page: completion code, redirect to the platform, or MTurk's submit form);
  None for work that came another way (site accounts, plain assignment links);
- ``frameable``: the decorator that lets the configured crowd origins frame a worker page (MTurk shows HITs in
  an iframe), re-exported here for protocol views;
- ``link_problem``: the page answering a signed link that does not work (damaged, unknown, expired), also
  re-exported for protocol views;
- ``default_entry_url`` / ``sync_default_entry``: a target's default link study (its old "append your worker
  id" link), whose HITs per participant follow what the target's quality control needs of one participant.
"""

from django.urls import reverse

from . import links
from .models import Participation
from .participant_views import frameable, link_problem  # noqa: F401  (re-exported for protocol views)


def participation_for(protocol, work_key):
    return (
        Participation.objects.select_related("study")
        .filter(study__protocol=protocol, work_key=str(work_key))
        .exclude(status=Participation.Status.RELEASED)
        .order_by("-created_at")
        .first()
    )


def finish_path(protocol, work_key):
    """One light query (the participation's id only): the rating page of every crowd arrival asks it."""
    pk = (
        Participation.objects.filter(study__protocol=protocol, work_key=str(work_key))
        .exclude(status=Participation.Status.RELEASED)
        .order_by("-created_at")
        .values_list("pk", flat=True)
        .first()
    )
    if pk is None:
        return None
    return reverse("crowd-finish", args=[links.participation_token(pk)])


def touch(protocol, work_key):
    """Record activity on crowd work (idle release counts from the last activity)."""
    from django.utils import timezone

    Participation.objects.filter(
        study__protocol=protocol, work_key=str(work_key), status=Participation.Status.WORKING
    ).update(last_seen_at=timezone.now())


def _default_entry_studies(protocol, object_id):
    from .models import Provider, Study

    return Study.objects.filter(
        protocol=protocol, object_id=object_id, provider=Provider.LINK, name__endswith="-entry"
    ).order_by("pk")


def _units_for_qc(protocol, object_id):
    """What the protocol's quality control needs of one participant (``ProtocolAdapter.units_for_qc``)."""
    from . import adapters

    adapter = adapters.get(protocol)
    target = adapter.target_by_id(object_id)
    return 1 if target is None else adapter.units_for_qc(target)


def sync_default_entry(protocol, object_id):
    """Raise the HITs per participant of the target's default link study to what its quality control needs now
    (after the target's QC minimum or layout changed): one UPDATE, only of a study allowing fewer (a study
    allowing more is left so). Returns the rows changed."""
    return _raise_to(_default_entry_studies(protocol, object_id), _units_for_qc(protocol, object_id))


def _raise_to(studies, needed):
    """Raise the HITs per participant of ``studies`` allowing fewer than ``needed`` (one UPDATE; rows changed)."""
    return studies.filter(hits_per_participant__lt=needed).update(hits_per_participant=needed)


def default_entry_url(protocol, object_id, name, *, id_parameter="worker_id", query=""):
    """The crowd entry address of a target's default link study (created published on first use: the signed-link
    provider, the given id parameter, as many HITs per participant as the target's quality control needs of one
    participant (``ProtocolAdapter.units_for_qc``: a DA campaign's "a worker needs k HITs"), places = every HIT's
    capacity). Protocols send their old "append your worker id" links here, so those links are capped like every
    entry link. A default study made with fewer HITs per participant (before 2026-11-28 every one had 1) is
    raised to the need here, on the way in."""
    from .models import Provider, Study

    needed = _units_for_qc(protocol, object_id)
    study = _default_entry_studies(protocol, object_id).first()
    if study is None:
        study, _ = Study.objects.get_or_create(
            name=f"{protocol}-{name}-entry"[:100],
            defaults={
                "provider": Provider.LINK,
                "protocol": protocol,
                "object_id": object_id,
                "target_name": name,
                "status": Study.Status.PUBLISHED,
                "id_parameter": id_parameter,
                "hits_per_participant": needed,
                "title": f"{name}",
            },
        )
    if study.hits_per_participant < needed:
        _raise_to(Study.objects.filter(pk=study.pk), needed)
    url = reverse("crowd-entry", args=[links.entry_token(study)])
    return f"{url}?{query}" if query else url
