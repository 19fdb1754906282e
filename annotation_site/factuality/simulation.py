"""Simulated annotators (the demo's factuality project, tests): raw labels in the raw-labels JSONL shape of
``raw_labels.py``, made from a label set by annotators who mostly agree with it, so that a project imported from
them (``raw_labels.import_lines``, the path of every raw-labels import) has an agreement report worth reading.

Each annotator, independently per caption and with a seeded NumPy Generator:
- paragraph score: the label's score moved one point down or up with probability ``score_noise`` (kept in 1-5);
- sentence error: the label flipped with probability ``error_noise``; a sentence newly judged erroneous gets one
  word marked, one no longer erroneous loses its spans;
- spans of a sentence that stays erroneous: each one's end moves by one word with probability ``span_noise``
  (inside the sentence, never empty).
"""

import json

import numpy as np

from .models import ErrorSpan, ParagraphLabel, SentenceLabel


def _gold(label_set, systems=None):
    """{caption id: {"video_id", "system", "score", "sentences": [(error, tokens, [(s, e)])]}} (three queries)."""
    paragraphs = ParagraphLabel.objects.filter(label_set=label_set)
    sentences = SentenceLabel.objects.filter(label_set=label_set)
    if systems is not None:
        paragraphs = paragraphs.filter(caption__system__in=systems)
        sentences = sentences.filter(sentence__caption__system__in=systems)
    gold = {}
    for caption_id, video, system, score in paragraphs.order_by(
        "caption__video__position", "caption__system__position", "caption_id"
    ).values_list("caption_id", "caption__video__external_id", "caption__system__name", "score"):
        gold[caption_id] = {"video_id": video, "system": system, "score": score, "sentences": {}}
    spans = {}
    for label_id, start, end in ErrorSpan.objects.filter(sentence_label__label_set=label_set).values_list(
        "sentence_label_id", "start", "end"
    ):
        spans.setdefault(label_id, []).append((start, end))
    for label_id, caption_id, index, error, tokens in sentences.values_list(
        "pk", "sentence__caption_id", "sentence__index", "error", "sentence__tokens"
    ):
        if caption_id in gold:
            gold[caption_id]["sentences"][index] = (bool(error), tokens, sorted(spans.get(label_id, [])))
    return gold


def _sentence(error, tokens, spans, rng, error_noise, span_noise):
    n = len(tokens)
    if rng.random() < error_noise:
        error = not error
        if error:
            word = int(rng.integers(n)) if n else 0
            return {"error": 1, "spans": [[word, word + 1]] if n else []}
        return {"error": 0, "spans": []}
    if not error:
        return {"error": 0, "spans": []}
    moved = []
    for start, end in spans:
        if rng.random() < span_noise:
            end = min(n, max(start + 1, end + int(rng.choice([-1, 1]))))
        if not moved or start >= moved[-1][1]:
            moved.append([start, end])
    return {"error": 1, "spans": moved}


def simulated_lines(label_set, annotators, *, rng, systems=None, score_noise=0.3, error_noise=0.08, span_noise=0.25):
    """The raw-labels JSONL text of ``annotators`` (names) judging every labelled caption of ``label_set`` (of
    ``systems`` only, if given)."""
    gold = _gold(label_set, systems)
    lines = []
    for caption in gold.values():
        for annotator in annotators:
            score = caption["score"]
            if score is not None and rng.random() < score_noise:
                score = int(np.clip(score + rng.choice([-1, 1]), 1, 5))
            sentences = [
                _sentence(*caption["sentences"][i], rng, error_noise, span_noise) for i in sorted(caption["sentences"])
            ]
            lines.append(
                {
                    "video_id": caption["video_id"],
                    "system": caption["system"],
                    "annotator": annotator,
                    "paragraph_score": score,
                    "sentences": sentences,
                }
            )
    return "".join(json.dumps(line) + "\n" for line in lines)
