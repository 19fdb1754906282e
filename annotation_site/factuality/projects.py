"""Projects: creating them (dataset, systems, videos, overlap, shuffling, scale), inviting annotators, editing,
closing, and the progress figures of the project pages (a fixed number of queries each)."""

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import Invited, awaits_activation, invite, invite_with_link  # noqa: F401 - Invited re-exported
from annotation_site.corpus.models import Caption, System, Video, check_unit_name
from annotation_site.db_statistics import refresh_after_bulk_load
from annotation_site.workflow import capacity, units

from . import protocol
from .models import Assignment, Project, ProjectMember, ProjectVideo, ScaleAnchor, Submission


@dataclass
class ProjectSpec:
    """What a researcher chooses when creating a project (the form, the API and the commands fill it)."""

    name: str
    dataset: object
    kind: str = Project.Kind.FACTUALITY
    systems: list = None  # System rows or names; None: every system of the dataset that is not human
    videos: list = None  # Video rows or external ids; None: every video with a caption of those systems
    annotators_per_video: int = 3
    shuffle_systems: bool = True
    instructions: str = ""  # empty: the protocol's (or the rating preset's) default text
    description: str = ""
    preset: str = ""  # rating: a key of protocol.RATING_PRESETS
    question: str = ""
    scale: list = None  # rating: [(value, anchor label)], consecutive integers
    rationale: str = Project.Rationale.OFF
    usernames: list = field(default_factory=list)  # accounts to invite


def _resolve(dataset, model, items, key, what):
    rows = [item for item in items if isinstance(item, model)]
    names = [item for item in items if not isinstance(item, model)]
    if any(row.dataset_id != dataset.pk for row in rows):
        raise ValidationError({what: f"every {what[:-1]} must belong to dataset {dataset.name}"})
    if names:
        found = {getattr(row, key): row for row in model.objects.filter(dataset=dataset, **{f"{key}__in": names})}
        unknown = [n for n in names if n not in found]
        if unknown:
            raise ValidationError(
                {what: f"dataset {dataset.name} has no {what[:-1]} " + ", ".join(repr(u) for u in unknown[:10])}
            )
        rows += [found[n] for n in names]
    return list(dict.fromkeys(rows))


def _scale(spec):
    if spec.kind != Project.Kind.RATING:
        return None
    preset = protocol.RATING_PRESETS.get(spec.preset or protocol.DEFAULT_RATING_PRESET)
    if preset is None:
        raise ValidationError(
            {"preset": f"unknown preset {spec.preset!r}; choose from " + ", ".join(protocol.RATING_PRESETS)}
        )
    scale = [(int(v), str(label).strip()) for v, label in (spec.scale or preset["scale"])]
    values = [v for v, _ in scale]
    if len(scale) < 2 or values != list(range(values[0], values[0] + len(values))):
        raise ValidationError({"scale": "a scale needs at least two consecutive integer points, in order"})
    if len(scale) > 11:
        raise ValidationError({"scale": "a scale has at most 11 points"})
    return scale, preset


_NOT_CHECKED = ["systems", "annotators", "label_set", "created_by", "dataset"]  # set by the platform


def create_project(spec, *, created_by=None):
    """Create a project from a ProjectSpec; raises ValidationError naming the field at fault."""
    try:
        check_unit_name(spec.name)
    except ValidationError as exc:
        raise ValidationError({"name": exc.messages}) from None
    if Project.objects.filter(name=spec.name).exists():
        raise ValidationError({"name": f"a project named {spec.name!r} already exists"})
    if spec.kind not in Project.Kind.values:
        raise ValidationError({"kind": f"kind must be one of {', '.join(Project.Kind.values)}"})
    if not 1 <= int(spec.annotators_per_video) <= 50:
        raise ValidationError({"annotators_per_video": "annotators per video must be between 1 and 50"})
    if spec.rationale not in Project.Rationale.values:
        raise ValidationError({"rationale": f"rationale must be one of {', '.join(Project.Rationale.values)}"})
    dataset = spec.dataset
    # Human caption sets (references made into systems, e.g. by a DA campaign) are judged only when named: by
    # default annotators would see a reference paragraph as if a model had written it.
    systems = (
        _resolve(dataset, System, spec.systems, "name", "systems")
        if spec.systems
        else list(System.objects.filter(dataset=dataset, is_human=False))
    )
    if not systems:
        humans = list(System.objects.filter(dataset=dataset, is_human=True).values_list("name", flat=True))
        raise ValidationError(
            {
                "systems": f"dataset {dataset.name} has no systems (no captions) to judge"
                + (
                    f"; its human caption sets ({', '.join(humans)}) are judged only when chosen explicitly"
                    if humans
                    else ""
                )
            }
        )
    with_captions = set(
        Caption.objects.filter(video__dataset=dataset, system__in=systems).values_list("video_id", flat=True).distinct()
    )
    if spec.videos:
        videos = _resolve(dataset, Video, spec.videos, "external_id", "videos")
        empty = [v.external_id for v in videos if v.pk not in with_captions]
        if empty:
            raise ValidationError(
                {"videos": "no caption of the chosen systems for video " + ", ".join(repr(e) for e in empty[:10])}
            )
    else:
        videos = [
            v
            for v in Video.objects.filter(dataset=dataset).order_by("position", "external_id")
            if v.pk in with_captions
        ]
    if not videos:
        raise ValidationError({"videos": "no video has a caption of the chosen systems"})
    scale = _scale(spec)
    if scale:
        default_instructions, question = scale[1]["instructions"], spec.question or scale[1]["question"]
    else:
        default_instructions, question = protocol.DEFAULT_INSTRUCTIONS, ""
    with transaction.atomic():
        project = Project(
            name=spec.name,
            dataset=dataset,
            kind=spec.kind,
            description=spec.description,
            annotators_per_video=int(spec.annotators_per_video),
            shuffle_systems=bool(spec.shuffle_systems),
            instructions=spec.instructions.strip() or default_instructions,
            question=question,
            scale_min=scale[0][0][0] if scale else 1,
            scale_max=scale[0][-1][0] if scale else 5,
            rationale=spec.rationale,
            created_by=created_by,
        )
        project.full_clean(exclude=_NOT_CHECKED, validate_unique=False)  # lengths: SQLite does not enforce them
        project.save()
        project.systems.set(systems)
        ProjectVideo.objects.bulk_create(
            [
                ProjectVideo(project=project, video=v, position=i, capacity=project.annotators_per_video)
                for i, v in enumerate(videos)
            ],
            batch_size=2000,
        )
        refresh_after_bulk_load(ProjectVideo)
        if scale:
            ScaleAnchor.objects.bulk_create([ScaleAnchor(project=project, value=v, label=text) for v, text in scale[0]])
        for username in spec.usernames:
            add_member(project, invite(username)[0])
    return project


def add_member(project, annotator):
    ProjectMember.objects.get_or_create(project=project, annotator=annotator)
    return annotator


def invite_to_project(project, username, *, email=""):
    """Invite ``username`` (a new account is made when needed). The result carries the invitation link while
    the account has not been activated, so re-inviting someone who lost their link shows a working one."""
    invited = invite_with_link(username, email=email)
    add_member(project, invited.annotator)
    return invited


def reissue_invitation(project, username):
    """A fresh invitation link (a path) for ``username``, invited to ``project`` but never activated; the lost
    link stops working. ValidationError when the account is not invited here or has activated already."""
    from annotation_site.annotators.services import InvitationError
    from annotation_site.annotators.services import reissue_invitation as reissue

    member = (
        ProjectMember.objects.filter(project=project, annotator__user__username=username)
        .select_related("annotator__user")
        .first()
    )
    if member is None:
        raise ValidationError({"username": f"{username} is not invited to project {project.name}"})
    try:
        return reissue(member.annotator.user)
    except InvitationError as exc:
        raise ValidationError({"username": str(exc)}) from None


def remove_member(project, annotator):
    """Stop inviting an annotator; their judgments stay (the statistics still count them)."""
    ProjectMember.objects.filter(project=project, annotator=annotator).delete()


def is_member(project, annotator):
    return annotator is not None and ProjectMember.objects.filter(project=project, annotator=annotator).exists()


def update_project(
    project,
    *,
    instructions=None,
    description=None,
    annotators_per_video=None,
    question=None,
    anchors=None,
    rationale=None,
):
    """Change what may change after creation; the systems, videos and kind stay as created."""
    if annotators_per_video is not None and not 1 <= int(annotators_per_video) <= 50:
        raise ValidationError({"annotators_per_video": "annotators per video must be between 1 and 50"})
    with transaction.atomic():
        for name, value in (
            ("instructions", instructions),
            ("description", description),
            ("annotators_per_video", annotators_per_video),
            ("question", question),
            ("rationale", rationale),
        ):
            if value is not None:
                setattr(project, name, value)
        project.full_clean(exclude=_NOT_CHECKED)
        project.save()
        # every time, not only when the overlap is given: this save writes every field, so a request that read
        # the project before another changed its overlap writes its older value back, and the copies must follow
        capacity.follow(ProjectVideo.objects.filter(project=project), project.annotators_per_video)
        if anchors is not None and project.is_rating:
            longest = ScaleAnchor._meta.get_field("label").max_length
            for anchor in ScaleAnchor.objects.filter(project=project):
                if anchor.value in anchors:
                    label = anchors[anchor.value].strip()
                    if len(label) > longest:
                        raise ValidationError(
                            {"anchors": f"the label of {anchor.value} has more than {longest} characters"}
                        )
                    anchor.label = label or anchor.label
                    anchor.save(update_fields=["label"])
    return project


def set_status(project, status):
    return units.set_status(project, status)


def scale_of(project):
    """``[(value, anchor label)]`` of a project's scale, best last (factuality: the protocol's, 1..5)."""
    if not project.is_rating:
        return sorted(protocol.FACTUALITY_SCALE)
    return list(ScaleAnchor.objects.filter(project=project).order_by("value").values_list("value", "label"))


def projects_for(annotator):
    """The open and closed projects an annotator is invited to, with their own counts (one query)."""
    return units.units_for(Project.objects.all(), annotator)


def progress(project):
    """Counts of a project and per annotator (4 queries whatever the size)."""
    slots = units.slot_counts(ProjectVideo.objects.filter(project=project), project.annotators_per_video)
    per_annotator = units.assignment_counts(Assignment.objects.filter(project=project))
    times = {}
    for annotator_id, seconds, played in Submission.objects.filter(
        assignment__project=project, is_current=True
    ).values_list("annotator_id", "time_spent", "video_played"):
        entry = times.setdefault(annotator_id, {"seconds": [], "played": 0})
        entry["seconds"].append(seconds)
        entry["played"] += bool(played)
    rows = []
    for annotator, invited in units.annotators_of(
        ProjectMember.objects.filter(project=project), per_annotator, Annotator
    ):
        counts = per_annotator.get(annotator.pk, {})
        rows.append(
            {
                "annotator": annotator,
                "invited": invited,
                "assigned": counts.get("assigned", 0),
                "awaits_activation": annotator.user_id is not None and awaits_activation(annotator.user),
                "submitted": counts.get("submitted", 0),
                "median_seconds": units.median_seconds(times.get(annotator.pk, {}).get("seconds", [])),
                "played": times.get(annotator.pk, {}).get("played", 0),
            }
        )
    return {
        "videos": slots.units,
        "full_videos": slots.full,
        **units.totals(slots, project.annotators_per_video, rows),
    }
