"""The crowd adapter of a protocol whose work is units of fixed capacity (a factuality project's videos, a judgment
task's items), written once: finding the target, taking a slot on the very unit MTurk names, releasing one, the
assignment records for payments, and the MTurk results import (which row is which unit, each worker once per
unit, each answer stored once under a UUID derived from the AssignmentId, a unit taken above its capacity
named in a warning).

``UnitsAdapter`` is a mixin: the protocol's adapter subclasses it and ``crowd.adapters.ProtocolAdapter``, sets the
class attributes below (its models and words) and keeps what is its own (describing the target, the work page,
checking an answer, writing submissions). The crowd app's vocabulary (``Target``, ``AssignmentRecord``,
``QCOutcome``, ``Imported``) comes in ``crowd``, the module the protocol passes: workflow sits beside crowd and
imports none of it (``.importlinter``).
"""

import uuid

from django.db import transaction
from django.db.models import F, Max

from . import capacity


def answered_before(seen, row, unit_key, unit_text):
    """``(line, "WorkerId", message)`` when ``row``'s worker answered the unit ``unit_key`` (``unit_text`` in the
    message: "HIT 3") on an earlier line of the results file, else None. ``seen`` maps (worker, unit) to the
    line of its first answer and is filled here: a worker answers a unit once (two were an IntegrityError).
    Used by every protocol's results import, Direct Assessment's included."""
    key = (row.worker_id, unit_key)
    if key not in seen:
        seen[key] = row.line
        return None
    return (row.line, "WorkerId", f"{row.worker_id} answered {unit_text} already on line {seen[key]}")


class UnitsAdapter:
    crowd = None  # annotation_site.crowd.adapters
    annotator_model = None  # annotators.Annotator
    target_model = None  # Project / Task
    unit_model = None  # ProjectVideo / Item: ``assigned`` counts the slots taken
    assignment_model = None
    member_model = None  # ProjectMember / TaskMember
    submission_model = None
    target_field = ""  # the assignment's and unit's foreign key to the target: "project" / "task"
    unit_field = ""  # the assignment's foreign key to its unit: "project_video" / "item"
    capacity_field = ""  # the target's slots per unit: "annotators_per_video" / "annotators_per_item"
    unit_label = ""  # the assignment's path to what a unit is called: "project_video__video__external_id"
    work_related = ()  # what ``_work`` reads of an assignment (``select_related``)
    unit_noun = ""  # "video" / "item"
    unit_input = ""  # the MTurk input naming a unit by its label: "video_id" / "item_id"
    no_qc = ""  # why every submitted assignment's QC is insufficient_data
    import_namespace = None  # uuid.UUID of the submission ids of imported MTurk answers

    # --- targets ---------------------------------------------------------------------------------------------

    def target(self, name):
        found = self.target_model.objects.filter(name=name).only("pk", "name").first()
        return self.crowd.Target(self.protocol, found.pk, found.name) if found else None

    def target_by_id(self, object_id):
        found = self.target_model.objects.filter(pk=object_id).only("pk", "name").first()
        return self.crowd.Target(self.protocol, found.pk, found.name) if found else None

    def _target(self, target):
        return self.target_model.objects.get(pk=target.object_id)

    # --- slots -------------------------------------------------------------------------------------------------

    def _member(self, found, worker_key):
        """The crowd annotator of ``worker_key`` (the same whatever the protocol), a member of ``found``."""
        annotator, _ = self.annotator_model.objects.get_or_create(
            kind=self.annotator_model.Kind.CROWD, provider="crowd", external_id=worker_key
        )
        self.member_model.objects.get_or_create(**{self.target_field: found, "annotator": annotator})
        return annotator

    def new_assignment_fields(self):
        """Fields of a new assignment beyond its target, unit and annotator (a shuffle seed, ...)."""
        return {}

    def _claim(self, found, annotator, unit_pk):
        """The annotator's assignment on this very unit (MTurk fixes the HIT), claimed while it has room."""
        mine = {self.target_field: found, "annotator": annotator, f"{self.unit_field}_id": unit_pk}
        with transaction.atomic():
            existing = self.assignment_model.objects.filter(**mine).first()
            if existing is not None:
                return existing
            taken = self.unit_model.objects.filter(
                pk=unit_pk, **{self.target_field: found, "assigned__lt": getattr(found, self.capacity_field)}
            ).update(assigned=F("assigned") + 1)
            if not taken:
                return None
            return self.assignment_model.objects.create(**mine, **self.new_assignment_fields())

    def _work(self, found, *, last=None):
        """The crowd ``Work`` of an assignment (its page, completion, last activity)."""
        raise NotImplementedError

    def work(self, target, work_key):
        found = (
            self.assignment_model.objects.select_related(*self.work_related)
            .filter(pk=int(work_key), **{f"{self.target_field}_id": target.object_id})
            .annotate(last=Max("submissions__created_at"))
            .first()
        )
        return None if found is None else self._work(found, last=found.last)

    def release_assignment(self, found):
        """Give the assignment's slot back (the protocol's assignment service)."""
        raise NotImplementedError

    def release(self, target, work_key):
        found = self.assignment_model.objects.filter(
            pk=int(work_key), **{f"{self.target_field}_id": target.object_id}
        ).first()
        return bool(found) and self.release_assignment(found)

    def assignments(self, target):
        out = []
        done_status = self.assignment_model.Status.SUBMITTED
        for pk, external, label, status in self.assignment_model.objects.filter(
            **{f"{self.target_field}_id": target.object_id}, annotator__kind=self.annotator_model.Kind.CROWD
        ).values_list("pk", "annotator__external_id", self.unit_label, "status"):
            done = status == done_status
            qc = self.crowd.QCOutcome("insufficient_data" if done else "in_progress", detail=self.no_qc if done else "")
            out.append(self.crowd.AssignmentRecord(str(pk), external, label, done, qc))
        return out

    # --- MTurk results -----------------------------------------------------------------------------------------

    def answer_spec(self, target):
        return [], lambda answers: []  # answers are checked per unit in check_results

    def unit_name(self, unit):
        """What a unit is called in messages (a video's id, an item's key)."""
        raise NotImplementedError

    def result_units(self, found, rows, by_pk, by_label, problems):
        """``(row, unit)`` of each result row whose unit is known (``Input.hit_id``: our unit key, as the batch
        export writes it, or the unit's label in ``Input.<unit_input>``) and that its worker answers once; the
        other rows are ``problems`` as ``(line, field, message)``."""
        seen = {}
        for row in rows:
            hit, label = row.inputs.get("hit_id", "").strip(), row.inputs.get(self.unit_input, "").strip()
            unit = by_pk.get(hit) or by_label.get(label) or by_label.get(hit)
            if unit is None:
                named = ("Input.hit_id", hit) if hit else (f"Input.{self.unit_input}", label)
                problems.append(
                    (row.line, named[0], f"no {self.unit_noun} {named[1]!r} in {self.target_field} {found.name}")
                )
                continue
            repeated = answered_before(seen, row, unit.pk, f"{self.unit_noun} {self.unit_name(unit)}")
            if repeated:
                problems.append(repeated)
                continue
            yield row, unit

    def plan(self, found, rows):
        """(problems as (line, field, message), [(row, unit, cleaned answer, incomplete)])."""
        raise NotImplementedError

    def check_results(self, target, rows):
        return self.plan(self._target(target), rows)[0]

    def imported_entry(self, found, cleaned):
        """The protocol's fields of one imported submission (its answer, ...)."""
        raise NotImplementedError

    def write_imported(self, found, entries):
        raise NotImplementedError

    def import_results(self, target, rows, worker_keys):
        found = self._target(target)
        _, plans = self.plan(found, rows)
        uuids = {
            row.assignment_id: uuid.uuid5(self.import_namespace, f"{found.pk}:{row.assignment_id}") for row, *_ in plans
        }
        stored = set(
            self.submission_model.objects.filter(client_uuid__in=list(uuids.values())).values_list(
                "client_uuid", flat=True
            )
        )
        out, entries, added = {}, [], {}
        for row, unit, cleaned, incomplete in plans:
            annotator = self._member(found, worker_keys[row.worker_id])
            assignment, created = self.assignment_model.objects.get_or_create(
                **{self.target_field: found, self.unit_field: unit, "annotator": annotator},
                defaults=self.new_assignment_fields(),
            )
            if created:
                self.unit_model.objects.filter(pk=unit.pk).update(assigned=F("assigned") + 1)
                added.setdefault(unit.pk, []).append(row.line)
            out[row.assignment_id] = str(assignment.pk)
            if uuids[row.assignment_id] not in stored:
                entries.append(
                    dict(
                        assignment=assignment,
                        client_uuid=uuids[row.assignment_id],
                        time_spent=float(row.work_seconds or 0),
                        video_played=None,
                        confirmed_incomplete=incomplete,
                        **self.imported_entry(found, cleaned),
                    )
                )
        if entries:
            self.write_imported(found, entries)
        return self.crowd.Imported(out, self._over_capacity(found, added))

    def _over_capacity(self, found, added):
        """``(line, "WorkerId", message)`` of each unit the import took above the target's capacity (its
        ``capacity_field``), on the row of the first worker beyond it (``capacity.above``: the answers are
        imported all the same, a full unit breaks nothing; one query). ``added`` maps each unit given new
        assignments to the lines of their rows. The field is ``WorkerId``: the unit is named in the message,
        whichever column named it in the file (``Input.hit_id`` or the unit's input)."""
        if not added:
            return []
        return [
            (line, "WorkerId", message)
            for line, message in capacity.above(
                self.unit_model.objects.filter(**{self.target_field: found}),
                added,
                getattr(found, self.capacity_field),
                label=self.unit_label.removeprefix(f"{self.unit_field}__"),
                noun=self.unit_noun,
                scope=(self.target_field, found.name),
                what="answers",
            )
        ]
