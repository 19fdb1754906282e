"""Importing an MTurk batch results file into a study: the file is parsed and validated whole (the protocol
checks its answers), then, in one transaction, the protocol stores the answers (keyed by AssignmentId) and the
crowd app records who did which HIT (a completed Participation per assignment). Importing the same file again
changes nothing. The result counts the rows and says, in ``warnings`` (file, line, field), what was imported all
the same but deserves a word: a unit taken above its capacity (a project's video past its annotators per video, a
task's item past its annotators per item, a DA HIT past its workers per HIT). The Approve/Reject file is written
from the ledger's decisions."""

from django.db import transaction
from django.utils import timezone

from annotation_site import identities

from . import adapters, mturk_formats, participant_ids
from .models import ExternalUnit, LedgerEntry, Participant, Participation, Provider
from .providers.mturk import MTurkProvider

NAMESPACE = MTurkProvider.name


def import_results(study, text, *, filename="results.csv"):
    if study.provider != Provider.MTURK:
        raise mturk_formats.FormatError([f"{filename}: study {study.name} is not an MTurk study"])
    adapter, target = adapters.study_target(study)
    fields, validate = adapter.answer_spec(target)
    try:
        rows = mturk_formats.parse_results(text, filename=filename, answer_fields=fields, validate_answers=validate)
        problems = []
    except mturk_formats.FormatError as exc:
        if not exc.rows:
            raise  # not a results file, or nothing readable: nothing more to check
        rows, problems = exc.rows, exc.problems
    rows, refused_workers = _stored_worker_ids(rows, filename)
    problems = problems + refused_workers + _assignments_of_other_workers(study, rows, filename)
    checked = [
        (line, _located(filename, line, field, message)) for line, field, message in adapter.check_results(target, rows)
    ]
    if problems or checked:
        merged = [(_line_of(p), p) for p in problems] + checked
        raise mturk_formats.FormatError([p for _, p in sorted(merged, key=lambda pair: pair[0])])
    now = timezone.now()
    with transaction.atomic():
        participants = {}
        for worker in sorted({r.worker_id for r in rows}):
            participants[worker], _ = Participant.objects.get_or_create(namespace=NAMESPACE, platform_id=worker)
        imported = adapter.import_results(target, rows, {w: p.worker_key for w, p in participants.items()})
        keys = imported.keys
        known = set(
            Participation.objects.filter(
                study=study, external_submission_id__in=[r.assignment_id for r in rows]
            ).values_list("external_submission_id", flat=True)
        )
        fresh = [row for row in rows if row.assignment_id not in known]
        works = {row.assignment_id: adapter.work(target, keys[row.assignment_id]) for row in fresh}
        _refuse_work_done_twice(study, fresh, works, filename)
        created = []
        for row in fresh:
            work = works[row.assignment_id]
            created.append(
                Participation(
                    study=study,
                    participant=participants[row.worker_id],
                    status=Participation.Status.COMPLETED,
                    external_submission_id=row.assignment_id,
                    external_unit_id=row.hit_id,
                    work_key=work.key,
                    unit_key=work.unit_key,
                    unit_label=work.unit_label,
                    platform_status=row.status,
                    started_at=now,
                    completed_at=now,
                    last_seen_at=now,
                )
            )
            if (
                not ExternalUnit.objects.filter(study=study, unit_key=work.unit_key).exists()
                and not ExternalUnit.objects.filter(study=study, external_id=row.hit_id).exists()
            ):
                ExternalUnit.objects.create(
                    study=study, external_id=row.hit_id, unit_key=work.unit_key, unit_label=work.unit_label
                )
        Participation.objects.bulk_create(created)
    return {
        "rows": len(rows),
        "created": len(created),
        "unchanged": len(rows) - len(created),
        "warnings": [_located(filename, line, field, message) for line, field, message in imported.warnings],
    }


def _located(filename, line, field, message):
    """A problem or warning of the protocol's, as the file's own problems read: ``FILE, line N, field 'F': ...``."""
    return f"{filename}, line {line}, field '{field}': {message}" if field else f"{filename}, line {line}: {message}"


def _stored_worker_ids(rows, filename):
    """The rows with their WorkerId as the platform stores it (``participant_ids.platform_id``: normalised, so the
    worker is the one who came by the HIT page, and short enough for the protocols' worker columns), and a
    problem for each row whose id is refused (it was a database error on PostgreSQL, or a second participant)."""
    kept, problems = [], []
    for row in rows:
        try:
            row.worker_id = participant_ids.platform_id(NAMESPACE, row.worker_id, what="WorkerId")
        except identities.IdentityError as exc:
            problems.append(f"{filename}, line {row.line}, field 'WorkerId': {exc}")
        else:
            kept.append(row)
    return kept, problems


def _assignments_of_other_workers(study, rows, filename):
    """A problem for each row whose AssignmentId was imported before for another WorkerId: MTurk gives an
    assignment to one worker, so the file is not what was imported (an edited copy, another batch). It was
    answered "unchanged" while a second participant and an empty assignment were written for it."""
    owners = dict(
        Participation.objects.filter(
            study=study, external_submission_id__in=[r.assignment_id for r in rows]
        ).values_list("external_submission_id", "participant__platform_id")
    )
    return [
        f"{filename}, line {row.line}, field 'WorkerId': assignment {row.assignment_id} was imported for worker "
        f"{owners[row.assignment_id]}, not {row.worker_id}"
        for row in rows
        if row.assignment_id in owners and owners[row.assignment_id] != row.worker_id
    ]


def _refuse_work_done_twice(study, fresh, works, filename):
    """A worker's HIT (the protocol's assignment) of a row not imported before already recorded under another
    AssignmentId, by an earlier file: a FormatError, which rolls back the import's transaction (it was an
    IntegrityError, a 500)."""
    taken = dict(
        Participation.objects.filter(
            study=study, work_key__in=[works[row.assignment_id].key for row in fresh]
        ).values_list("work_key", "external_submission_id")
    )
    problems = [
        f"{filename}, line {row.line}, field 'WorkerId': {row.worker_id} already did this HIT as assignment "
        f"{taken[works[row.assignment_id].key]} (imported earlier)"
        for row in fresh
        if works[row.assignment_id].key in taken
    ]
    if problems:
        raise mturk_formats.FormatError(problems)


def approve_reject_file(study, text, *, filename="results.csv"):
    """The results file with Approve / Reject filled from the study's decisions in the ledger (rows without a
    decision stay empty: a person decides them). A file that is not a well-formed results file raises
    ``mturk_formats.FormatError`` (file, line, field)."""
    decisions = {}
    for entry in LedgerEntry.objects.filter(study=study, kind=LedgerEntry.Kind.DECISION):
        decisions[entry.submission_id] = (entry.action, entry.reason if entry.action == "reject" else "")
    return mturk_formats.approve_reject_csv(text, decisions, filename=filename)


def _line_of(problem):
    try:
        return int(problem.split(", line ")[1].split(",")[0].split(":")[0])
    except (IndexError, ValueError):
        return 0
