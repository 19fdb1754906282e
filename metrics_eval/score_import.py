"""Reading per-caption metric scores (and correct/foil caption pairs) from CSV, JSON or JSON Lines files.

A caption is identified by ``video_id`` (the video's id in the dataset) and ``system`` (the system's name).

Scores - one of these layouts (docs/metrics.md has examples):

- CSV, long: header ``video_id,system,metric,score``, one score per line;
- CSV, wide: header ``video_id,system,NAME[,NAME...]``, one caption per line, one column per metric;
- JSON Lines (``.jsonl``): one object per line ``{"video_id", "system", "metric", "score"}``;
- JSON (``.json``): an array of those objects, or one metric with its description:
  ``{"metric": NAME, "version": "...", "parameters": {...}, "scores": [{"video_id", "system", "score"}, ...]}``.

Pairs: CSV with header ``video_id,correct,foil`` (system names of the correct and the foil caption), or JSON Lines /
a JSON array of such objects.

Reading checks the file on its own (shape, fields, numbers) and returns rows with their line numbers; checking
them against a dataset (``check_scores`` / ``check_pairs``) is pure too, given the dataset's caption keys. Every
problem is collected with its file, line and field, and nothing is written unless there are none.
"""

import json
import math
import re
from dataclasses import dataclass, field

from annotation_site import safe_json
from annotation_site.problems import FormatError, ProblemList
from annotation_site.strict_numbers import program_float

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")  # \Z: "bleu\n" is not a name ($ would take it)
# The columns a file's names and descriptions go into (Metric.name, Metric.version: asserted in
# tests/metrics_eval/test_import_lengths.py); past them PostgreSQL refused the write (a 500), SQLite stored them.
NAME_MAX_LENGTH = 60
VERSION_MAX_LENGTH = 200
KEY_FIELDS = ("video_id", "system")


def name_problem(name, what="metric"):
    """Why ``name`` cannot name a metric (None when it can)."""
    if not isinstance(name, str) or not NAME.match(name):
        return f"{what} must be a name of letters, digits, '.', '_', '+', '-', not {name!r}"
    if len(name) > NAME_MAX_LENGTH:
        return f"{what} must be at most {NAME_MAX_LENGTH} characters, not {len(name)}"
    return None


def version_problem(version):
    """Why ``version`` cannot describe a metric's version (None when it can)."""
    if not isinstance(version, str):
        return "version must be a string"
    if len(version) > VERSION_MAX_LENGTH:
        return f"version must be at most {VERSION_MAX_LENGTH} characters, not {len(version)}"
    return None


@dataclass
class ScoreRow:
    metric: str
    video_id: str
    system: str
    score: float
    line: int | None


@dataclass
class ScoreFile:
    filename: str
    rows: list = field(default_factory=list)
    described: dict = field(default_factory=dict)  # metric -> {"version": str, "parameters": dict}


@dataclass
class PairRow:
    video_id: str
    correct: str
    foil: str
    line: int | None


def _suffix(filename):
    lower = filename.lower()
    for suffix in (".jsonl", ".json", ".csv"):
        if lower.endswith(suffix):
            return suffix
    return None


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        number = program_float(value)  # not float(): it takes "٣" and "1_000"
        if number is None:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _text(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _check_record(record, line, filename, problems, *, metric=None):
    """A score object/row -> ScoreRow, or None after adding its problems."""
    if not isinstance(record, dict):
        problems.add(filename, "each score must be an object with video_id, system, metric and score", line=line)
        return None
    bad = False
    values = {}
    for key in KEY_FIELDS:
        values[key] = _text(record.get(key))
        if values[key] is None:
            problems.add(filename, f"{key} is missing or empty", line=line, where=key)
            bad = True
    name = metric if metric is not None else record.get("metric")
    if metric is None and (problem := name_problem(name)):
        problems.add(filename, problem, line=line, where="metric")
        bad = True
    score = _number(record.get("score"))
    if score is None:
        problems.add(filename, f"score must be a finite number, not {record.get('score')!r}", line=line, where="score")
        bad = True
    return None if bad else ScoreRow(name, values["video_id"], values["system"], score, line)


def _read_csv_scores(text, filename, problems, result):
    reader = problems.csv_reader(text, filename)
    header = next(reader, None)
    if not header:
        problems.add(filename, "the file is empty (expected a header line)", line=1)
        return
    header = [h.strip() for h in header]
    missing = [k for k in KEY_FIELDS if k not in header]
    if missing:
        problems.add(filename, f"the header needs the columns {', '.join(missing)}", line=1)
        return
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        problems.add(filename, f"column(s) {', '.join(duplicates)} appear more than once", line=1)
        return
    long = "metric" in header or "score" in header
    if long and not {"metric", "score"} <= set(header):
        problems.add(filename, "a long CSV needs both the columns metric and score", line=1)
        return
    metric_columns = [] if long else [h for h in header if h not in KEY_FIELDS]
    for name in metric_columns:
        if problem := name_problem(name, what=f"column {name[:80]!r}"):
            problems.add(filename, problem, line=1, where=name[:80])
    if not long and not metric_columns:
        problems.add(filename, "no metric columns: use video_id,system,metric,score or one column per metric", line=1)
    if problems:
        return
    for line, cells in problems.csv_records(reader, len(header), filename):
        record = dict(zip(header, cells))
        if long:
            row = _check_record(record, line, filename, problems)
            if row:
                result.rows.append(row)
        else:
            for name in metric_columns:
                if record[name].strip() == "":
                    continue  # no score of this metric for this caption
                row = _check_record({**record, "score": record[name]}, line, filename, problems, metric=name)
                if row:
                    result.rows.append(row)


_WHITESPACE = " \t\r\n"  # JSON's whitespace (RFC 8259, section 2)


def _skip_whitespace(text, position):
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def _array_lines(text, array_start):
    """Line numbers of the elements of the JSON array starting at ``array_start`` (decoded one by one)."""
    decoder = json.JSONDecoder()
    lines, position, line, counted = [], array_start + 1, 1, 0
    while True:
        position = _skip_whitespace(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip_whitespace(text, position + 1)
        if position >= len(text) or text[position] == "]":
            return lines
        line += text.count("\n", counted, position)  # counted on from the last element, not from the start
        counted = position
        lines.append(line)
        _, position = decoder.raw_decode(text, position)


def _member_start(text, key):
    """Where the value of member ``key`` of the top-level JSON object in ``text`` starts (None without it).

    The object is walked member by member, each value decoded whole, so a key of the same name nested inside
    another member (``"parameters": {"scores": [...]}``) is never taken for it. ``text`` has been decoded
    already (well formed, no key twice)."""
    decoder = json.JSONDecoder()
    position = _skip_whitespace(text, 0)
    if position >= len(text) or text[position] != "{":
        return None
    position += 1
    while True:
        position = _skip_whitespace(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip_whitespace(text, position + 1)
        if position >= len(text) or text[position] != '"':
            return None  # "}": the end of the object
        name, position = json.decoder.scanstring(text, position + 1)
        position = _skip_whitespace(text, position)  # at the ':'
        position = _skip_whitespace(text, position + 1)
        if name == key:
            return position
        _, position = decoder.raw_decode(text, position)


def _with_lines(records, lines):
    """``records`` paired with their line numbers; one count for each, or an error (never a silent cut)."""
    return zip(records, lines, strict=True)


def _read_json_scores(text, filename, problems, result):
    try:
        data = safe_json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(filename, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
        return
    if isinstance(data, list):
        lines = _array_lines(text, _skip_whitespace(text, 0))
        for record, line in _with_lines(data, lines):
            row = _check_record(record, line, filename, problems)
            if row:
                result.rows.append(row)
        return
    if not isinstance(data, dict) or "scores" not in data:
        problems.add(filename, 'expected an array of scores or {"metric": ..., "scores": [...]}', line=1)
        return
    metric = data.get("metric")
    if problem := name_problem(metric):
        problems.add(filename, problem, line=1, where="metric")
        return
    version, parameters = data.get("version", ""), data.get("parameters", {})
    if problem := version_problem(version):
        problems.add(filename, problem, line=1, where="version")
        version = ""
    if not isinstance(parameters, dict):
        problems.add(filename, "parameters must be an object", line=1, where="parameters")
    if not isinstance(data["scores"], list):
        problems.add(filename, "scores must be an array", line=1, where="scores")
        return
    lines = _array_lines(text, _member_start(text, "scores"))
    result.described[metric] = {
        "version": version,
        "parameters": parameters if isinstance(parameters, dict) else {},
    }
    for record, line in _with_lines(data["scores"], lines):
        if isinstance(record, dict) and "metric" in record and record["metric"] != metric:
            problems.add(
                filename,
                f"metric {record['metric']!r} differs from the file's metric {metric!r}",
                line=line,
                where="metric",
            )
            continue
        row = _check_record(record, line, filename, problems, metric=metric)
        if row:
            result.rows.append(row)


def _json_lines(text, filename, problems):
    for number, raw in enumerate(safe_json.text_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            yield safe_json.loads(raw, object_pairs_hook=safe_json.no_duplicate_keys), number
        except safe_json.DuplicateKey as exc:
            problems.add(filename, f"key {exc.args[0]!r} appears more than once", line=number)
        except json.JSONDecodeError as exc:
            problems.add(filename, f"invalid JSON: {exc.msg} (column {exc.colno})", line=number)


def raise_sorted(problems):
    """Raise FormatError with the problems in file order (by line; problems without a line last)."""
    if problems:
        raise FormatError(sorted(problems, key=lambda p: (p.line is None, p.line or 0)))


def read_scores(text, filename, problems=None):
    """Read a score file. Problems go to ``problems`` when given (the caller raises), else FormatError is raised
    listing every problem; rows with problems are left out of the result."""
    collect = problems is not None
    problems = problems if collect else ProblemList()
    result = ScoreFile(filename)
    suffix = _suffix(filename)
    if suffix == ".csv":
        _read_csv_scores(text.lstrip("\ufeff"), filename, problems, result)
    elif suffix == ".json":
        _read_json_scores(text, filename, problems, result)
    elif suffix == ".jsonl":
        for record, line in _json_lines(text, filename, problems):
            row = _check_record(record, line, filename, problems)
            if row:
                result.rows.append(row)
    else:
        problems.add(filename, "unknown file type: use .csv, .json or .jsonl")
    if not problems and not result.rows:
        problems.add(filename, "the file holds no scores")
    if not collect:
        raise_sorted(problems)
    return result


def _caption_problem(video_id, system, videos, systems):
    if video_id not in videos:
        return f"unknown video {video_id!r}: it is not in the dataset", "video_id"
    if system not in systems:
        return f"unknown system {system!r}: it is not in the dataset", "system"
    return f"the dataset has no caption of system {system!r} for video {video_id!r}", "system"


def check_scores(score_file, caption_ids, existing, *, replace=False, problems=None):
    """Check the rows against the dataset. ``caption_ids``: {(video_id, system): caption_id}; ``existing``:
    {metric name: source} of the dataset's metrics. Returns {metric: {caption_id: score}}; raises FormatError
    with these and the earlier ``problems`` (of reading) if there are any."""
    problems = problems if problems is not None else ProblemList()
    filename = score_file.filename
    videos = {v for v, _ in caption_ids}
    systems = {s for _, s in caption_ids}
    seen, scores = {}, {}
    for row in score_file.rows:
        caption_id = caption_ids.get((row.video_id, row.system))
        if caption_id is None:
            message, where = _caption_problem(row.video_id, row.system, videos, systems)
            problems.add(filename, message, line=row.line, where=where)
            continue
        key = (row.metric, caption_id)
        if key in seen:
            first = f" (first on line {seen[key]})" if seen[key] else ""
            problems.add(
                filename,
                f"a second {row.metric} score for {row.system} on {row.video_id}{first}",
                line=row.line,
                where="score",
            )
            continue
        seen[key] = row.line
        scores.setdefault(row.metric, {})[caption_id] = row.score
    for metric in sorted(scores):
        source = existing.get(metric)
        if source and not replace:
            what = "is computed by the platform" if source == "computed" else "already has scores"
            problems.add(
                filename,
                f"metric {metric!r} {what}: import under another name, or replace it (--replace / replace=true)",
                where="metric",
            )
    raise_sorted(problems)
    return scores


def read_pairs(text, filename, problems=None):
    """Read a pair file (video_id, correct, foil); problems go to ``problems`` when given, else FormatError."""
    collect = problems is not None
    problems = problems if collect else ProblemList()
    records = []
    suffix = _suffix(filename)
    if suffix == ".csv":
        reader = problems.csv_reader(text.lstrip("\ufeff"), filename)
        header = [name.strip() for name in next(reader, None) or []]
        if not {"video_id", "correct", "foil"} <= set(header):
            problems.add(filename, "the header needs the columns video_id, correct and foil", line=1)
        elif len(set(header)) != len(header):
            twice = sorted({name for name in header if header.count(name) > 1})
            problems.add(filename, f"the header names {', '.join(map(repr, twice))} more than once", line=1)
        else:  # (a row with more or fewer cells than the header is a problem of its line, not cut to fit)
            for line, fields in problems.csv_records(reader, len(header), filename):
                records.append(({name: value for name, value in zip(header, fields) if name}, line))
    elif suffix in (".json", ".jsonl"):
        if suffix == ".jsonl":
            records = list(_json_lines(text, filename, problems))
        else:
            try:
                data = safe_json.loads(text)
            except json.JSONDecodeError as exc:
                problems.add(filename, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
                data = None
            if data is not None and not isinstance(data, list):
                problems.add(filename, "expected an array of pairs", line=1)
            elif data is not None:
                records = list(_with_lines(data, _array_lines(text, _skip_whitespace(text, 0))))
    else:
        problems.add(filename, "unknown file type: use .csv, .json or .jsonl")
    rows = []
    for record, line in records:
        if not isinstance(record, dict):
            problems.add(filename, "each pair must be an object with video_id, correct and foil", line=line)
            continue
        values = {key: _text(record.get(key)) for key in ("video_id", "correct", "foil")}
        for key, value in values.items():
            if value is None:
                problems.add(filename, f"{key} is missing or empty", line=line, where=key)
        if None not in values.values():
            if values["correct"] == values["foil"]:
                problems.add(filename, "correct and foil name the same system", line=line, where="foil")
            else:
                rows.append(PairRow(values["video_id"], values["correct"], values["foil"], line))
    if not problems and not rows:
        problems.add(filename, "the file holds no pairs")
    if not collect:
        raise_sorted(problems)
    return rows


def check_pairs(rows, filename, caption_ids, problems=None):
    """[(correct caption_id, foil caption_id)] for the rows; raises FormatError (with earlier ``problems``)."""
    problems = problems if problems is not None else ProblemList()
    videos = {v for v, _ in caption_ids}
    systems = {s for _, s in caption_ids}
    pairs, seen = [], {}
    for row in rows:
        ids = []
        for key, system in (("correct", row.correct), ("foil", row.foil)):
            caption_id = caption_ids.get((row.video_id, system))
            if caption_id is None:
                message, _ = _caption_problem(row.video_id, system, videos, systems)
                problems.add(filename, message, line=row.line, where=key)
            ids.append(caption_id)
        if None in ids:
            continue
        if tuple(ids) in seen:
            problems.add(
                filename,
                f"the pair {row.correct} / {row.foil} on {row.video_id} appears twice"
                f" (first on line {seen[tuple(ids)]})",
                line=row.line,
            )
            continue
        seen[tuple(ids)] = row.line
        pairs.append(tuple(ids))
    raise_sorted(problems)
    return pairs


__all__ = ["FormatError", "ProblemList", "read_scores", "check_scores", "read_pairs", "check_pairs"]
