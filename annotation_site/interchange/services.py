"""Writing a validated DatasetBundle to the database, and building one from it.

``import_bundle`` writes everything in one transaction with ``bulk_create`` (a constant number of queries per
table, whatever the size); ``export_bundle`` reads a dataset back with one query per table.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video, check_unit_name
from annotation_site.corpus.protection import HumanWorkAtRisk, refuse_if_human_work
from annotation_site.db_statistics import refresh_after_bulk_load
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, Project, SentenceLabel
from annotation_site.uploads import UploadRefused

from . import factvc, formats
from .bundle import CaptionData, DatasetBundle, FormatError, ReferenceData, SentenceData, VideoData

DEFAULT_LABEL_SET = "imported"
# how each entry point asks for a replace (the refusal of an existing name is the same text on all of them)
REPLACE_OPTION = "--replace (API: replace=true; import page: the box “Replace an existing dataset”)"
_BATCH = 2000


class NothingToExport(Exception):
    """There is nothing of that kind to export yet (e.g. a project without aggregated labels)."""


class ImportRefused(Exception):
    """The import cannot go ahead: the dataset name is taken or invalid."""


class InvalidImportName(ImportRefused):
    """A name the request gives is not valid (the API answers 400, where a name taken is a conflict, 409)."""


@dataclass
class ImportResult:
    dataset: Dataset
    counts: dict
    label_set: LabelSet | None
    warnings: list


def import_bundle(
    bundle,
    *,
    name,
    source_format,
    replace=False,
    label_set_name=DEFAULT_LABEL_SET,
    label_source="",
    description="",
    force_delete_judgments=False,
):
    """Create dataset ``name`` from a validated bundle; with ``replace`` an existing one is replaced, unless
    people's judgments are on it (refused with what would be lost; ``force_delete_judgments`` deletes them)."""
    try:
        check_unit_name(name)
    except ValidationError as exc:
        raise InvalidImportName(f"invalid dataset name {name!r}: {exc.messages[0]}") from None
    longest = LabelSet._meta.get_field("name").max_length or 0
    if bundle.has_labels and len(label_set_name) > longest:  # past the column: a database error on PostgreSQL
        raise InvalidImportName(
            f"the label set name has {len(label_set_name)} characters; at most {longest} are allowed"
        )
    label_source = _fitted(label_source, LabelSet._meta.get_field("source").max_length or 0)
    replaced = None  # what a replace deleted besides the corpus, told in the warnings
    with transaction.atomic():
        existing = Dataset.objects.select_for_update().filter(name=name).first()
        if existing is not None:
            if not replace:
                raise ImportRefused(f"dataset {name!r} already exists: to replace it, repeat with {REPLACE_OPTION}")
            try:
                refuse_if_human_work(f"replacing dataset {name!r}", datasets=[existing], force=force_delete_judgments)
            except HumanWorkAtRisk as exc:
                raise ImportRefused(str(exc)) from exc
            _, deleted = existing.delete()
            replaced = _replaced_note(name, deleted)
        dataset = Dataset.objects.create(name=name, source_format=source_format, description=description)

        systems = System.objects.bulk_create(
            [System(dataset=dataset, name=n, is_human=h, position=i) for i, (n, h) in enumerate(bundle.systems)]
        )
        system_ids = {s.name: s.pk for s in systems}
        videos = Video.objects.bulk_create(
            [
                Video(
                    dataset=dataset,
                    external_id=v.video_id,
                    position=i,
                    url=v.url,
                    duration=v.duration,
                    status=Video.Status.EXTERNAL,
                )
                for i, v in enumerate(bundle.videos)
            ],
            batch_size=_BATCH,
        )
        video_ids = {v.external_id: v.pk for v in videos}
        captions = Caption.objects.bulk_create(
            [
                Caption(video_id=video_ids[c.video_id], system_id=system_ids[c.system], position=i, prompt=c.prompt)
                for i, c in enumerate(bundle.captions)
            ],
            batch_size=_BATCH,
        )
        sentences = Sentence.objects.bulk_create(
            [
                Sentence(caption_id=caption.pk, index=j, text=s.text, tokens=s.tokens, start=s.start, end=s.end)
                for caption, data in zip(captions, bundle.captions)
                for j, s in enumerate(data.sentences)
            ],
            batch_size=_BATCH,
        )
        Reference.objects.bulk_create(
            [
                Reference(video_id=video_ids[r.video_id], reference_set=r.reference_set, text=r.text)
                for r in bundle.references
            ],
            batch_size=_BATCH,
        )
        label_set = None
        if bundle.has_labels:
            label_set = _write_labels(dataset, bundle, captions, sentences, label_set_name, label_source)
        refresh_after_bulk_load(System, Video, Caption, Sentence, Reference)
    warnings = list(bundle.warnings) + ([replaced] if replaced else [])
    return ImportResult(dataset=dataset, counts=bundle.counts(), label_set=label_set, warnings=warnings)


# what a dataset is made of: replacing it replaces these, so they are not named as lost
_CORPUS_MODELS = {"corpus.dataset", "corpus.system", "corpus.video", "corpus.caption", "corpus.sentence"}
_CORPUS_MODELS |= {"corpus.reference"}


def _replaced_note(name, deleted):
    """What replacing dataset ``name`` deleted besides its corpus (metric scores, label sets, pair sets,
    projects and tasks without people's work: ``Model.delete()``'s counts), or None: the replace was silent
    about them, and a lab found its metric scores gone."""
    lost = {label: count for label, count in sorted(deleted.items()) if count and label.lower() not in _CORPUS_MODELS}
    if not lost:
        return None
    listed = ", ".join(f"{count} {apps.get_model(label)._meta.verbose_name_plural}" for label, count in lost.items())
    return f"replacing dataset {name!r} also deleted what belonged to the old one: {listed}"


def import_upload(data: Mapping[str, Any]) -> ImportResult:
    """Read an uploaded file and write it (the one path of the API and the import page). ``data``: ``file`` (an
    uploaded file), ``format``, ``name``, optional ``replace``, ``force_delete_judgments``, ``labels`` (label set
    name) and ``youtube``.
    Raises FormatError (nothing written) or ImportRefused."""
    uploaded = data["file"]
    try:
        bundle = formats.read_upload(data["format"], uploaded, youtube=data.get("youtube", True))
    except UnicodeDecodeError as exc:
        raise FormatError([f"{uploaded.name}: not UTF-8 text ({exc.reason})"]) from None
    except UploadRefused as exc:  # too big, a zip bomb, a corrupt archive, not UTF-8, a NUL character
        raise FormatError([str(exc)]) from None
    return import_bundle(
        bundle,
        name=data["name"],
        source_format=data["format"],
        replace=data.get("replace", False),
        label_set_name=data.get("labels") or DEFAULT_LABEL_SET,
        label_source=uploaded.name,
        force_delete_judgments=data.get("force_delete_judgments", False),
    )


def _fitted(description, longest):
    """A description of where something came from (a file's path), shortened to ``longest`` characters by
    dropping the start: the file's name is at the end."""
    return description if len(description) <= longest else "..." + description[-(longest - 3) :]


def _write_labels(dataset, bundle, captions, sentences, name, source):
    label_set = LabelSet.objects.create(dataset=dataset, name=name, origin=LabelSet.Origin.IMPORTED, source=source)
    ParagraphLabel.objects.bulk_create(
        [
            ParagraphLabel(label_set=label_set, caption_id=caption.pk, score=data.paragraph_score)
            for caption, data in zip(captions, bundle.captions)
            if data.paragraph_score is not None
        ],
        batch_size=_BATCH,
    )
    sentence_data = [s for data in bundle.captions for s in data.sentences]
    labelled = [(row, data) for row, data in zip(sentences, sentence_data) if data.error is not None]
    sentence_labels = SentenceLabel.objects.bulk_create(
        [SentenceLabel(label_set=label_set, sentence_id=row.pk, error=data.error) for row, data in labelled],
        batch_size=_BATCH,
    )
    ErrorSpan.objects.bulk_create(
        [
            ErrorSpan(sentence_label_id=label.pk, start=start, end=end)
            for label, (_, data) in zip(sentence_labels, labelled)
            for start, end in data.spans
        ],
        batch_size=_BATCH,
    )
    return label_set


def default_label_set(dataset):
    """The label set an export uses when none is named: the imported one, else the only one, else None."""
    sets = list(dataset.label_sets.all())
    for label_set in sets:
        if label_set.name == DEFAULT_LABEL_SET:
            return label_set
    return sets[0] if len(sets) == 1 else None


def export_bundle(dataset, *, label_set=None):
    """Build the bundle of a dataset (with the labels of ``label_set``, if given) in a fixed number of queries."""
    bundle = DatasetBundle()
    systems = list(
        System.objects.filter(dataset=dataset).order_by("position", "name").values_list("pk", "name", "is_human")
    )
    bundle.systems = [(name, is_human) for _, name, is_human in systems]
    system_names = {pk: name for pk, name, _ in systems}
    video_rows = list(
        Video.objects.filter(dataset=dataset)
        .order_by("position", "external_id")
        .values_list("pk", "external_id", "url", "duration")
    )
    video_names = {pk: external_id for pk, external_id, _, _ in video_rows}
    bundle.videos = [VideoData(video_id=e, url=u, duration=d) for _, e, u, d in video_rows]

    caption_rows = list(
        Caption.objects.filter(video__dataset=dataset)
        .order_by("position", "pk")
        .values_list("pk", "video_id", "system_id", "prompt")
    )
    sentences_of: dict = {}
    sentence_rows = (
        Sentence.objects.filter(caption__video__dataset=dataset)
        .order_by("caption_id", "index")
        .values_list("pk", "caption_id", "text", "tokens", "start", "end")
    )
    sentence_by_pk = {}
    for pk, caption_id, text, tokens, start, end in sentence_rows:
        data = SentenceData(text=text, tokens=tokens, start=start, end=end)
        sentences_of.setdefault(caption_id, []).append(data)
        sentence_by_pk[pk] = data

    scores = {}
    if label_set is not None:
        scores = dict(ParagraphLabel.objects.filter(label_set=label_set).values_list("caption_id", "score"))
        for sentence_id, error in SentenceLabel.objects.filter(label_set=label_set).values_list("sentence_id", "error"):
            sentence_by_pk[sentence_id].error = error
        spans = (
            ErrorSpan.objects.filter(sentence_label__label_set=label_set)
            .order_by("sentence_label__sentence_id", "start")
            .values_list("sentence_label__sentence_id", "start", "end")
        )
        for sentence_id, start, end in spans:
            sentence_by_pk[sentence_id].spans.append((start, end))

    bundle.captions = [
        CaptionData(
            video_id=video_names[video_id],
            system=system_names[system_id],
            sentences=sentences_of.get(pk, []),
            paragraph_score=scores.get(pk),
            prompt=prompt,
        )
        for pk, video_id, system_id, prompt in caption_rows
    ]
    bundle.references = [
        ReferenceData(video_id=video_names[video_id], reference_set=reference_set, text=text)
        for video_id, reference_set, text in Reference.objects.filter(video__dataset=dataset)
        .order_by("video__position", "video_id", "reference_set")
        .values_list("video_id", "reference_set", "text")
    ]
    return bundle


PROJECT_FACTVC_FILENAME = factvc.ANNOTATION


def project_factvc_text(project: Project) -> str:
    """The aggregated labels of a factuality project in the FactVC layout (brackets around error spans): exactly
    what ``export_dataset --format factvc --labels NAME`` writes. Raises NothingToExport before aggregation."""
    if project.label_set_id is None:
        raise NothingToExport(f"project {project.name} has no aggregated labels yet: aggregate it first")
    return factvc.write_annotation(export_bundle(project.dataset, label_set=project.label_set))
