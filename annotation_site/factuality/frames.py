"""Loaders: the judgments of a project as pandas DataFrames, one ``values_list`` query each. The statistics
(aggregation, agreement, scores) are pure functions over these frames and never touch the ORM.

- paragraphs: caption_id, annotator_id, score                  (current submissions, scored paragraphs)
- sentences:  sentence_id, caption_id, annotator_id, error, start, end   (one row per span; start/end NaN
              for a sentence without spans)
- tokens:     sentence_id, caption_id, index, tokens            (the sentences of the project's captions)
- captions:   caption_id, video_id, system                      (the project's captions: system names for
              reports, never for annotators)
- ratings:    caption_id, annotator_id, score, rationale        (rating projects)
"""

import pandas as pd

from annotation_site.corpus.models import Caption, Sentence

from .models import CaptionRating, ParagraphJudgment, SentenceJudgment

PARAGRAPHS = ["caption_id", "annotator_id", "score"]
SENTENCES = ["sentence_id", "caption_id", "annotator_id", "error", "start", "end"]
TOKENS = ["sentence_id", "caption_id", "index", "tokens"]
CAPTIONS = ["caption_id", "video_id", "system"]
RATINGS = ["caption_id", "annotator_id", "score", "rationale"]


def _frame(rows, columns):
    return pd.DataFrame.from_records(list(rows), columns=columns)


def _current(model, project, **filters):
    """The judgments (``model``: paragraph, sentence, rating) of the project's current submissions."""
    return model.objects.filter(submission__assignment__project=project, submission__is_current=True, **filters)


def paragraphs(project):
    return _frame(
        _current(ParagraphJudgment, project, score__isnull=False)
        .order_by("caption_id", "submission__annotator_id")
        .values_list("caption_id", "submission__annotator_id", "score"),
        PARAGRAPHS,
    )


def sentences(project):
    return _frame(
        _current(SentenceJudgment, project)
        .order_by("sentence_id", "submission__annotator_id", "spans__start")
        .values_list(
            "sentence_id",
            "sentence__caption_id",
            "submission__annotator_id",
            "error",
            "spans__start",
            "spans__end",
        ),
        SENTENCES,
    )


def project_captions(project):
    return Caption.objects.filter(video__factuality_project_videos__project=project, system__in=project.systems.all())


def tokens(project):
    return _frame(
        Sentence.objects.filter(caption__in=project_captions(project))
        .order_by("caption_id", "index")
        .values_list("pk", "caption_id", "index", "tokens"),
        TOKENS,
    )


def captions(project):
    return _frame(
        project_captions(project)
        .order_by("video__position", "system__position", "pk")
        .values_list("pk", "video__external_id", "system__name"),
        CAPTIONS,
    )


def ratings(project):
    return _frame(
        _current(CaptionRating, project, score__isnull=False)
        .order_by("caption_id", "submission__annotator_id")
        .values_list("caption_id", "submission__annotator_id", "score", "rationale"),
        RATINGS,
    )
