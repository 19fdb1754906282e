"""Operations on metric scores and caption pairs. Commands, the REST API, the pages and the Celery task are thin
adapters over these functions (one code path per operation)."""

from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction

from annotation_site import uploads
from annotation_site.corpus import services as corpus_services
from annotation_site.corpus.models import Caption, Dataset
from annotation_site.jobs import services as jobs

from . import loaders, score_import, text_metrics
from .models import CaptionPair, Metric, MetricScore, PairScore

COMPUTE_KIND = "metric-scores"
COMPUTE_STALE_AFTER = timedelta(hours=2)  # a computation without progress for this long is abandoned
# How a metric scored the captions of human systems, recorded in Metric.parameters["human_captions"]. Computed
# metrics score them leave-one-out; an imported metric may declare either value in its parameters.
HUMAN_LEAVE_ONE_OUT = "leave-one-out"
HUMAN_SCORING_VALID = {
    HUMAN_LEAVE_ONE_OUT: "scored leave-one-out against the other references",
    "reference-free": "scored without references",
}
# How a computed metric scored the pairs with a human caption, recorded in Metric.parameters["human_pairs"]:
# both captions of such a pair against the video's references without the human caption's own (PairScore).
HUMAN_PAIRS_SAME_REFERENCES = "both captions against the references without the human caption"
_BATCH = 2000


class MetricError(Exception):
    """An operation that cannot be done as asked (the message says why)."""


def caption_keys(dataset):
    """{(video_id, system): caption_id} of a dataset (one query)."""
    rows = Caption.objects.filter(video__dataset=dataset).values_list("video__external_id", "system__name", "pk")
    return {(video_id, system): pk for video_id, system, pk in rows}


def store_scores(dataset, name, scores, *, source, label="", version="", parameters=None, origin="", pair_scores=None):
    """Create or update the metric and replace all its scores by ``scores`` ({caption_id: score}) and its scores of
    pairs with a human caption by ``pair_scores`` ({pair_id: (correct, foil)}, None where not scored), atomically.
    Pairs deleted since they were read are skipped (their rows are locked until the scores are written)."""
    with transaction.atomic():
        metric, _ = Metric.objects.update_or_create(
            dataset=dataset,
            name=name,
            defaults={
                "source": source,
                "label": label,
                "version": version,
                "parameters": parameters or {},
                "origin": origin,
            },
        )
        MetricScore.objects.filter(metric=metric).delete()
        MetricScore.objects.bulk_create(
            [MetricScore(metric=metric, caption_id=caption_id, score=score) for caption_id, score in scores.items()],
            batch_size=_BATCH,
        )
        PairScore.objects.filter(metric=metric).delete()
        if pair_scores:
            present = set(
                CaptionPair.objects.select_for_update().filter(pk__in=list(pair_scores)).values_list("pk", flat=True)
            )
            PairScore.objects.bulk_create(
                [
                    PairScore(metric=metric, pair_id=pair_id, correct=correct, foil=foil)
                    for pair_id, (correct, foil) in pair_scores.items()
                    if pair_id in present
                ],
                batch_size=_BATCH,
            )
    return metric


def parse_names(text):
    """ "bleu4, meteor" -> ["bleu4", "meteor"] (order kept, duplicates dropped)."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n and n.strip()]
    return list(dict.fromkeys(names))


def check_compute_request(dataset, names, reference_sets=None):
    """Raise MetricError unless the metrics and reference sets can be computed for this dataset."""
    if not names:
        raise MetricError(f"name the metrics to compute: {', '.join(text_metrics.TEXT_METRICS)}")
    try:
        text_metrics.check_names(names)
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    available = corpus_services.reference_sets(dataset)
    if not available:
        raise MetricError(
            f"dataset {dataset.name} has no reference captions, so reference-based metrics cannot be computed"
        )
    unknown = [s for s in reference_sets or () if s not in available]
    if unknown:
        raise MetricError(f"unknown reference set(s) {', '.join(unknown)}; the dataset has {', '.join(available)}")
    return available


def human_pair_items(pairs, texts, with_sets):
    """The items (see text_metrics.score_captions) scoring both captions of every pair with a caption of a human
    system against the same references: the video's references without those the pair's human caption(s) are.
    Each pair set's correct captions and its foils are two result files (``text_metrics.PairBatch``), so both
    captions of a pair get the same CIDEr-D IDF. Keys: ("pair", pair_id, "correct" | "foil")."""
    items = []
    human = pairs.loc[pairs["correct_human"] | pairs["foil_human"]]
    for row in human.itertuples(index=False):
        references = with_sets.get(row.video_id, [])
        members = (
            ("correct", row.correct_id, row.correct_system, row.correct_human),
            ("foil", row.foil_id, row.foil_system, row.foil_human),
        )
        leave_out = frozenset().union(
            *(
                text_metrics.self_references(system, texts.get(caption_id, ""), references)
                for _, caption_id, system, is_human in members
                if is_human
            )
        )
        for role, caption_id, _, _ in members:
            batch = text_metrics.PairBatch(row.pair_set, role)
            items.append((("pair", row.pair_id, role), batch, row.video_id, texts.get(caption_id, ""), leave_out))
    return items


def compute_scores(dataset, names, *, reference_sets=None, progress=None):
    """Compute the text metrics for every caption of the dataset against its references and store them; the pairs
    with a caption of a human system are scored too, both captions against the same references (PairScore)."""
    names = parse_names(names)
    available = check_compute_request(dataset, names, reference_sets)
    captions = loaders.captions(dataset)
    texts = loaders.caption_texts(dataset)
    with_sets = loaders.references_with_sets(dataset, reference_sets)
    references = {video: [text for _, text in refs] for video, refs in with_sets.items()}
    items, human_captions, left_out = [], 0, 0
    for row in captions.itertuples(index=False):
        text = texts.get(row.caption_id, "")
        if row.is_human:  # never scored against the reference it is (docs/metrics.md, "Human systems")
            own = text_metrics.self_references(row.system, text, with_sets.get(row.video_id, []))
            human_captions += 1
            left_out += len(own)
            items.append((row.caption_id, row.system, row.video_id, text, own))
        else:
            items.append((row.caption_id, row.system, row.video_id, text))
    pair_items = human_pair_items(loaders.caption_pairs(dataset), texts, with_sets)
    results = text_metrics.score_captions(items + pair_items, references, names, progress=progress)
    pair_ids = list(dict.fromkeys(key[1] for key, *_ in pair_items))
    version = f"pycocoevalcap {text_metrics.package_version()}"
    used_sets = list(reference_sets) if reference_sets else available
    with transaction.atomic():
        for name in names:
            spec = text_metrics.TEXT_METRICS[name]
            scores = results[name]
            store_scores(
                dataset,
                name,
                {key: value for key, value in scores.items() if not isinstance(key, tuple)},
                source=Metric.Source.COMPUTED,
                label=spec.label,
                version=version,
                parameters={
                    **spec.parameters,
                    "tokenizer": text_metrics.TOKENIZER,
                    "reference_sets": used_sets,
                    "human_captions": HUMAN_LEAVE_ONE_OUT,
                    "human_pairs": HUMAN_PAIRS_SAME_REFERENCES,
                },
                pair_scores={
                    pair_id: (scores.get(("pair", pair_id, "correct")), scores.get(("pair", pair_id, "foil")))
                    for pair_id in pair_ids
                },
            )
    scored = {name: len([k for k in results[name] if not isinstance(k, tuple)]) for name in names}
    unscored = [item for item in items if not text_metrics.references_used(item, references.get(item[2]) or [])]
    unscored_pairs = {
        item[0][1] for item in pair_items if not text_metrics.references_used(item, references.get(item[2]) or [])
    }
    return {
        "captions": len(items),
        "scored": scored,
        "without_references": len(unscored),
        "human": {
            "captions": human_captions,
            "references_left_out": left_out,
            "without_other_references": sum(1 for item in unscored if len(item) > 4),
        },
        "pairs_with_human_captions": {"pairs": len(pair_ids), "without_other_references": len(unscored_pairs)},
    }


def computed_summary(result):
    """What ``compute_scores`` did, in words for the job's message and the command: the scores stored per metric
    out of the captions read, and why any caption has none (the job said "scored 16 captions (bleu4 12)" when four
    human captions had no other reference to be scored against)."""
    scored = ", ".join(f"{name} {n}" for name, n in result["scored"].items())
    text = f"{scored} of {result['captions']} captions"
    missing, human_only = result["without_references"], result["human"]["without_other_references"]
    if missing:
        why = "no reference to be scored against"
        if human_only:  # a human caption is never scored against the reference it is
            why += f"; {human_only} of them are human captions whose video has no other reference"
        text += f" ({missing} captions not scored: {why})"
    return text


class ComputeRunning(MetricError):
    """A computation of this dataset's metrics is already queued or running (``job``)."""

    def __init__(self, job):
        super().__init__(
            f"metrics of this dataset are already being computed (job {job.pk}, {job.status}"
            f"{': ' + job.message if job.message else ''}); wait for it to finish"
        )
        self.job = job


def running_compute_job(dataset):
    """The dataset's queued or running computation, if any (one silent for COMPUTE_STALE_AFTER is abandoned)."""
    return jobs.unfinished_job(f"dataset:{dataset.pk}", COMPUTE_KIND, stale_after=COMPUTE_STALE_AFTER)


def start_compute_job(dataset, names, *, reference_sets=None, user=None):
    """Start the computation as a job (progress in jobs.Job, scope ``dataset:<pk>``), off the caller: on a
    Celery worker with a broker, in a thread of this process on the embedded default. Raises ComputeRunning
    while another computation of the dataset is queued or running (never two at once)."""
    from .tasks import compute_metric_scores

    names = parse_names(names)
    check_compute_request(dataset, names, reference_sets)
    with transaction.atomic():
        # lock the dataset row so two clicks at once cannot both start (SQLite: IMMEDIATE transactions are serial)
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        running = running_compute_job(dataset)
        if running is not None:
            raise ComputeRunning(running)
        job = jobs.create_job(
            COMPUTE_KIND, scope=f"dataset:{dataset.pk}", user=user, message=f"waiting to start: {', '.join(names)}"
        )
        jobs.enqueue_off_request(job, compute_metric_scores, dataset.pk, names, list(reference_sets or []))
    # Not read back: the task never runs in the caller, so the job is still queued here. On the embedded default
    # the job's thread starts on commit and writes the row at once; a read here collided with that write on the
    # test suite's in-memory SQLite ("database table is locked", the job failed now and then).
    return job


def latest_compute_job(dataset):
    return jobs.latest_job(f"dataset:{dataset.pk}", COMPUTE_KIND)


@dataclass
class ImportResult:
    metrics: dict = field(default_factory=dict)  # name -> number of scores


def import_scores(dataset, text, filename, *, replace=False, version=None):
    """Import a score file (validated completely first, then written in one transaction).

    Raises score_import.FormatError with every problem found; ``version`` (given for the whole file) too long
    is one of them."""
    problems = score_import.ProblemList()
    score_file = score_import.read_scores(text, filename, problems)
    if version and (problem := score_import.version_problem(version)):
        problems.add(filename, f"the version given with it: {problem}")
    existing = dict(Metric.objects.filter(dataset=dataset).values_list("name", "source"))
    scores = score_import.check_scores(score_file, caption_keys(dataset), existing, replace=replace, problems=problems)
    with transaction.atomic():
        for name, values in scores.items():
            described = score_file.described.get(name, {})
            store_scores(
                dataset,
                name,
                values,
                source=Metric.Source.IMPORTED,
                version=version or described.get("version", ""),
                parameters=described.get("parameters", {}),
                origin=filename,
            )
    return ImportResult({name: len(values) for name, values in scores.items()})


def import_pairs(dataset, text, filename, *, pair_set, replace=False):
    """Import correct/foil pairs as pair set ``pair_set``; returns the number of pairs."""
    longest = CaptionPair._meta.get_field("pair_set").max_length
    if not score_import.NAME.match(pair_set or ""):
        raise MetricError(f"invalid pair set name {pair_set!r}")
    if len(pair_set) > longest:
        raise MetricError(f"the pair set name has {len(pair_set)} characters; at most {longest} are allowed")
    problems = score_import.ProblemList()
    rows = score_import.read_pairs(text, filename, problems)
    pairs = score_import.check_pairs(rows, filename, caption_keys(dataset), problems)
    existing = CaptionPair.objects.filter(dataset=dataset, pair_set=pair_set)
    if existing.exists() and not replace:
        raise MetricError(f"pair set {pair_set!r} already exists: choose another name, or replace it")
    with transaction.atomic():
        existing.delete()
        CaptionPair.objects.bulk_create(
            [CaptionPair(dataset=dataset, pair_set=pair_set, correct_id=a, foil_id=b) for a, b in pairs],
            batch_size=_BATCH,
        )
    return len(pairs)


def import_score_upload(dataset, upload, *, replace=False, version=None):
    """import_scores from an uploaded file (the API's and the page's one path); raises uploads.UploadRefused or
    score_import.FormatError."""
    return import_scores(dataset, uploads.upload_text(upload), upload.name, replace=replace, version=version)


def import_pairs_upload(dataset, upload, *, pair_set, replace=False):
    """import_pairs from an uploaded file (the API's and the page's one path)."""
    return import_pairs(dataset, uploads.upload_text(upload), upload.name, pair_set=pair_set, replace=replace)


class UnknownMetric(MetricError):
    """The dataset has no metric of the name given."""


def delete_metric(dataset, name):
    """Delete metric ``name`` of ``dataset`` with its caption and pair scores: the one way to remove a metric
    (``metric_scores --delete``, ``DELETE /api/metrics/datasets/NAME/metrics/METRIC/``, the dataset's metrics
    page), e.g. a mistyped import that would stay in every "all metrics" analysis. Stored reports keep their
    results and snapshot. Returns the number of caption scores deleted; raises UnknownMetric."""
    with transaction.atomic():
        metric = Metric.objects.select_for_update().filter(dataset=dataset, name=name).first()
        if metric is None:
            raise UnknownMetric(f"dataset {dataset.name} has no metric {name!r}")
        scores = MetricScore.objects.filter(metric=metric).count()
        metric.delete()
    return scores
