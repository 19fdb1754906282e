"""Reading factuality labels for display and summaries (a fixed number of queries per call)."""

from django.db.models import Avg, Count, Q

from annotation_site.corpus.models import Caption, Sentence

from .models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel


def label_sets(dataset):
    return list(LabelSet.objects.filter(dataset=dataset).order_by("name"))


def system_summary(label_set):
    """Per system: labelled captions, mean paragraph score, share of sentences with an error."""
    paragraphs = {
        row["caption__system__name"]: row
        for row in ParagraphLabel.objects.filter(label_set=label_set)
        .values("caption__system__name")
        .annotate(n=Count("id"), mean_score=Avg("score"))
    }
    sentences = {
        row["sentence__caption__system__name"]: row
        for row in SentenceLabel.objects.filter(label_set=label_set)
        .values("sentence__caption__system__name")
        .annotate(n=Count("id"), errors=Count("id", filter=Q(error=True)))
    }
    summary = []
    for system in label_set.dataset.systems.order_by("position", "name"):
        p = paragraphs.get(system.name, {})
        s = sentences.get(system.name, {})
        summary.append(
            {
                "system": system.name,
                "captions": p.get("n", 0),
                "mean_score": p.get("mean_score"),
                "sentence_error_rate": (s["errors"] / s["n"]) if s.get("n") else None,
            }
        )
    return summary


def video_captions(video, label_set=None):
    """The captions of a video for display: per caption its system, score and sentences, each sentence a list of
    (token, is_error) pairs. Four queries whatever the number of captions."""
    captions = list(Caption.objects.filter(video=video).select_related("system").order_by("system__position"))
    sentences = list(Sentence.objects.filter(caption__video=video).order_by("caption_id", "index"))
    scores, errors, spans = {}, {}, {}
    if label_set is not None:
        scores = dict(
            ParagraphLabel.objects.filter(label_set=label_set, caption__video=video).values_list("caption_id", "score")
        )
        errors = dict(
            SentenceLabel.objects.filter(label_set=label_set, sentence__caption__video=video).values_list(
                "sentence_id", "error"
            )
        )
        for sentence_id, start, end in ErrorSpan.objects.filter(
            sentence_label__label_set=label_set, sentence_label__sentence__caption__video=video
        ).values_list("sentence_label__sentence_id", "start", "end"):
            spans.setdefault(sentence_id, []).append((start, end))
    by_caption = {}
    for sentence in sentences:
        marked = set()
        for start, end in spans.get(sentence.pk, ()):
            marked.update(range(start, end))
        by_caption.setdefault(sentence.caption_id, []).append(
            {
                "index": sentence.index,
                "error": errors.get(sentence.pk),
                "tokens": [(token, i in marked) for i, token in enumerate(sentence.tokens)],
                "start": sentence.start,
                "end": sentence.end,
            }
        )
    return [
        {"system": c.system.name, "score": scores.get(c.pk), "sentences": by_caption.get(c.pk, [])} for c in captions
    ]
