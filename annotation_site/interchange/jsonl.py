"""JSONL: the same content as the FactVC layout, one JSON object per line, for people who don't use that layout.

Three kinds of line, told apart by ``"type"`` (default ``"caption"``):

``{"type": "video", "video_id": "v1", "url": "https://...", "duration": 12.5}``
    Declares a video (optional). When a file declares any video, every caption and reference must name a
    declared one. ``url`` and ``duration`` are optional.
``{"type": "reference", "video_id": "v1", "reference_set": "gt_1", "text": "A man ..."}``
    A human reference paragraph.
``{"video_id": "v1", "system": "COOT", "paragraph_score": 4, "sentences": [...]}``
    One system's caption paragraph. Each sentence is a string, or an object
    ``{"text": "...", "error": 0|1, "spans": [[start, end], ...], "timestamp": [start_s, end_s]}`` where
    spans are token index ranges (whitespace tokens of ``text``, end exclusive). ``paragraph_score``
    (1-5), ``error`` and ``spans`` are the factuality labels and may be left out for unlabelled captions;
    ``"is_human": true`` marks a system of human-written captions; ``"prompt"`` is the prompt that produced the
    caption, when there was one (rating tasks show it beside the caption, as FIFA's faithfulness study does).

``write`` emits videos, then references, then captions, so a file in that order round-trips exactly.
"""

import json
import math

from annotation_site import safe_json
from annotation_site.corpus.tokens import tokenize, validate_spans

from .bundle import (
    ID_FIELDS,
    CaptionData,
    DatasetBundle,
    ProblemList,
    ReferenceData,
    SentenceData,
    VideoData,
    id_problem,
    too_long,
)

_FIELDS = {
    "video": {"type", "video_id", "url", "duration"},
    "reference": {"type", "video_id", "reference_set", "text"},
    "caption": {"type", "video_id", "system", "is_human", "paragraph_score", "sentences", "prompt"},
}
_SENTENCE_FIELDS = {"text", "error", "spans", "timestamp"}


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _Reader:
    def __init__(self, filename):
        self.file = filename
        self.problems = ProblemList()
        self.bundle = DatasetBundle()
        self.videos = {}  # video_id -> VideoData, in order of first mention
        self.declared = set()
        self.systems = {}  # name -> is_human
        self.caption_lines = {}
        self.reference_lines = {}
        self.mentions = []  # (video_id, line) of captions and references, checked against declared videos

    def problem(self, line, message, where=""):
        self.problems.add(self.file, message, line=line, where=where)

    def string_field(self, obj, key, line, *, required=True):
        value = obj.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or not value.strip():
            self.problem(line, f"{key} must be a non-empty string, not {value!r}"[:300], where=key)
            return None
        message = too_long(key, value) or (id_problem(key, value) if key in ID_FIELDS else None)
        if message:
            self.problem(line, message, where=key)
            return None
        return value

    def video(self, video_id):
        if video_id not in self.videos:
            self.videos[video_id] = VideoData(video_id=video_id)
        return self.videos[video_id]

    def read_line(self, line, obj):
        kind = obj.get("type", "caption")
        if not isinstance(kind, str) or kind not in _FIELDS:  # (a list or an object cannot be looked up: a 500)
            self.problem(line, f"type must be video, reference or caption, not {kind!r}", where="type")
            return
        extra = sorted(obj.keys() - _FIELDS[kind])
        if extra:
            self.problem(line, f"unknown field {', '.join(extra)} for a {kind} line", where=extra[0])
        video_id = self.string_field(obj, "video_id", line)
        if video_id is None:
            return
        getattr(self, f"read_{kind}")(line, obj, video_id)

    def read_video(self, line, obj, video_id):
        if video_id in self.declared:
            self.problem(line, f"video {video_id!r} is declared twice", where="video_id")
            return
        self.declared.add(video_id)
        video = self.video(video_id)
        url = self.string_field(obj, "url", line, required=False)
        if url and not url.startswith(("http://", "https://")):
            self.problem(line, f"url must be an http(s) address, not {url!r}", where="url")
        video.url = url or ""
        duration = obj.get("duration")
        if duration is not None and (not _is_number(duration) or duration < 0):
            self.problem(line, f"duration must be a number of seconds >= 0, not {duration!r}", where="duration")
        elif duration is not None:
            video.duration = float(duration)

    def read_reference(self, line, obj, video_id):
        reference_set = self.string_field(obj, "reference_set", line)
        text = self.string_field(obj, "text", line)
        if reference_set is None or text is None:
            return
        key = (video_id, reference_set)
        if key in self.reference_lines:
            self.problem(
                line,
                f"reference {reference_set!r} of video {video_id!r} already given on line {self.reference_lines[key]}",
                where="reference_set",
            )
            return
        self.reference_lines[key] = line
        self.mentions.append((video_id, line))
        self.video(video_id)
        self.bundle.references.append(ReferenceData(video_id=video_id, reference_set=reference_set, text=text))

    def read_caption(self, line, obj, video_id):
        system = self.string_field(obj, "system", line)
        if system is None:
            return
        is_human = obj.get("is_human", False)
        if not isinstance(is_human, bool):
            self.problem(line, f"is_human must be true or false, not {is_human!r}", where="is_human")
        elif self.systems.setdefault(system, is_human) != is_human:
            self.problem(
                line, f"system {system!r} is marked is_human={is_human} here but not elsewhere", where="is_human"
            )
        key = (video_id, system)
        if key in self.caption_lines:
            self.problem(
                line,
                f"caption of system {system!r} for video {video_id!r} already given on line {self.caption_lines[key]}",
                where="system",
            )
            return
        self.caption_lines[key] = line
        score = obj.get("paragraph_score")
        if score is not None and (type(score) is not int or not 1 <= score <= 5):
            self.problem(
                line, f"paragraph_score must be an integer from 1 to 5, not {score!r}", where="paragraph_score"
            )
            score = None
        raw_sentences = obj.get("sentences")
        if not isinstance(raw_sentences, list) or not raw_sentences:
            self.problem(line, "sentences must be a non-empty list", where="sentences")
            return
        sentences = [self.read_sentence(line, index, raw) for index, raw in enumerate(raw_sentences)]
        if None in sentences:
            return
        prompt = obj.get("prompt", "")
        if not isinstance(prompt, str):
            self.problem(line, f"prompt must be a string, not {prompt!r}", where="prompt")
            return
        self.mentions.append((video_id, line))
        self.video(video_id)
        self.bundle.captions.append(
            CaptionData(
                video_id=video_id, system=system, sentences=sentences, paragraph_score=score, prompt=prompt.strip()
            )
        )

    def read_sentence(self, line, index, raw):
        where = f"sentences[{index}]"
        if isinstance(raw, str):
            raw = {"text": raw}
        if not isinstance(raw, dict):
            self.problem(line, "a sentence must be a string or an object with text", where=where)
            return None
        extra = sorted(raw.keys() - _SENTENCE_FIELDS)
        if extra:
            self.problem(line, f"unknown field {', '.join(extra)}", where=f"{where}.{extra[0]}")
            return None
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            self.problem(line, f"text must be a non-empty string, not {text!r}", where=f"{where}.text")
            return None
        sentence = SentenceData(text=text, tokens=tokenize(text))
        error = raw.get("error")
        if error is not None:
            if error not in (0, 1) or isinstance(error, float):
                self.problem(line, f"error must be 0 or 1, not {error!r}", where=f"{where}.error")
                return None
            sentence.error = bool(error)
        spans = raw.get("spans")
        if spans is not None:
            try:
                sentence.spans = validate_spans(spans if isinstance(spans, list) else [spans], len(sentence.tokens))
            except ValueError as exc:
                self.problem(line, str(exc), where=f"{where}.spans")
                return None
            if sentence.spans and sentence.error is False:
                self.problem(line, "a sentence with error spans cannot have error 0", where=f"{where}.error")
                return None
            if sentence.spans and sentence.error is None:
                sentence.error = True
        stamp = raw.get("timestamp")
        if stamp is not None:
            if not (
                isinstance(stamp, list)
                and len(stamp) == 2
                and all(_is_number(t) for t in stamp)
                and 0 <= stamp[0] <= stamp[1]
            ):
                self.problem(
                    line,
                    f"timestamp must be [start, end] seconds with start <= end, not {stamp!r}",
                    where=f"{where}.timestamp",
                )
                return None
            sentence.start, sentence.end = float(stamp[0]), float(stamp[1])
        return sentence

    def finish(self):
        if self.declared:
            for video_id, line in self.mentions:
                if video_id not in self.declared:
                    self.problem(
                        line,
                        f"unknown video {video_id!r}: the file declares its videos and not this one",
                        where="video_id",
                    )
        if not self.problems and not self.bundle.captions and not self.bundle.references and not self.videos:
            self.problem(None, "the file holds no videos, captions or references")
        self.problems.raise_if_any()
        self.bundle.videos = list(self.videos.values())
        self.bundle.systems = list(self.systems.items())
        return self.bundle


def read(text, *, filename="dataset.jsonl"):
    """Read and validate JSONL text into a DatasetBundle, or raise FormatError naming line and field."""
    reader = _Reader(filename)
    for number, obj in safe_json.object_lines(text, reader.problem):
        reader.read_line(number, obj)
    return reader.finish()


def write(bundle):
    """The JSONL text of a bundle (videos, references, then captions; one object per line)."""
    human = {name for name, is_human in bundle.systems if is_human}
    lines = []
    for video in bundle.videos:
        obj = {"type": "video", "video_id": video.video_id}
        if video.url:
            obj["url"] = video.url
        if video.duration is not None:
            obj["duration"] = video.duration
        lines.append(obj)
    for ref in bundle.references:
        lines.append(
            {"type": "reference", "video_id": ref.video_id, "reference_set": ref.reference_set, "text": ref.text}
        )
    for caption in bundle.captions:
        obj = {"video_id": caption.video_id, "system": caption.system}
        if caption.system in human:
            obj["is_human"] = True
        if caption.paragraph_score is not None:
            obj["paragraph_score"] = caption.paragraph_score
        if caption.prompt:
            obj["prompt"] = caption.prompt
        sentences = []
        for s in caption.sentences:
            item = {"text": s.text}
            if s.error is not None:
                item["error"] = int(s.error)
                item["spans"] = [list(span) for span in s.spans]
            if s.start is not None:
                item["timestamp"] = [s.start, s.end]
            sentences.append(item)
        obj["sentences"] = sentences
        lines.append(obj)
    return "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in lines)
