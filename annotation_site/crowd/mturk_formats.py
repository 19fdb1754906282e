"""MTurk's file formats, as pure functions (no ORM): the batch input CSV, the ExternalQuestion XML, the batch
results CSV (parsed and validated whole, every problem with its line), and the Approve/Reject upload CSV.

Formats (MTurk requester documentation; AWS closed MTurk on 2026-09-30, the formats live on in archives):
- batch input: one row per HIT, a header of variable names; a HIT layout refers to them as ``${name}``;
- results: one row per assignment with ``HITId, HITTypeId, Title, ..., AssignmentId, WorkerId,
  AssignmentStatus, AcceptTime, SubmitTime, ..., WorkTimeInSeconds, ..., Input.<name>..., Answer.<name>...,
  Approve, Reject``; answers either in per-field ``Answer.*`` columns or in one ``Answer.taskAnswers`` JSON
  (a list holding one object of field -> value, as crowd-html-elements layouts write it);
- upload: the same file with ``Approve`` = ``x`` or ``Reject`` = the reason to the worker, for submitted rows.
"""

import csv
import io
import json
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from annotation_site import safe_json, spreadsheet_csv

EXTERNAL_QUESTION_NS = "http://mturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
REQUIRED_RESULT_COLUMNS = ("HITId", "AssignmentId", "WorkerId", "AssignmentStatus")
ASSIGNMENT_STATUSES = ("Submitted", "Approved", "Rejected")
# The ids MTurk issues for assignments and HITs (its API's EntityId: 1 to 64 capital letters and digits). The
# written Approve / Reject file must give an AssignmentId back to MTurk exactly as it came; an id of another
# shape cannot come from MTurk and could not go back unchanged (one beginning with a formula character or a
# single quote is escaped in every CSV the platform writes), so it is refused when the file is read.
ENTITY_ID = re.compile(r"[A-Z0-9]{1,64}\Z")
ENTITY_ID_COLUMNS = ("HITId", "AssignmentId")
MAX_FRAME_HEIGHT = 0  # 0: MTurk gives the page the whole window


NOTHING_IMPORTED = "nothing was imported"
NO_APPROVE_REJECT_FILE = "no approve / reject file was written"


def refusal_outcome(action):
    """What a refused results file means for the user of ``action`` (``import`` / ``approve-reject``)."""
    return NO_APPROVE_REJECT_FILE if action == "approve-reject" else NOTHING_IMPORTED


class FormatError(Exception):
    """The file is refused whole; ``problems`` lists every one as 'FILE, line N, field F: message'."""

    def __init__(self, problems, rows=None, *, outcome=NOTHING_IMPORTED):
        self.problems = list(problems)
        self.rows = rows or []  # the rows that were read without a problem (so later checks can add theirs)
        super().__init__(
            f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} found, {outcome}:\n"
            + "\n".join(self.problems)
        )


@dataclass
class ResultRow:
    line: int
    hit_id: str
    assignment_id: str
    worker_id: str
    status: str
    work_seconds: int | None
    inputs: dict = field(default_factory=dict)
    answers: dict = field(default_factory=dict)
    approve: bool = False
    reject: str = ""


def external_question(url, frame_height=MAX_FRAME_HEIGHT):
    """The ExternalQuestion XML for a HIT page at ``url`` (MTurk appends assignmentId, hitId, workerId and
    turkSubmitTo to it)."""
    if not url.startswith("https://"):
        raise ValueError("MTurk only frames https:// pages")
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL><FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def batch_input_csv(rows, columns):
    """The batch input CSV: ``columns`` in order, one row (a dict) per HIT."""
    out = io.StringIO()
    writer = spreadsheet_csv.DictWriter(out, fieldnames=list(columns), extrasaction="raise")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def parse_results(text, *, filename="results.csv", answer_fields=None, validate_answers=None):
    """Parse a batch results CSV into ResultRows; raise FormatError listing every problem (nothing partial).

    ``answer_fields``: names every answer must carry (from ``Answer.*`` columns or ``Answer.taskAnswers``);
    ``validate_answers(answers) -> [(field, message)]``: the protocol's checks of one row's answers."""
    problems, bad_lines = [], set()

    def problem(line, column, message):
        bad_lines.add(line)
        problems.append(
            f"{filename}, line {line}, field '{column}': {message}" if column else f"{filename}, line {line}: {message}"
        )

    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise FormatError([f"{filename}, line 1: the file is empty"]) from None
    except csv.Error as exc:
        raise FormatError([f"{filename}, line 1: {exc}"]) from None
    if any("\x00" in column for column in header):
        raise FormatError([f"{filename}, line 1: a NUL character; NUL is not allowed in text"])
    missing = [c for c in REQUIRED_RESULT_COLUMNS if c not in header]
    if missing:
        raise FormatError(
            [
                f"{filename}, line 1: missing column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)} (is this an MTurk batch results file?)"
            ]
        )
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates:
        raise FormatError([f"{filename}, line 1: repeated column {', '.join(duplicates)}"])
    rows, seen = [], {}
    line = 1
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problem(reader.line_num, "", f"unreadable CSV ({exc})")
            break
        line = reader.line_num  # the physical line where the record ends (quoted fields may span lines)
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            problem(line, "", f"{len(values)} values for {len(header)} columns")
            continue
        if any("\x00" in value for value in values):  # PostgreSQL's text cannot hold it (a lookup was a 500)
            problem(line, "", "a NUL character; NUL is not allowed in text")
            continue
        record = dict(zip(header, values))
        for column in REQUIRED_RESULT_COLUMNS:
            if not record[column].strip():
                problem(line, column, "empty")
        for column in ENTITY_ID_COLUMNS:
            value = record[column].strip()
            if value and not ENTITY_ID.match(value):
                problem(line, column, f"{value[:80]!r} is not an MTurk id (1 to 64 capital letters and digits)")
        status = record["AssignmentStatus"].strip()
        if status and status not in ASSIGNMENT_STATUSES:
            problem(line, "AssignmentStatus", f"{status!r} is not one of {', '.join(ASSIGNMENT_STATUSES)}")
        assignment = record["AssignmentId"].strip()
        if assignment in seen:
            problem(line, "AssignmentId", f"{assignment} already on line {seen[assignment]}")
        elif assignment:
            seen[assignment] = line
        seconds = None
        raw_seconds = record.get("WorkTimeInSeconds", "").strip()
        if raw_seconds:
            try:
                seconds = int(raw_seconds)
                if seconds < 0:
                    raise ValueError
            except ValueError:
                problem(line, "WorkTimeInSeconds", f"{raw_seconds!r} is not a whole number of seconds")
        answers = {
            k[len("Answer.") :]: v for k, v in record.items() if k.startswith("Answer.") and k != "Answer.taskAnswers"
        }
        task_answers = record.get("Answer.taskAnswers", "").strip()
        if task_answers:
            try:
                decoded = safe_json.loads(task_answers)
                if isinstance(decoded, list):
                    decoded = decoded[0] if len(decoded) == 1 else None
                if not isinstance(decoded, dict):
                    raise ValueError("expected a list holding one object")
                for key, value in decoded.items():
                    answers[key] = (
                        value
                        if isinstance(value, str)
                        else json.dumps(value)
                        if isinstance(value, (dict, list))
                        else str(value)
                    )
            except ValueError as exc:
                problem(line, "Answer.taskAnswers", f"not the JSON MTurk writes ({exc})")
        for name in answer_fields or ():
            if str(answers.get(name, "")).strip() == "" and status != "Rejected":
                problem(line, f"Answer.{name}", "missing answer")
        if validate_answers is not None:
            for column, message in validate_answers(answers):
                problem(line, f"Answer.{column}", message)
        approve = record.get("Approve", "").strip()
        reject = record.get("Reject", "").strip()
        if approve and reject:
            problem(line, "Reject", "both Approve and Reject are filled")
        rows.append(
            ResultRow(
                line=line,
                hit_id=record["HITId"].strip(),
                assignment_id=assignment,
                worker_id=record["WorkerId"].strip(),
                status=status,
                work_seconds=seconds,
                # MTurk copies these cells from our batch input CSV, formula guard included ('-x): taken off
                inputs={
                    k[len("Input.") :]: spreadsheet_csv.restore(v) for k, v in record.items() if k.startswith("Input.")
                },
                answers=answers,
                approve=bool(approve),
                reject=reject,
            )
        )
    if problems:
        raise FormatError(problems, [r for r in rows if r.line not in bad_lines])
    if not rows:
        raise FormatError([f"{filename}, line {line}: no assignments in the file"])
    return rows


def approve_reject_csv(text, decisions, *, filename="results.csv"):
    """The results file with its Approve / Reject columns filled from ``decisions`` ({AssignmentId: ("approve",
    "") | ("reject", reason)}); other rows are left empty (reviewed by a person). Columns are kept in order.

    The file is checked whole first, as an import would check it (``parse_results`` without the protocol's
    answers): a file that is not a results file, or has a row whose values do not match its columns, raises
    FormatError naming the file, line and field, rather than coming back with rows shifted under the wrong
    columns for MTurk."""
    try:
        parse_results(text, filename=filename)
    except FormatError as exc:
        raise FormatError(exc.problems, outcome=NO_APPROVE_REJECT_FILE) from None
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    header = next(reader)
    for column in ("Approve", "Reject"):
        if column not in header:
            header.append(column)
    position = {c: i for i, c in enumerate(header)}
    out = io.StringIO()
    writer = spreadsheet_csv.writer(out)
    writer.writerow(header)
    for values in reader:
        if not any(v.strip() for v in values):
            continue
        values = values + [""] * (len(header) - len(values))
        for column in ENTITY_ID_COLUMNS:  # checked MTurk ids once stripped: given back as MTurk issued them
            values[position[column]] = values[position[column]].strip()
        action, reason = decisions.get(values[position["AssignmentId"]], ("", ""))
        values[position["Approve"]] = "x" if action == "approve" else ""
        values[position["Reject"]] = reason if action == "reject" else ""
        writer.writerow(values)
    return out.getvalue()
