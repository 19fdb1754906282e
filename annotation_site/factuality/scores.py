"""Caption-level factuality scores derived from labels, as the FactVC release computes them (Liu & Wan 2023):

- sentence level: the share of a caption's sentences that have an error;
- word level: the share of a caption's *words* inside error spans. Words, not tokens: punctuation tokens are
  not counted (docs/architecture.md, "Word-level share": 13.5 % of the words of ActivityNet-Fact are erroneous,
  12.5 % of its tokens). A word is a token with at least one letter or digit; ``UNK`` is a word.

Both also "higher is better" (1 - share), the direction of automatic metrics, for correlation studies.
``caption_scores`` is the pure function (metrics_eval calls it, or ``label_set_scores`` for a whole LabelSet).
"""

from functools import lru_cache

import pandas as pd

from annotation_site.corpus.models import Sentence

from .models import ErrorSpan, ParagraphLabel, SentenceLabel

SCORE_COLUMNS = [
    "caption_id",
    "video_id",
    "system",
    "paragraph_score",
    "sentences",
    "error_sentences",
    "sentence_error",
    "words",
    "error_words",
    "word_error",
    "sentence_score",
    "word_score",
]


@lru_cache(maxsize=65536)
def is_word(token):
    return any(ch.isalnum() for ch in token)


def caption_scores(sentences):
    """Scores of one caption from its labelled sentences, each ``(tokens, error, spans)`` with spans token
    ranges ``[(start, end)]``. Returns counts, ``sentence_error`` / ``word_error`` (shares, None without
    sentences or words) and ``sentence_score`` / ``word_score`` (1 - share)."""
    n_sentences = n_errors = n_words = n_error_words = 0
    for tokens, error, spans in sentences:
        n_sentences += 1
        n_errors += bool(error)
        marked = {i for start, end in spans for i in range(start, end)}
        for i, token in enumerate(tokens):
            if is_word(token):
                n_words += 1
                n_error_words += i in marked
    sentence_error = n_errors / n_sentences if n_sentences else None
    word_error = n_error_words / n_words if n_words else None
    return {
        "sentences": n_sentences,
        "error_sentences": n_errors,
        "sentence_error": sentence_error,
        "words": n_words,
        "error_words": n_error_words,
        "word_error": word_error,
        "sentence_score": None if sentence_error is None else 1 - sentence_error,
        "word_score": None if word_error is None else 1 - word_error,
    }


def corpus_shares(sentences):
    """Shares over a whole collection (micro average), as the paper's corpus statistics: the same keys as
    ``caption_scores`` over every sentence given."""
    return caption_scores(sentences)


def label_set_scores(label_set):
    """One row per labelled caption of a LabelSet: video, system, paragraph score and the derived scores
    (a DataFrame with SCORE_COLUMNS; four queries)."""
    paragraph = {
        c: (v, s, score)
        for c, v, s, score in ParagraphLabel.objects.filter(label_set=label_set).values_list(
            "caption_id", "caption__video__external_id", "caption__system__name", "score"
        )
    }
    labels = dict(SentenceLabel.objects.filter(label_set=label_set).values_list("sentence_id", "error"))
    spans = {}
    for sentence_id, start, end in ErrorSpan.objects.filter(sentence_label__label_set=label_set).values_list(
        "sentence_label__sentence_id", "start", "end"
    ):
        spans.setdefault(sentence_id, []).append((start, end))
    by_caption, names = {}, {}
    for pk, caption_id, video_id, system, tokens in (
        Sentence.objects.filter(labels__label_set=label_set)
        .order_by("caption_id", "index")
        .values_list("pk", "caption_id", "caption__video__external_id", "caption__system__name", "tokens")
    ):
        by_caption.setdefault(caption_id, []).append((tokens, labels[pk], spans.get(pk, [])))
        names[caption_id] = (video_id, system)
    rows = []
    for caption_id in sorted(set(paragraph) | set(by_caption)):
        video_id, system, score = paragraph.get(caption_id, names.get(caption_id, (None, None)) + (None,))
        rows.append(
            {
                "caption_id": caption_id,
                "video_id": video_id,
                "system": system,
                "paragraph_score": score,
                **caption_scores(by_caption.get(caption_id, [])),
            }
        )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)
