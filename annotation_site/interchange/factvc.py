"""The ActivityNet-Fact / YouCook2-Fact layout of the FactVC release (Liu & Wan, EMNLP 2023).

A folder holding:

- ``factuality_annotation.json``: ``{video_id: {system: {"paragraph_score": 1-5, "sentences": [str]}}}``,
  the consolidated labels; erroneous words are wrapped in ``[ ]`` inside the space-tokenised sentences.
- ``vids.txt`` (optional): the dataset's video ids, one per line, in order. When present every annotated
  video must be listed in it.
- ``captions/`` (optional): ``gt_*.json`` reference paragraphs (``{video_id: paragraph}``) and each system's
  output in the dense-captioning results format (``{"results": {video_id: [{"sentence", "timestamp"}]}}``),
  matched to a system by file name (``coot_100m_val.json`` -> ``COOT_100m``, longest matching name wins).
  A system file only contributes sentence timestamps, for captions whose sentences it repeats exactly.

``write_annotation`` produces the annotation file exactly as the release formats it (4-space indent, ASCII
escapes, no trailing newline), so importing and exporting a release file gives back the same bytes.
"""

import json
import math
import posixpath

from annotation_site import safe_json
from annotation_site.corpus.tokens import BracketError, parse_bracketed, render_bracketed
from annotation_site.uploads import UploadRefused

from .bundle import (
    CaptionData,
    DatasetBundle,
    ProblemList,
    ReferenceData,
    SentenceData,
    VideoData,
    check_lengths,
    id_problem,
)

ANNOTATION = "factuality_annotation.json"
VIDS = "vids.txt"
CAPTIONS = "captions"
_CAPTION_KEYS = {"paragraph_score", "sentences"}


class _LineFinder:
    """Finds the line of a key path in a JSON text by searching for each key in turn (cheap, and exact for
    the usual pretty-printed files)."""

    def __init__(self, text):
        self.text = text

    def line(self, *needles):
        offset = 0
        for needle in needles:
            # as written: a JSON file may escape non-ASCII characters or not
            spellings = {json.dumps(needle), json.dumps(needle, ensure_ascii=False)}
            found = min((f for f in (self.text.find(s, offset) for s in spellings) if f >= 0), default=-1)
            if found < 0:
                break
            offset = found
        return self.text.count("\n", 0, offset) + 1


def load_json(source, relpath, problems):
    """Parse a JSON file of the source; record a located problem and return None when it is not JSON."""
    try:
        text = source.read(relpath)
    except UploadRefused as exc:
        problems.add(relpath, exc.reason, line=exc.line)
        return None, None
    if text is None:
        return None, None
    try:
        return safe_json.loads(text, object_pairs_hook=safe_json.no_duplicate_keys), text
    except safe_json.DuplicateKey as exc:
        problems.add(relpath, f"key {exc.args[0]!r} appears more than once", line=_LineFinder(text).line(exc.args[0]))
    except json.JSONDecodeError as exc:
        problems.add(relpath, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
    return None, text


def _where(*keys):
    return " > ".join(repr(k) if isinstance(k, str) else f"[{k}]" for k in keys)


def _read_captions(data, text, problems):
    finder = _LineFinder(text)
    captions, systems = [], []
    if not isinstance(data, dict):
        problems.add(ANNOTATION, "the top level must be an object {video_id: {system: {...}}}", line=1)
        return captions, systems
    for video_id, by_system in data.items():
        if message := id_problem("video_id", video_id):
            problems.add(ANNOTATION, message, line=finder.line(video_id), where=_where(video_id))
            continue
        if not isinstance(by_system, dict) or not by_system:
            problems.add(
                ANNOTATION,
                "must be a non-empty object {system: {...}}",
                line=finder.line(video_id),
                where=_where(video_id),
            )
            continue
        for system, entry in by_system.items():
            where = (video_id, system)
            if message := id_problem("system", system):
                problems.add(ANNOTATION, message, line=finder.line(*where), where=_where(*where))
                continue
            if not isinstance(entry, dict):
                problems.add(
                    ANNOTATION,
                    "must be an object with paragraph_score and sentences",
                    line=finder.line(*where),
                    where=_where(*where),
                )
                continue
            missing = sorted(_CAPTION_KEYS - entry.keys())
            extra = sorted(entry.keys() - _CAPTION_KEYS)
            if missing:
                problems.add(
                    ANNOTATION, f"missing field {', '.join(missing)}", line=finder.line(*where), where=_where(*where)
                )
            if extra:
                problems.add(
                    ANNOTATION,
                    f"unknown field {', '.join(extra)}",
                    line=finder.line(*where, extra[0]),
                    where=_where(*where),
                )
            if missing or extra:
                continue
            score = entry["paragraph_score"]
            if type(score) is not int or not 1 <= score <= 5:
                problems.add(
                    ANNOTATION,
                    f"paragraph_score must be an integer from 1 to 5, not {score!r}",
                    line=finder.line(*where, "paragraph_score"),
                    where=_where(*where, "paragraph_score"),
                )
            raw_sentences = entry["sentences"]
            if not isinstance(raw_sentences, list) or not raw_sentences:
                problems.add(
                    ANNOTATION,
                    "sentences must be a non-empty list of strings",
                    line=finder.line(*where, "sentences"),
                    where=_where(*where, "sentences"),
                )
                continue
            sentences = []
            for index, raw in enumerate(raw_sentences):
                spot = dict(
                    line=finder.line(*where, "sentences", raw)
                    if isinstance(raw, str)
                    else finder.line(*where, "sentences"),
                    where=_where(*where, "sentences", index),
                )
                if not isinstance(raw, str) or not raw.strip():
                    problems.add(ANNOTATION, f"a sentence must be a non-empty string, not {raw!r}", **spot)
                    continue
                try:
                    tokens, spans = parse_bracketed(raw)
                except BracketError as exc:
                    problems.add(ANNOTATION, str(exc), **spot)
                    continue
                sentences.append(SentenceData(text=" ".join(tokens), tokens=tokens, error=bool(spans), spans=spans))
            if system not in systems:
                systems.append(system)
            captions.append(
                CaptionData(
                    video_id=video_id,
                    system=system,
                    sentences=sentences,
                    paragraph_score=score if type(score) is int else None,
                )
            )
    return captions, systems


def _read_vids(source, problems):
    try:
        text = source.read(VIDS)
    except UploadRefused as exc:
        problems.add(VIDS, exc.reason, line=exc.line)
        return None
    if text is None:
        return None
    ids, seen = [], {}
    for number, line in enumerate(safe_json.text_lines(text), start=1):
        video_id = line.strip()
        if not video_id:
            continue
        if video_id in seen:
            problems.add(VIDS, f"video {video_id!r} is listed twice (first on line {seen[video_id]})", line=number)
            continue
        seen[video_id] = number
        ids.append(video_id)
    return ids


def _system_for_file(stem, systems):
    matches = [s for s in systems if stem.lower() == s.lower() or stem.lower().startswith(s.lower() + "_")]
    return max(matches, key=len) if matches else None


def _read_references(relpath, data, text, video_ids, problems):
    finder = _LineFinder(text)
    reference_set = posixpath.basename(relpath)[: -len(".json")]
    references = []
    if not isinstance(data, dict):
        problems.add(relpath, "a reference file must be an object {video_id: paragraph}", line=1)
        return references
    for video_id in video_ids:
        if video_id not in data:
            continue
        paragraph = data[video_id]
        if not isinstance(paragraph, str):
            problems.add(
                relpath, "a reference paragraph must be a string", line=finder.line(video_id), where=_where(video_id)
            )
            continue
        references.append(ReferenceData(video_id=video_id, reference_set=reference_set, text=paragraph))
    return references


def _attach_timestamps(relpath, data, text, captions_of_system, problems, warnings):
    """Copy sentence timestamps from a system's results file onto the captions whose sentences it repeats."""
    finder = _LineFinder(text)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, dict):
        problems.add(relpath, 'a system file must hold {"results": {video_id: [{"sentence": ...}]}}', line=1)
        return
    differing = 0
    for caption in captions_of_system:
        entries = results.get(caption.video_id)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "sentence" in e for e in entries):
            problems.add(
                relpath,
                'each video must map to a list of {"sentence": ...} objects',
                line=finder.line("results", caption.video_id),
                where=_where("results", caption.video_id),
            )
            continue
        plain = [" ".join(s.tokens) for s in caption.sentences]
        if [" ".join(str(e["sentence"]).split()) for e in entries] != plain:
            differing += 1
            continue
        for sentence, entry in zip(caption.sentences, entries):
            stamp = entry.get("timestamp")
            if stamp is None:
                continue
            ok = (
                isinstance(stamp, list)
                and len(stamp) == 2
                and all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in stamp)
                and 0 <= stamp[0] <= stamp[1]
            )
            if not ok:
                problems.add(
                    relpath,
                    f"timestamp must be [start, end] seconds with start <= end, not {stamp!r}",
                    line=finder.line("results", caption.video_id, "timestamp"),
                    where=_where("results", caption.video_id),
                )
                break
            sentence.start, sentence.end = float(stamp[0]), float(stamp[1])
    if differing:
        warnings.append(
            f"{relpath}: sentences differ from the annotation for {differing} captions; their timestamps were not taken"
        )


def read_folder(source, *, video_url=None):
    """Read and validate a FactVC-layout folder into a DatasetBundle, or raise FormatError.

    ``video_url``: optional function video_id -> external URL (or "") for the imported videos.
    """
    problems = ProblemList()
    others = getattr(source, "other_folders", [])
    if others:
        first = source.prefix or "(the archive's root)"
        problems.add(
            ANNOTATION,
            f"the archive holds {len(others) + 1} dataset folders ({', '.join([first, *others])}), each with its "
            "factuality_annotation.json: import one dataset per archive",
        )
        problems.raise_if_any()
    data, text = load_json(source, ANNOTATION, problems)
    if data is None and text is None and not problems:
        problems.add(ANNOTATION, "file not found: a FactVC folder must contain factuality_annotation.json")
    problems.raise_if_any()

    captions, systems = _read_captions(data, text, problems)
    annotated = list(dict.fromkeys(c.video_id for c in captions))
    listed = _read_vids(source, problems)
    if listed is not None:
        known = set(listed)
        finder = _LineFinder(text)
        for video_id in annotated:
            if video_id not in known:
                problems.add(
                    ANNOTATION,
                    f"unknown video {video_id!r}: it is not listed in vids.txt",
                    line=finder.line(video_id),
                    where=_where(video_id),
                )
    video_ids = listed if listed is not None else annotated

    bundle = DatasetBundle(captions=captions, systems=[(s, False) for s in systems])
    bundle.videos = [VideoData(video_id=v, url=video_url(v) if video_url else "") for v in video_ids]
    by_system = {}
    for caption in captions:
        by_system.setdefault(caption.system, []).append(caption)
    for relpath in source.list(CAPTIONS):
        if not relpath.endswith(".json"):
            continue
        stem = posixpath.basename(relpath)[: -len(".json")]
        is_reference = stem.startswith("gt_")
        system = None if is_reference else _system_for_file(stem, systems)
        if not is_reference and system is None:
            bundle.warnings.append(f"{relpath}: matches no system of the annotation; ignored")
            continue
        file_data, file_text = load_json(source, relpath, problems)
        if file_data is None:
            continue
        if is_reference:
            bundle.references.extend(_read_references(relpath, file_data, file_text, video_ids, problems))
        else:
            _attach_timestamps(relpath, file_data, file_text, by_system[system], problems, bundle.warnings)
    check_lengths(bundle, ANNOTATION, problems)
    problems.raise_if_any()
    return bundle


class Unwritable(ValueError):
    """The bundle holds what the FactVC layout cannot say (a word with a bracket: it would be read as a span)."""


def write_annotation(bundle):
    """The ``factuality_annotation.json`` text of a bundle's labelled captions, formatted as the release.

    Error spans are brackets around words, so a word that holds ``[`` or ``]`` itself (JSONL imports take any
    text) would come back as a made-up span, or as a file that cannot be read: such a bundle is refused
    (:class:`Unwritable`, naming the sentences), not written."""
    bracketed = [
        f"video {caption.video_id}, system {caption.system}, sentence {number}: the word {word!r}"
        for caption in bundle.captions
        if caption.paragraph_score is not None
        for number, sentence in enumerate(caption.sentences, start=1)
        for word in sentence.tokens
        if "[" in word or "]" in word
    ]
    if bracketed:
        more = f" (and {len(bracketed) - 5} more)" if len(bracketed) > 5 else ""
        raise Unwritable(
            "the FactVC layout marks error spans with brackets, so a word holding '[' or ']' would be read back "
            f"as a span: {'; '.join(bracketed[:5])}{more}. Export JSONL, which keeps every word."
        )
    out = {}
    for caption in bundle.captions:
        if caption.paragraph_score is None:
            continue
        out.setdefault(caption.video_id, {})[caption.system] = {
            "paragraph_score": caption.paragraph_score,
            "sentences": [render_bracketed(s.tokens, s.spans) for s in caption.sentences],
        }
    return json.dumps(out, indent=4)
