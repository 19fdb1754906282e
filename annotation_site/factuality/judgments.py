"""Storing answers: checking an answer against the video's presented captions, idempotent submission, drafts.

The answer of a video, as the page and the API send it (paragraphs in the order the annotator saw them):

    {"paragraphs": [{"score": 1-5 | null,
                     "sentences": [{"error": 0 | 1, "spans": [[start, end], ...]}, ...],   # factuality
                     "rationale": "..."}, ...]}                                            # rating (optional)

Hard problems (wrong shape, a score off the scale, spans outside the sentence or on an unflagged sentence, a
required rationale missing) refuse the answer. Soft problems (a paragraph without a score, a flagged sentence
without spans, a video that was never played) refuse it unless the annotator confirms; the submission records
that they did.

Playback: the page measures the real time the video played (static/js/playback-clock.js: seeking does not
count) and sends it as ``watched_seconds``; the server cuts it to the time since the video was handed out (its
own clock) and derives ``video_played`` from it (played at all). Without ``watched_seconds`` (embeds, API
clients, imports) the client's ``video_played`` stands, None meaning unknown.
"""

import json
import uuid as uuid_module
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation_site.corpus.tokens import validate_spans
from annotation_site.prepared_queries import Prepared
from annotation_site.workflow.answers import (  # noqa: F401 - re-exported: callers catch judgments.AnswerInvalid etc.
    MAX_DRAFT_BYTES,
    MAX_SECONDS,
    AnswerInvalid,
    AnswerReads,
    NeedsConfirmation,
    Refused,
    SubmissionConflict,
)
from annotation_site.workflow.answers import clean_seconds as _seconds
from annotation_site.workflow.answers import write_submissions as workflow_write

from .assignment import ProjectClosed, paragraph_letter
from .models import (
    Assignment,
    CaptionRating,
    ParagraphJudgment,
    Project,
    SentenceJudgment,
    SpanJudgment,
    Submission,
)

WATCH_SLACK_SECONDS = 1.0

# an assignment's current submission (at most one: a unique constraint), compiled once per connection; read by
# the annotation page (its state and the submission its drafts are based on) and by drafts
_CURRENT = Prepared(
    lambda assignment_id: (
        Submission.objects.filter(assignment_id=assignment_id, is_current=True)
        .only("pk", "client_uuid", "time_spent", "video_played", "watched_seconds")
        .order_by()[:1]
    ),
    assignment_id=-914_270_041,
)
# a submit's lock of the assignment's row and its lookup of the UUID (and of a current answer)
_READS = AnswerReads(
    Submission,
    Assignment,
    unit="video",
    sentinels=(uuid_module.UUID("00000000-0000-4000-8000-000914270061"), -914_270_062, -914_270_063),
)


@dataclass
class Problem:
    message: str
    code: str = "invalid"
    paragraph: int | None = None  # index in the presented order
    sentence: int | None = None

    def as_dict(self):
        return {"code": self.code, "message": self.message, "paragraph": self.paragraph, "sentence": self.sentence}


@dataclass
class SentenceAnswer:
    sentence_id: int
    error: bool
    spans: list = field(default_factory=list)


@dataclass
class ParagraphAnswer:
    caption_id: int
    score: int | None
    sentences: list = field(default_factory=list)
    rationale: str = ""


class StaleDraft(Exception):
    """A draft written by a page that predates the assignment's current submission (e.g. a late autosave of the
    page that has just submitted): it must not shadow the submitted answer."""


@dataclass
class SubmitResult:
    submission: Submission
    created: bool


def _is_score(value, low, high):
    return type(value) is int and low <= value <= high


def check_answer(project, presented, data):
    """Check an answer; return ``(paragraphs, problems, soft_problems)`` with ``paragraphs`` a list of
    ParagraphAnswer (only meaningful when ``problems`` is empty)."""
    problems, soft, cleaned = [], [], []
    paragraphs = data.get("paragraphs") if isinstance(data, dict) else None
    if not isinstance(paragraphs, list) or len(paragraphs) != len(presented):
        return [], [Problem(f"the answer must list {len(presented)} paragraphs", code="shape")], []
    low, high = (project.scale_min, project.scale_max) if project.is_rating else (1, 5)
    for p_index, ((caption, sentences), entry) in enumerate(zip(presented, paragraphs)):
        name = f"Paragraph {paragraph_letter(p_index)}"
        if not isinstance(entry, dict):
            problems.append(Problem(f"{name}: must be an object", code="shape", paragraph=p_index))
            continue
        score = entry.get("score")
        if score is None:
            soft.append(Problem(f"{name} has no score yet.", code="missing_score", paragraph=p_index))
        elif not _is_score(score, low, high):
            problems.append(
                Problem(
                    f"{name}: the score must be a whole number from {low} to {high}, not {score!r}",
                    code="score",
                    paragraph=p_index,
                )
            )
            score = None
        rationale = entry.get("rationale") or ""
        if not isinstance(rationale, str) or len(rationale) > 5000:
            problems.append(
                Problem(
                    f"{name}: the rationale must be text of at most 5000 characters",
                    code="rationale",
                    paragraph=p_index,
                )
            )
            rationale = ""
        if project.is_rating:
            if project.rationale == Project.Rationale.REQUIRED and not rationale.strip():
                problems.append(
                    Problem(
                        f"{name}: please give a short reason for your rating.",
                        code="missing_rationale",
                        paragraph=p_index,
                    )
                )
            cleaned.append(ParagraphAnswer(caption_id=caption.pk, score=score, rationale=rationale.strip()))
            continue
        raw_sentences = entry.get("sentences")
        if not isinstance(raw_sentences, list) or len(raw_sentences) != len(sentences):
            problems.append(
                Problem(f"{name}: must list its {len(sentences)} sentences", code="shape", paragraph=p_index)
            )
            continue
        answers = []
        for s_index, (sentence, raw) in enumerate(zip(sentences, raw_sentences)):
            where = f"{name}, sentence {s_index + 1}"
            spot = {"paragraph": p_index, "sentence": s_index}
            if not isinstance(raw, dict) or type(raw.get("error")) not in (int, bool) or raw["error"] not in (0, 1):
                problems.append(Problem(f"{where}: error must be 0 or 1", code="shape", **spot))
                continue
            error = bool(raw["error"])
            try:
                spans = validate_spans(raw.get("spans") or [], len(sentence.tokens))
            except ValueError as exc:
                problems.append(Problem(f"{where}: {exc}", code="spans", **spot))
                continue
            if spans and not error:
                problems.append(
                    Problem(f"{where}: words are marked but the sentence is not flagged", code="spans", **spot)
                )
            elif error and not spans:
                soft.append(
                    Problem(
                        f"{where} is flagged as erroneous but no words are marked.",
                        code="flagged_without_spans",
                        **spot,
                    )
                )
            answers.append(SentenceAnswer(sentence_id=sentence.pk, error=error, spans=spans))
        cleaned.append(ParagraphAnswer(caption_id=caption.pk, score=score, sentences=answers))
    return cleaned, problems, soft


def checked_playback(assignment, now, *, video_played=None, watched_seconds=None):
    """``(video_played, watched_seconds)`` as stored: the page's playback time cut to the time since the video
    was handed out (the server's clock), and ``video_played`` derived from it when it is given."""
    if watched_seconds in (None, ""):
        return (video_played if video_played in (True, False) else None), None
    try:
        watched = float(watched_seconds)
    except (TypeError, ValueError):
        raise AnswerInvalid([Problem("watched_seconds must be a number of seconds", code="watched")]) from None
    if watched != watched or watched < 0:
        raise AnswerInvalid([Problem("watched_seconds must be a number of seconds", code="watched")])
    bound = max(0.0, (now - assignment.created_at).total_seconds()) + WATCH_SLACK_SECONDS
    watched = min(watched, bound, MAX_SECONDS)
    return watched > 0, watched


def submit(
    assignment, presented, data, *, client_uuid, confirm=False, time_spent=0, video_played=None, watched_seconds=None
):
    """Store an annotator's answer for their assignment, once per ``client_uuid``.

    A retry with the same UUID returns the stored submission (``created=False``) without writing anything
    again: it is recognised under the assignment's lock, or, when it no longer passes the checks (the project
    closed meanwhile), by a lookup then; a first answer makes no lookup before the transaction (as
    ``workflow.answers.store_once``). A new UUID for an assignment already submitted replaces the current
    answer (the earlier one stays, no longer current). Constant number of queries whatever the number of
    captions."""
    try:
        client_uuid = uuid_module.UUID(str(client_uuid))
    except ValueError:
        raise AnswerInvalid([Problem("submission_uuid must be a UUID", code="uuid")]) from None
    try:
        if not assignment.project.is_open:
            raise ProjectClosed(f"project {assignment.project.name} is closed: answers can no longer change")
        paragraphs, problems, soft = check_answer(assignment.project, presented, data)
        if problems:
            raise AnswerInvalid(problems)
        video_played, watched = checked_playback(
            assignment, timezone.now(), video_played=video_played, watched_seconds=watched_seconds
        )
        if video_played is False:
            soft.insert(
                0,
                Problem(
                    "You have not played the video: please watch it before judging the captions.",
                    code="video_not_played",
                ),
            )
        if soft and not confirm:
            raise NeedsConfirmation(soft)
    except Refused:
        # a retry of a stored answer that no longer passes (the project closed meanwhile, say) is answered with it
        stored = _stored(client_uuid, assignment)
        if stored is not None:
            return SubmitResult(stored, created=False)
        raise
    try:
        with transaction.atomic():
            lock_assignment(assignment)
            # a concurrent retry may have committed meanwhile; and is there an answer this one replaces?
            stored, replaces = _stored(client_uuid, assignment, with_current=True)
            if stored is not None:
                return SubmitResult(stored, created=False)
            [submission] = write_submissions(
                [
                    dict(
                        assignment=assignment,
                        paragraphs=paragraphs,
                        client_uuid=client_uuid,
                        time_spent=_seconds(time_spent),
                        video_played=video_played,
                        watched_seconds=watched,
                        confirmed_incomplete=bool(soft),
                        source=Submission.Source.WEB,
                    )
                ],
                rating=assignment.project.is_rating,
                history=replaces,
            )
    except IntegrityError:
        stored = _stored(client_uuid, assignment)
        if stored is None:
            raise
        return SubmitResult(stored, created=False)
    return SubmitResult(submission, created=True)


def lock_assignment(assignment):
    """Lock the assignment's row, and only it (``workflow.answers.AnswerReads``)."""
    _READS.lock(assignment.pk)


def _stored(client_uuid, assignment, *, with_current=False):
    """The submission stored under ``client_uuid`` (SubmissionConflict when it is another video's), or None;
    ``with_current``: ``(that, whether the assignment has a current submission)`` from the same query."""
    stored, current = _READS.find(client_uuid, assignment.pk)
    return (stored, current) if with_current else stored


def write_submissions(items, *, rating=False, history=True):
    """Write submissions in bulk (the web submit passes one; a raw import many): each item a dict with
    assignment, paragraphs (ParagraphAnswer list), client_uuid, time_spent, video_played, confirmed_incomplete,
    source. Marks earlier submissions of those assignments as history (``history=False``: the caller knows,
    under the assignment's lock, that there is none). Seven queries for any number."""
    return workflow_write(
        Submission,
        Assignment,
        items,
        lambda item: {
            "watched_seconds": item.get("watched_seconds"),
            "source": item.get("source", Submission.Source.WEB),
        },
        history=history,
        then=lambda submissions: _write_answers(submissions, items, rating),
    )


def _write_answers(submissions, items, rating):
    """The rows of the new submissions' answers: caption ratings, or paragraph, sentence and span judgments."""
    if rating:
        CaptionRating.objects.bulk_create(
            [
                CaptionRating(submission=submission, caption_id=p.caption_id, score=p.score, rationale=p.rationale)
                for submission, item in zip(submissions, items)
                for p in item["paragraphs"]
            ],
            batch_size=2000,
        )
    else:
        ParagraphJudgment.objects.bulk_create(
            [
                ParagraphJudgment(submission=submission, caption_id=p.caption_id, score=p.score)
                for submission, item in zip(submissions, items)
                for p in item["paragraphs"]
            ],
            batch_size=2000,
        )
        pairs = [
            (submission, s)
            for submission, item in zip(submissions, items)
            for p in item["paragraphs"]
            for s in p.sentences
        ]
        rows = SentenceJudgment.objects.bulk_create(
            [
                SentenceJudgment(submission=submission, sentence_id=s.sentence_id, error=s.error)
                for submission, s in pairs
            ],
            batch_size=2000,
        )
        SpanJudgment.objects.bulk_create(
            [
                SpanJudgment(sentence_judgment=row, start=start, end=end)
                for row, (_, s) in zip(rows, pairs)
                for start, end in s.spans
            ],
            batch_size=2000,
        )


def current_submission_uuid(assignment):
    """The client UUID of the assignment's current submission (a string), or None (one query)."""
    found = _CURRENT.run(assignment_id=assignment.pk)
    return str(found[0].client_uuid) if found else None


def save_draft(assignment, data):
    """Keep the page's unsaved state (one query; two with ``based_on``). ``data``: {"answer": {...},
    "time_spent": s, "video_played": bool, "watched_seconds"?: s, "based_on"?: uuid | null}, stored as sent (a
    draft is never a judgment); refused when too large. ``based_on`` names the submission the page started from
    (null: none); a draft of a page that predates the current submission is refused (StaleDraft), so a late
    autosave can never shadow a submitted answer."""
    if not assignment.project.is_open:
        raise ProjectClosed(f"project {assignment.project.name} is closed")
    if not isinstance(data, dict) or not isinstance(data.get("answer", {}), dict):
        raise AnswerInvalid([Problem("a draft must be an object with an answer object", code="shape")])
    if "based_on" in data and (data["based_on"] or None) != current_submission_uuid(assignment):
        raise StaleDraft("this video was submitted after the page was opened; reload it to continue")
    draft = {
        "answer": data.get("answer") or {},
        "time_spent": _seconds(data.get("time_spent")),
        "video_played": bool(data.get("video_played")),
    }
    if data.get("watched_seconds") not in (None, ""):
        draft["watched_seconds"] = _seconds(data.get("watched_seconds"))
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise AnswerInvalid([Problem("the draft is too large", code="size")])
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(draft=draft, draft_saved_at=now)
    assignment.draft, assignment.draft_saved_at = draft, now
    return now


def current_answer(assignment, presented):
    """The annotator's current submitted answer for the page, in the page's shape (2 queries), or None."""
    found = _CURRENT.run(assignment_id=assignment.pk)
    if not found:
        return None
    current = found[0]
    pk, time_spent, played, watched = current.pk, current.time_spent, current.video_played, current.watched_seconds
    if assignment.project.is_rating:
        scores = {
            c: (s, r)
            for c, s, r in CaptionRating.objects.filter(submission_id=pk).values_list(
                "caption_id", "score", "rationale"
            )
        }
        paragraphs = [
            {"score": scores.get(c.pk, (None, ""))[0], "rationale": scores.get(c.pk, (None, ""))[1]}
            for c, _ in presented
        ]
        return {
            "answer": {"paragraphs": paragraphs},
            "time_spent": time_spent,
            "video_played": bool(played),
            "watched_seconds": watched,
        }
    scores = dict(ParagraphJudgment.objects.filter(submission_id=pk).values_list("caption_id", "score"))
    sentences = {}
    for sentence_id, error, start, end in SentenceJudgment.objects.filter(submission_id=pk).values_list(
        "sentence_id", "error", "spans__start", "spans__end"
    ):
        entry = sentences.setdefault(sentence_id, {"error": int(error), "spans": []})
        if start is not None:
            entry["spans"].append([start, end])
    paragraphs = []
    for caption, caption_sentences in presented:
        paragraphs.append(
            {
                "score": scores.get(caption.pk),
                "sentences": [
                    {
                        "error": sentences.get(s.pk, {}).get("error", 0),
                        "spans": sorted(sentences.get(s.pk, {}).get("spans", [])),
                    }
                    for s in caption_sentences
                ],
            }
        )
    return {
        "answer": {"paragraphs": paragraphs},
        "time_spent": time_spent,
        "video_played": bool(played),
        "watched_seconds": watched,
    }
