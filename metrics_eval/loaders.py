"""Thin loaders: querysets to pandas DataFrames, one ``values_list`` query each (the statistics never query).

Every function here issues a fixed number of queries whatever the size of the dataset.
"""

import pandas as pd
from django.db.models import Count

from annotation_site.corpus.models import Caption, Reference, Sentence
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel

from . import human
from .models import CaptionPair, Metric, MetricScore, PairScore


class HumanScoresUnavailable(Exception):
    """The human judgments asked for do not exist (yet). ``field`` names the parameter that asked for them, as
    ``analysis.ParameterError`` does (``labels``, ``campaign``, ``metrics``, ``human``), so the API answers every
    refusal with it under ``fields``."""

    def __init__(self, message, *, field):
        super().__init__(message)
        self.field = field


class UnknownCampaign(HumanScoresUnavailable):
    """No DA campaign has the name asked for: a page named by it answers 404."""

    def __init__(self, name):
        super().__init__(f"no DA campaign named {name!r}", field="campaign")


def captions(dataset):
    """[caption_id, video_id, system, is_human] in dataset order (videos, then systems); ``is_human``: the
    caption belongs to a human system (a set of human captions, e.g. made from a reference set)."""
    rows = (
        Caption.objects.filter(video__dataset=dataset)
        .order_by("video__position", "video__external_id", "system__position", "system__name")
        .values_list("pk", "video__external_id", "system__name", "system__is_human")
    )
    frame = pd.DataFrame(list(rows), columns=["caption_id", "video_id", "system", "is_human"])
    frame["is_human"] = frame["is_human"].astype(bool)
    return frame


def caption_texts(dataset):
    """{caption_id: text}, the caption's sentences joined by spaces."""
    texts = {}
    for caption_id, text in (
        Sentence.objects.filter(caption__video__dataset=dataset)
        .order_by("caption_id", "index")
        .values_list("caption_id", "text")
    ):
        texts[caption_id] = f"{texts[caption_id]} {text}" if caption_id in texts else text
    return texts


def references(dataset, reference_sets=None):
    """{video_id: [reference paragraph, ...]} (every reference set, or only those named)."""
    return {
        video_id: [text for _, text in paragraphs]
        for video_id, paragraphs in references_with_sets(dataset, reference_sets).items()
    }


def references_with_sets(dataset, reference_sets=None):
    """{video_id: [(reference_set, paragraph), ...]}, in the order of ``references``."""
    queryset = Reference.objects.filter(video__dataset=dataset)
    if reference_sets:
        queryset = queryset.filter(reference_set__in=reference_sets)
    grouped = {}
    for video_id, reference_set, text in queryset.order_by(
        "video__position", "video__external_id", "reference_set"
    ).values_list("video__external_id", "reference_set", "text"):
        grouped.setdefault(video_id, []).append((reference_set, text))
    return grouped


def metrics(dataset):
    """The dataset's metrics, each annotated with ``n_scores``."""
    return list(Metric.objects.filter(dataset=dataset).annotate(n_scores=Count("scores")).order_by("source", "name"))


def metric_scores(dataset, names):
    """Wide DataFrame indexed by caption_id, one column per metric name (in the order given)."""
    rows = MetricScore.objects.filter(metric__dataset=dataset, metric__name__in=list(names)).values_list(
        "caption_id", "metric__name", "score"
    )
    long = pd.DataFrame(list(rows), columns=["caption_id", "metric", "score"])
    wide = long.pivot(index="caption_id", columns="metric", values="score") if len(long) else pd.DataFrame()
    return wide.reindex(columns=list(names)).astype(float)


def label_set(dataset, name=None):
    """The named label set, or the imported one (then the only one); raises HumanScoresUnavailable."""
    sets = list(LabelSet.objects.filter(dataset=dataset))
    if name:
        found = [s for s in sets if s.name == name]
    else:
        found = [s for s in sets if s.name == "imported"] or (sets if len(sets) == 1 else [])
    if not found:
        available = f"its label sets: {', '.join(sorted(s.name for s in sets))}" if sets else "it has no label sets"
        wanted = f"label set {name!r}" if name else "default label set (one named imported, or the only one)"
        raise HumanScoresUnavailable(f"dataset {dataset.name} has no {wanted}; {available}", field="labels")
    return found[0]


def factuality(label_set_obj):
    """Per-caption paragraph / sentence / word scores of a label set (three queries)."""
    paragraphs = pd.DataFrame(
        list(ParagraphLabel.objects.filter(label_set=label_set_obj).values_list("caption_id", "score")),
        columns=["caption_id", "score"],
    )
    sentences = pd.DataFrame(
        list(
            SentenceLabel.objects.filter(label_set=label_set_obj).values_list(
                "pk", "sentence__caption_id", "error", "sentence__tokens"
            )
        ),
        columns=["label_id", "caption_id", "error", "tokens"],
    )
    spans = pd.DataFrame(
        list(
            ErrorSpan.objects.filter(sentence_label__label_set=label_set_obj).values_list(
                "sentence_label_id", "start", "end"
            )
        ),
        columns=["label_id", "start", "end"],
    )
    return human.factuality_scores(paragraphs, sentences, spans)


def _da_results():
    """assessment.results, imported lazily, so this app works (without DA) where the assessment app does not
    provide it."""
    try:
        from assessment import results as da_results
    except ImportError as exc:
        raise HumanScoresUnavailable(
            f"Direct Assessment results are not available in this installation ({exc}); they come with the "
            "assessment app (assessment/results.py)",
            field="human",
        ) from None
    return da_results


def campaign(name):
    """The DA campaign named ``name`` (its dataset selected); raises UnknownCampaign, or HumanScoresUnavailable
    without the assessment app."""
    _da_results()
    from assessment.models import Campaign

    found = Campaign.objects.select_related("dataset").filter(name=name).first()
    if found is None:
        raise UnknownCampaign(name)
    return found


def campaigns():
    """[(campaign name, dataset name)] of every DA campaign, by name (one query); none without the assessment
    app."""
    try:
        _da_results()
    except HumanScoresUnavailable:
        return []
    from assessment.models import Campaign

    return list(Campaign.objects.order_by("name").values_list("name", "dataset__name"))


def da_campaign(name):
    """(campaign, caption scores, system scores, workers by QC status) of a DA campaign, from the contract of
    assessment/results.py, ``scores(campaign)`` (one analysis): caption scores [video_id, system, raw, z, n,
    is_human], system scores [system, raw, z, n, is_human] (a system's scores are the means of its captions'
    scores) and {status: workers}. Imported lazily (``campaign``)."""
    found = campaign(name)
    scores = _da_results().scores(found)
    return found, scores.captions, scores.systems, scores.workers_by_status


def pair_sets(dataset):
    return list(
        CaptionPair.objects.filter(dataset=dataset).order_by("pair_set").values_list("pair_set", flat=True).distinct()
    )


PAIR_COLUMNS = [
    "pair_id",
    "pair_set",
    "video_id",
    "correct_id",
    "foil_id",
    "correct_system",
    "foil_system",
    "correct_human",
    "foil_human",
]


def caption_pairs(dataset, pair_set=None):
    """[pair_id, pair_set, video_id, correct_id, foil_id, correct_system, foil_system, correct_human, foil_human]
    of a pair set (of every pair set when ``pair_set`` is None); ``*_human``: the caption is of a human system."""
    queryset = CaptionPair.objects.filter(dataset=dataset)
    if pair_set is not None:
        queryset = queryset.filter(pair_set=pair_set)
    rows = queryset.order_by("id").values_list(
        "pk",
        "pair_set",
        "correct__video__external_id",
        "correct_id",
        "foil_id",
        "correct__system__name",
        "foil__system__name",
        "correct__system__is_human",
        "foil__system__is_human",
    )
    frame = pd.DataFrame(list(rows), columns=PAIR_COLUMNS)
    for column in ("correct_human", "foil_human"):
        frame[column] = frame[column].astype(bool)
    return frame


def pair_scores(dataset, pair_set, names):
    """[pair_id, metric, correct, foil]: the stored scores of the pairs with a human caption (PairScore; NaN
    where no reference was left) of the metrics ``names`` in a pair set."""
    rows = PairScore.objects.filter(
        pair__dataset=dataset, pair__pair_set=pair_set, metric__name__in=list(names)
    ).values_list("pair_id", "metric__name", "correct", "foil")
    frame = pd.DataFrame(list(rows), columns=["pair_id", "metric", "correct", "foil"])
    return frame.astype({"correct": float, "foil": float})
