"""Raw per-annotator labels as JSONL: one line per annotator and caption (a contract: scripts outside the
repository read and write it through ``manage.py factuality_labels``).

Factuality projects:
    {"video_id": ..., "system": ..., "annotator": ..., "paragraph_score": 1-5 | null,
     "sentences": [{"error": 0 | 1, "spans": [[start, end], ...]}, ...]}
Rating projects:
    {"video_id": ..., "system": ..., "annotator": ..., "score": int | null, "rationale": "..."}

Spans are token indices into the stored sentence tokens, end exclusive; ``spans`` may be left out when
``error`` is 0; ``null`` scores are paragraphs the annotator skipped after confirming. The export writes the
current answer of every annotator, with annotator ids anonymised (``A1``, ``A2``, ... by order of arrival) unless
asked otherwise. The import validates the whole file first (every problem with file, line and field), then
writes everything in one transaction; each (annotator, video) becomes one submission that replaces that
annotator's current answer for the video, as a resubmission would (the earlier answer stays as history).
An import that takes a video above the project's annotators per video keeps its labels and says so (the
result's ``warnings``: file, line, field). An import that would add copies of answers the project already holds
as new annotators (its own anonymised export imported back) is refused (``_refuse_copies``).
"""

import json
import uuid
from collections import Counter

from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation_site import identities, safe_json
from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import imported_annotator_id, imported_annotators
from annotation_site.corpus.models import Caption, Sentence, System, Video
from annotation_site.corpus.tokens import validate_spans
from annotation_site.problems import ProblemList
from annotation_site.workflow import capacity

from .judgments import ParagraphAnswer, SentenceAnswer, write_submissions
from .models import (
    Assignment,
    CaptionRating,
    ParagraphJudgment,
    Project,
    ProjectVideo,
    SentenceJudgment,
    Submission,
)
from .projects import ProjectSpec, create_project

FACTUALITY_KEYS = ["video_id", "system", "annotator", "paragraph_score", "sentences"]
RATING_KEYS = ["video_id", "system", "annotator", "score", "rationale"]


def _annotator_names(project, anonymise):
    ids = list(
        Submission.objects.filter(assignment__project=project, is_current=True)
        .values("annotator_id")
        .annotate(n=Count("id"))
        .order_by("annotator_id")
        .values_list("annotator_id", flat=True)
    )
    if anonymise:
        return {pk: f"A{n}" for n, pk in enumerate(ids, start=1)}
    return {a.pk: a.identifier for a in Annotator.objects.filter(pk__in=ids).select_related("user")}


def export_lines(project, *, anonymise=True):
    """The raw labels of a project as JSONL text (four queries)."""
    names = _annotator_names(project, anonymise)
    base = {"submission__assignment__project": project, "submission__is_current": True}
    order = (
        "caption__video__position",
        "caption__video__external_id",
        "caption__system__position",
        "caption__system__name",
        "submission__annotator_id",
    )
    fields = (
        "submission_id",
        "caption_id",
        "caption__video__external_id",
        "caption__system__name",
        "submission__annotator_id",
    )
    lines = []
    if project.is_rating:
        for _, _, video_id, system, annotator_id, score, rationale in (
            CaptionRating.objects.filter(**base).order_by(*order).values_list(*fields, "score", "rationale")
        ):
            lines.append(
                {
                    "video_id": video_id,
                    "system": system,
                    "annotator": names[annotator_id],
                    "score": score,
                    "rationale": rationale,
                }
            )
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    sentences = {}
    for submission_id, caption_id, index, error, start, end in (
        SentenceJudgment.objects.filter(**base)
        .order_by("sentence__index", "spans__start")
        .values_list("submission_id", "sentence__caption_id", "sentence__index", "error", "spans__start", "spans__end")
    ):
        entry = sentences.setdefault((submission_id, caption_id), {}).setdefault(
            index, {"error": int(error), "spans": []}
        )
        if start is not None:
            entry["spans"].append([start, end])
    for submission_id, caption_id, video_id, system, annotator_id, score in (
        ParagraphJudgment.objects.filter(**base).order_by(*order).values_list(*fields, "score")
    ):
        judged = sentences.get((submission_id, caption_id), {})
        lines.append(
            {
                "video_id": video_id,
                "system": system,
                "annotator": names[annotator_id],
                "paragraph_score": score,
                "sentences": [judged[i] for i in sorted(judged)],
            }
        )
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _parse(text, filename, keys, problems):
    entries = []
    for number, data in safe_json.object_lines(text, lambda line, message: problems.add(filename, message, line=line)):
        missing = [k for k in keys if k not in data and k not in ("rationale",)]
        unknown = sorted(set(data) - set(keys))
        for key in missing:
            problems.add(filename, "missing field", line=number, where=key)
        for key in unknown:
            problems.add(filename, f"unknown field (expected {', '.join(keys)})", line=number, where=key)
        for key in ("video_id", "system", "annotator"):
            if key in data and (not isinstance(data[key], str) or not data[key].strip()):
                problems.add(filename, "must be a non-empty string", line=number, where=key)
                missing.append(key)
        if "annotator" not in missing:
            try:  # stored as a name: one annotator whatever invisible characters or forms the file adds
                data["annotator"] = imported_annotator_id(data["annotator"])
            except identities.IdentityError as exc:
                problems.add(filename, str(exc), line=number, where="annotator")
                missing.append("annotator")
        if not missing and not unknown:
            entries.append((number, data))
    return entries


def _check_sentences(filename, number, raw, sentences, problems):
    if not isinstance(raw, list) or len(raw) != len(sentences):
        problems.add(filename, f"must list the caption's {len(sentences)} sentences", line=number, where="sentences")
        return None
    answers, incomplete = [], False
    for index, (sentence, entry) in enumerate(zip(sentences, raw)):
        where = f"sentences[{index}]"
        if (
            not isinstance(entry, dict)
            or set(entry) - {"error", "spans"}
            or type(entry.get("error")) is not int  # not true / false, not 1.0
            or entry["error"] not in (0, 1)
        ):
            problems.add(filename, 'must be {"error": 0 or 1, "spans": [[start, end], ...]}', line=number, where=where)
            continue
        try:
            spans = validate_spans(entry.get("spans") or [], len(sentence.tokens))
        except ValueError as exc:
            problems.add(filename, str(exc), line=number, where=f"{where}.spans")
            continue
        if spans and not entry["error"]:
            problems.add(filename, "spans are given but error is 0", line=number, where=f"{where}.spans")
            continue
        incomplete |= bool(entry["error"]) and not spans
        answers.append(SentenceAnswer(sentence_id=sentence.pk, error=bool(entry["error"]), spans=spans))
    return answers, incomplete


def read_lines(text, *, dataset, project=None, filename="labels.jsonl"):
    """Validate a raw-labels file against a dataset (and project, if it exists). Returns the checked entries
    ``[(line, video pk, system pk, annotator id, ParagraphAnswer, incomplete)]``; raises FormatError listing
    every problem. Three queries whatever the size."""
    problems = ProblemList()
    rating = project is not None and project.is_rating
    keys = RATING_KEYS if rating else FACTUALITY_KEYS
    entries = _parse(text, filename, keys, problems)
    wanted = {(d["video_id"], d["system"]) for _, d in entries}
    captions = {
        (c.video.external_id, c.system.name): c
        for c in Caption.objects.filter(
            video__dataset=dataset,
            video__external_id__in={v for v, _ in wanted},
            system__name__in={s for _, s in wanted},
        ).select_related("video", "system")
    }
    sentences = {}
    for sentence in Sentence.objects.filter(caption__in=[c.pk for c in captions.values()]).order_by("index"):
        sentences.setdefault(sentence.caption_id, []).append(sentence)
    in_project = None
    if project is not None:
        in_project = (
            set(project.project_videos.values_list("video_id", flat=True)),
            set(project.systems.values_list("pk", flat=True)),
        )
    checked, seen = [], {}
    for number, data in entries:
        caption = captions.get((data["video_id"], data["system"]))
        if caption is None:
            problems.add(
                filename,
                f"dataset {dataset.name} has no caption of system {data['system']!r} for video {data['video_id']!r}",
                line=number,
                where="video_id",
            )
            continue
        if in_project is not None and (caption.video_id not in in_project[0] or caption.system_id not in in_project[1]):
            problems.add(
                filename,
                f"video {data['video_id']!r} / system {data['system']!r} is not part of project {project.name}",
                line=number,
                where="video_id",
            )
            continue
        key = (data["annotator"], caption.pk)
        if key in seen:
            problems.add(
                filename,
                f"annotator {data['annotator']!r} already labelled this caption on line {seen[key]}",
                line=number,
                where="annotator",
            )
            continue
        seen[key] = number
        score_key = "score" if rating else "paragraph_score"
        score = data[score_key]
        low, high = (project.scale_min, project.scale_max) if rating else (1, 5)
        if score is not None and (type(score) is not int or not low <= score <= high):
            problems.add(
                filename,
                f"must be an integer from {low} to {high} (or null), not {score!r}",
                line=number,
                where=score_key,
            )
            continue
        if rating:
            rationale = data.get("rationale") or ""
            if not isinstance(rationale, str):
                problems.add(filename, "must be a string", line=number, where="rationale")
                continue
            answer, incomplete = ParagraphAnswer(caption_id=caption.pk, score=score, rationale=rationale), False
        else:
            checked_sentences = _check_sentences(
                filename, number, data["sentences"], sentences.get(caption.pk, []), problems
            )
            if checked_sentences is None or len(checked_sentences[0]) != len(sentences.get(caption.pk, [])):
                continue
            answer = ParagraphAnswer(caption_id=caption.pk, score=score, sentences=checked_sentences[0])
            incomplete = checked_sentences[1]
        checked.append(
            (number, caption.video_id, caption.system_id, data["annotator"], answer, incomplete or score is None)
        )
    if not checked and not problems:
        problems.add(filename, "the file holds no labels")
    problems.raise_if_any()
    return checked


def import_lines(text, *, project_name, dataset, filename="labels.jsonl", provider="import", own_export=False):
    """Import a raw-labels file into project ``project_name`` on ``dataset`` (created, as a factuality project
    of the file's videos and systems, when it does not exist). Returns (project, counts).

    ``own_export``: the file is this project's own export with real ids (``--real-ids``): an id that is one of its
    annotators (an account, a panel's participant) is that annotator. Without it such an id is a problem (a file
    from elsewhere must not give its labels to someone who happens to have that name); ids the project's earlier
    imports brought are theirs either way."""
    project = Project.objects.filter(name=project_name).first()
    if project is not None and project.dataset_id != dataset.pk:
        problems = ProblemList()
        problems.add(filename, f"project {project_name} exists on dataset {project.dataset.name}, not {dataset.name}")
        problems.raise_if_any()
    checked = read_lines(text, dataset=dataset, project=project, filename=filename)
    names = {a for _, _, _, a, _, _ in checked}
    members = _members_named(project, checked, filename, provider, own_export) if project is not None else {}
    if project is not None:
        _refuse_copies(project, checked, members, filename)
    with transaction.atomic():
        if project is None:
            per_video = Counter(v for v, _ in {(video, a) for _, video, _, a, _, _ in checked})
            project = create_project(
                ProjectSpec(
                    name=project_name,
                    dataset=dataset,
                    systems=_systems(checked),
                    videos=_videos(checked),
                    annotators_per_video=max(per_video.values()),
                    description=f"Created by importing {filename}.",
                )
            )
        annotators = {**imported_annotators(provider, names - members.keys()), **members}
        videos = dict(ProjectVideo.objects.filter(project=project).values_list("video_id", "pk"))
        groups = {}
        for number, video_id, _, name, answer, incomplete in checked:
            group = groups.setdefault(
                (annotators[name].pk, videos[video_id]),
                {"paragraphs": [], "incomplete": False, "line": number, "video": video_id},
            )
            group["paragraphs"].append(answer)
            group["incomplete"] |= incomplete
        unchanged = _unchanged(project, checked, annotators, groups)
        groups = {key: group for key, group in groups.items() if key not in unchanged}
        existing = {
            (a.annotator_id, a.project_video_id): a
            for a in Assignment.objects.filter(project=project, annotator_id__in={a for a, _ in groups})
        }
        new = [key for key in groups if key not in existing]
        Assignment.objects.bulk_create(
            [
                Assignment(
                    project=project, project_video_id=video, annotator_id=annotator, shuffle_seed=uuid.uuid4().int >> 66
                )
                for annotator, video in new
            ]
        )
        existing = {
            (a.annotator_id, a.project_video_id): a
            for a in Assignment.objects.filter(project=project, annotator_id__in={a for a, _ in groups})
        }
        write_submissions(
            [
                dict(
                    assignment=existing[key],
                    paragraphs=group["paragraphs"],
                    client_uuid=uuid.uuid4(),
                    source=Submission.Source.IMPORT,
                    confirmed_incomplete=group["incomplete"],
                )
                for key, group in groups.items()
            ],
            rating=project.is_rating,
        )
        ProjectVideo.objects.filter(project=project).update(
            assigned=Coalesce(
                Subquery(
                    Assignment.objects.filter(project_video=OuterRef("pk"))
                    .values("project_video")
                    .annotate(n=Count("id"))
                    .values("n")[:1]
                ),
                0,
            )
        )
        warnings = _over_capacity(project, {key: groups[key]["line"] for key in new}, filename)
    return project, {
        "lines": len(checked),
        "submissions": len(groups),
        "unchanged": len(unchanged),
        "annotators": len(annotators),
        "warnings": [str(warning) for warning in warnings],
    }


def _over_capacity(project, new_lines, filename):
    """The videos this import took above the project's annotators per video (its capacity: the number of
    annotators a video is handed out to), one located warning each: the file, the line of the first annotator
    beyond the capacity (annotators the file adds to a video count in the order of their first line), field
    ``annotator``. They are imported all the same (``workflow.capacity.above``, shared with the MTurk results
    import of projects and tasks: why, and the one query)."""
    added = {}
    for (_, video), number in new_lines.items():
        added.setdefault(video, []).append(number)
    warnings = ProblemList()
    for line, message in capacity.above(
        ProjectVideo.objects.filter(project=project),
        added,
        project.annotators_per_video,
        label="video__external_id",
        noun="video",
        scope=("project", project.name),
        what="labels",
    ):
        warnings.add(filename, message, line=line, where="annotator")
    return warnings


def _members_named(project, checked, filename, provider, own_export):
    """``{name: Annotator}`` for the names of the file that are annotators of ``project`` (who were handed a
    video of it), by the identifier ``--real-ids`` exports (a username, or the id a crowd panel or an import
    brought): a file exported from the project maps back to the same people, where it made a second, imported
    annotator of each (and the agreement counted every answer twice). A name two of its annotators share is a
    problem: the file cannot say whose the answers are."""
    first_line = {}
    for number, _, _, name, _, _ in checked:
        first_line.setdefault(name, number)
    found = {}
    for annotator in (
        Annotator.objects.filter(factuality_assignments__project=project).distinct().select_related("user")
    ):
        if annotator.identifier in first_line:
            found.setdefault(annotator.identifier, []).append(annotator)
    problems = ProblemList()
    for name, same in sorted(found.items()):
        if len(same) > 1:
            problems.add(
                filename,
                f"{len(same)} annotators of project {project.name} have the id {name!r} "
                f"({', '.join(sorted(a.name for a in same))}): export with anonymised ids and import into "
                "another project",
                line=first_line[name],
                where="annotator",
            )
    for name, same in sorted(found.items()):
        member = same[0]
        if len(same) == 1 and not own_export and (member.kind, member.provider) != (Annotator.Kind.IMPORTED, provider):
            problems.add(
                filename,
                f"{name!r} is the id of {member.name}, an annotator of project {project.name}: a file exported "
                "from this project with real ids is imported back as its own export (--own-export, own_export), "
                "which gives these labels to them; a file from elsewhere needs other ids",
                line=first_line[name],
                where="annotator",
            )
    problems.raise_if_any()
    return {name: same[0] for name, same in found.items()}


# the scope in which the project's current answers are read by video rather than whole (a bound on the parameters)
COPY_CHECK_VIDEOS = 500


def _unchanged(project, checked, annotators, groups):
    """The keys of ``groups`` ((annotator pk, project video pk)) whose answer in the file is, caption for caption,
    the annotator's current answer to that video (its confirmation of an incomplete answer included): storing it
    again added a copy as their current answer, which carries no time or playback, so restoring a project's own
    export set every annotator's median time and "played video" to 0. Three queries (two for a rating project)."""
    rating = project.is_rating
    wanted = {}
    for _, video, _, name, answer, _ in checked:
        sentences = [(s.sentence_id, s.error, s.spans) for s in answer.sentences]
        key = _answer_key(answer.caption_id, answer.score, answer.rationale if rating else "", sentences)
        wanted.setdefault((annotators[name].pk, video), set()).add(key)
    current = dict(
        Submission.objects.filter(
            assignment__project=project, is_current=True, annotator_id__in={a for a, _ in wanted}
        ).values_list("pk", "confirmed_incomplete")
    )
    held = {}  # (annotator pk, video pk) -> (their current answer's keys, whether it was confirmed incomplete)
    for (annotator, video, submission), answers in _answers_held(project, {v for _, v in wanted}).items():
        if submission in current:
            held[(annotator, video)] = (answers, current[submission])
    return {
        key
        for key, group in groups.items()
        if held.get((key[0], group["video"])) == (frozenset(wanted[(key[0], group["video"])]), group["incomplete"])
    }


def _answer_key(caption_id, score, rationale, sentences):
    """One caption's answer in a comparable form: the caption, the score, the rationale (rating projects) and each
    sentence's error and spans (sorted, as ``validate_spans`` returns them)."""
    return (
        caption_id,
        score,
        rationale,
        tuple(sorted((s, bool(e), tuple(sorted(spans))) for s, e, spans in sentences)),
    )


def _answers_held(project, videos):
    """``{(annotator pk, video pk, submission pk): frozenset of answer keys}``: every answer of ``project`` on
    ``videos``, current or earlier (two queries; one for a rating project)."""
    scope = {"submission__assignment__project": project}
    if len(videos) <= COPY_CHECK_VIDEOS:
        scope["submission__assignment__project_video__video_id__in"] = videos
    whose = ("submission_id", "submission__annotator_id", "submission__assignment__project_video__video_id")
    answers = {}
    if project.is_rating:
        for submission, annotator, video, caption, score, rationale in CaptionRating.objects.filter(
            **scope
        ).values_list(*whose, "caption_id", "score", "rationale"):
            if video in videos:
                answers.setdefault((annotator, video, submission), set()).add(
                    _answer_key(caption, score, rationale, ())
                )
    else:
        sentences = {}
        for submission, caption, sentence, error, start, end in SentenceJudgment.objects.filter(**scope).values_list(
            "submission_id", "sentence__caption_id", "sentence_id", "error", "spans__start", "spans__end"
        ):
            spans = sentences.setdefault((submission, caption), {}).setdefault(sentence, (error, []))[1]
            if start is not None:
                spans.append((start, end))
        for submission, annotator, video, caption, score in ParagraphJudgment.objects.filter(**scope).values_list(
            *whose, "caption_id", "score"
        ):
            if video in videos:
                judged = sentences.get((submission, caption), {})
                answers.setdefault((annotator, video, submission), set()).add(
                    _answer_key(caption, score, "", [(s, e, spans) for s, (e, spans) in judged.items()])
                )
    return {key: frozenset(value) for key, value in answers.items()}


def _refuse_copies(project, checked, members, filename):
    """Refuse a file whose annotators repeat answers ``project`` already holds, which the import would add as
    new, independent annotators (the project's own anonymised export imported back: every caption judged twice,
    agreement inflated). A file annotator is a copy of an annotator X of the project when, on every one of their
    videos, their answer (every caption they labelled: score, each sentence's error and spans; rating: score and
    rationale) is an answer X gave to that video (current, or earlier: X may have changed an answer since the
    download), one and the same X, who is not the annotator the file's id already names (an id an earlier
    import brought, or one ``own_export`` maps back: giving someone answers they gave duplicates nothing). A copy
    of one video alone could be a second person agreeing on it, so the file is refused when its copies go beyond
    that: a copy spanning two videos or more, or copies of two different annotators of the project. One problem
    per copy (file, line of their first label, ``annotator``); two queries (the project's answers on the file's
    videos), a third to name the annotators when refusing."""
    rating = project.is_rating
    first_line, groups = {}, {}
    for number, video, _, name, answer, _ in checked:
        first_line.setdefault(name, number)
        sentences = [(s.sentence_id, s.error, s.spans) for s in answer.sentences]
        key = _answer_key(answer.caption_id, answer.score, answer.rationale if rating else "", sentences)
        groups.setdefault(name, {}).setdefault(video, set()).add(key)
    held = _answers_held(project, {video for videos in groups.values() for video in videos})
    holders = {}
    for (annotator, video, _), answers in held.items():
        holders.setdefault((video, answers), set()).add(annotator)
    copies = {}
    for name, videos in groups.items():
        same = None
        for video, answers in videos.items():
            found = holders.get((video, frozenset(answers)), set())
            same = found if same is None else same & found
            if not same:
                break
        own = members.get(name)
        if same and (own is None or own.pk not in same):
            copies[name] = sorted(same)
    copied = {pk for same in copies.values() for pk in same}
    beyond_one_video = any(len(groups[name]) > 1 for name in copies)
    of_two_annotators = len(copies) > 1 and len(copied) > 1  # two of them can be copies of different people
    if not (beyond_one_video or of_two_annotators):
        return
    names = {a.pk: a.name for a in Annotator.objects.filter(pk__in=copied).select_related("user")}
    problems = ProblemList()
    for name, same in sorted(copies.items(), key=lambda item: first_line[item[0]]):
        count = len(groups[name])
        problems.add(
            filename,
            f"on {'each of the ' + str(count) + ' videos' if count > 1 else 'the video'} {name!r} labels, these "
            f"labels are answers {' and '.join(names[pk] for pk in same)} gave, already in project "
            f"{project.name}: this looks like the project's own anonymised download, whose labels are already "
            "here (imported, the same answers would count as another annotator's); to restore people's labels, "
            "import the download with real ids as the project's own export (--own-export, own_export)",
            line=first_line[name],
            where="annotator",
        )
    problems.raise_if_any()


def _systems(checked):
    return list(System.objects.filter(pk__in={s for _, _, s, _, _, _ in checked}).order_by("position", "name"))


def _videos(checked):
    return list(Video.objects.filter(pk__in={v for _, v, _, _, _, _ in checked}).order_by("position", "external_id"))
