"""Aggregating annotators' judgments into final labels, as the ActivityNet-Fact paper does (Liu & Wan 2023,
section 3.2): paragraph score = median of the annotators, sentence label = majority, word label = majority per
token. The paper used three annotators, where no ties arise; for even counts (two or four annotators, or a
skipped paragraph) our tie rule is a parameter:

- ``ties="error"`` (default): half the annotators seeing an error is enough. The paragraph score is the
  lower median (of 2 and 3 -> 2; of 3, 4, 4, 5 -> 4), a sentence flagged by half its annotators is erroneous,
  a token marked by half is erroneous.
- ``ties="no_error"``: the upper median; a strict majority is needed for an error.

Both rules lean the same way at every level, so a token marked by a majority always lies in a sentence
flagged by a majority (a span flags its sentence). The converse does not hold: annotators may agree that a
sentence is wrong but mark different words; such a sentence stays erroneous with no span
(``errors_without_spans`` counts them; the FactVC format cannot spell them, see docs/factuality.md).

Aggregated spans are the maximal runs of consecutive majority tokens.

The functions here are pure (DataFrames in, plain values out); ``write_label_set`` stores the result.
"""

from dataclasses import dataclass, field

from django.db import transaction

from . import frames
from .models import Aggregation, ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel

TIES = ("error", "no_error")


def median_score(scores, ties="error"):
    """The median of integer scores; for an even count, the lower (``ties="error"``) or upper middle value."""
    values = sorted(scores)
    if not values:
        raise ValueError("no scores")
    n = len(values)
    if n % 2:
        return values[n // 2]
    return values[n // 2 - 1] if ties == "error" else values[n // 2]


def majority(votes_for, voters, ties="error"):
    """True when ``votes_for`` of ``voters`` is a majority; exactly half decides by ``ties``."""
    if voters <= 0:
        raise ValueError("no voters")
    if 2 * votes_for == voters:
        return ties == "error"
    return 2 * votes_for > voters


def runs(indices):
    """Sorted token indices -> maximal runs ``[(start, end)]``, end exclusive."""
    spans = []
    for i in sorted(indices):
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def token_marks(sentence_frame):
    """``{(sentence_id, annotator_id): (error, set of marked token indices)}`` from a sentences frame."""
    marks = {}
    columns = [sentence_frame[c].tolist() for c in ("sentence_id", "annotator_id", "error", "start", "end")]
    for sentence_id, annotator_id, error, start, end in zip(*columns):
        entry = marks.setdefault((int(sentence_id), int(annotator_id)), (bool(error), set()))
        if start is not None and start == start:  # not None, not NaN
            entry[1].update(range(int(start), int(end)))
    return marks


@dataclass
class Aggregate:
    paragraphs: dict = field(default_factory=dict)  # caption_id -> score
    sentences: dict = field(default_factory=dict)  # sentence_id -> error (bool)
    spans: dict = field(default_factory=dict)  # sentence_id -> [(start, end)]
    ties: str = "error"

    @property
    def errors_without_spans(self):
        return sum(1 for sentence_id, error in self.sentences.items() if error and not self.spans.get(sentence_id))


def aggregate(paragraph_frame, sentence_frame, ties="error", marks=None):
    """Final labels from the annotators' judgments (frames as loaded by ``frames``; ``marks``: the
    ``token_marks`` of the sentence frame, when already computed)."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}")
    result = Aggregate(ties=ties)
    for caption_id, scores in paragraph_frame.groupby("caption_id")["score"]:
        result.paragraphs[int(caption_id)] = int(median_score([int(s) for s in scores], ties))
    by_sentence = {}
    for (sentence_id, _), (error, marked) in (marks or token_marks(sentence_frame)).items():
        by_sentence.setdefault(sentence_id, []).append((error, marked))
    for sentence_id, judgments in by_sentence.items():
        voters = len(judgments)
        result.sentences[sentence_id] = majority(sum(error for error, _ in judgments), voters, ties)
        counts = {}
        for _, marked in judgments:
            for i in marked:
                counts[i] = counts.get(i, 0) + 1
        spans = runs(i for i, n in counts.items() if majority(n, voters, ties))
        if spans:
            result.spans[sentence_id] = spans
    return result


def aggregate_project(project, ties="error"):
    return aggregate(frames.paragraphs(project), frames.sentences(project), ties)


class LabelSetNameTaken(Exception):
    pass


def write_label_set(project, result, *, name=None, created_by=None):
    """Store an aggregate as the project's LabelSet (origin "aggregated", named after the project unless
    ``name`` is given), replacing its previous contents in one transaction; records an Aggregation row."""
    name = name or project.name
    with transaction.atomic():
        label_set = LabelSet.objects.select_for_update().filter(dataset=project.dataset, name=name).first()
        if label_set is not None and (
            label_set.origin != LabelSet.Origin.AGGREGATED
            or not label_set.aggregations.filter(project=project).exists()
        ):
            raise LabelSetNameTaken(
                f"dataset {project.dataset.name} already has a label set {name!r} that does not come from this project"
            )
        if label_set is None:
            label_set = LabelSet.objects.create(
                dataset=project.dataset,
                name=name,
                origin=LabelSet.Origin.AGGREGATED,
                source=f"factuality project {project.name}",
            )
        else:
            ParagraphLabel.objects.filter(label_set=label_set).delete()
            SentenceLabel.objects.filter(label_set=label_set).delete()  # spans go with them
        ParagraphLabel.objects.bulk_create(
            [ParagraphLabel(label_set=label_set, caption_id=c, score=s) for c, s in sorted(result.paragraphs.items())],
            batch_size=2000,
        )
        labels = SentenceLabel.objects.bulk_create(
            [SentenceLabel(label_set=label_set, sentence_id=s, error=e) for s, e in sorted(result.sentences.items())],
            batch_size=2000,
        )
        spans = [
            ErrorSpan(sentence_label=label, start=start, end=end)
            for label in labels
            for start, end in result.spans.get(label.sentence_id, [])
        ]
        ErrorSpan.objects.bulk_create(spans, batch_size=2000)
        label_set.source = f"factuality project {project.name} (median / majority, ties: {result.ties})"
        label_set.save(update_fields=["source"])
        run = Aggregation.objects.create(
            project=project,
            label_set=label_set,
            ties=result.ties,
            captions=len(result.paragraphs),
            sentences=len(result.sentences),
            spans=len(spans),
            errors_without_spans=result.errors_without_spans,
            created_by=created_by,
        )
        if project.label_set_id != label_set.pk:
            project.label_set = label_set
            project.save(update_fields=["label_set"])
    return run
