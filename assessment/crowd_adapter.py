"""Direct Assessment plugged into crowd work (annotation_site.crowd): the crowd app asks through this adapter,
registered in ``AssessmentConfig.ready``, and never imports assessment.

- a target is a Campaign; its units are HITs (capacity ``workers_per_hit``);
- a participant is a Worker whose external id is the participant's ``worker_key`` (``prolific:5f3c...``);
- taking a slot is ``services.assign`` (or ``services.assign_on_hit`` when MTurk fixes the HIT); releasing marks
  the assignment released: it keeps its judgments (quality control judges them) but no longer holds a place;
- QC outcomes come from ``services.qc_statuses`` and the stored QCResult (test, p-value, pairs, threshold);
- MTurk results files carry scores as ``Answer.item_<position>`` (1-based position in the HIT; per-field
  columns or ``Answer.taskAnswers``) with the HIT in ``Input.hit_id`` (our HIT id or number), or only
  ``Answer.completion_code`` for HITs done on our own page.
"""

import uuid

from django.db import transaction
from django.db.models import CharField, Count, F, Max, Q, Value
from django.db.models.functions import Cast, Coalesce, NullIf
from django.utils import timezone

from annotation_site.crowd import adapters
from annotation_site.crowd.adapters import AssignmentRecord, Description, QCOutcome, Target, Unit, Work
from annotation_site.strict_numbers import ascii_int
from annotation_site.workflow import capacity
from annotation_site.workflow.crowd_units import answered_before

from . import campaigns, services, workers
from .models import HIT, Assignment, Campaign, Item, Judgment, QCResult

IMPORT_NAMESPACE = uuid.UUID("4f1e7e7e-2b1c-4f55-9d6e-6d4a5c3b2a10")  # judgment ids of imported MTurk answers


def _hit_label(hit):
    return hit.external_id or str(hit.number)


class DirectAssessmentAdapter(adapters.ProtocolAdapter):
    protocol = "da"

    def _campaign(self, target):
        return Campaign.objects.get(pk=target.object_id)

    def target(self, name):
        campaign = Campaign.objects.filter(name=name).only("pk", "name").first()
        return Target("da", campaign.pk, campaign.name) if campaign else None

    def target_by_id(self, object_id):
        campaign = Campaign.objects.filter(pk=object_id).only("pk", "name").first()
        return Target("da", campaign.pk, campaign.name) if campaign else None

    def describe(self, target):
        campaign = self._campaign(target)
        hits = list(HIT.objects.filter(campaign=campaign).order_by("number"))
        size = max((h.n_items for h in hits), default=campaign.hit_size)
        return Description(
            title=f"Rate how well captions describe short videos ({size} items)",
            description=(
                "Watch short videos and rate, on a 0-100 scale, how well a sentence describes what took "
                "place in each. Some items are checks of attention."
            ),
            units=[Unit(str(h.pk), f"HIT {_hit_label(h)}", campaign.workers_per_hit) for h in hits],
            estimated_minutes=max(1, round(size * 20 / 60)),
            scale={"kind": "slider", "min": 0, "max": 100},
            statement=campaign.statement,
        )

    def capacity(self, target):
        found = (
            Campaign.objects.filter(pk=target.object_id)
            .annotate(n=Count("hits"))
            .values_list("workers_per_hit", "n")
            .first()
        )
        return found[0] * found[1] if found else 0

    def units_for_qc(self, target):
        """HITs one participant must complete for quality control to judge them (the campaign page's "a worker
        needs k HITs"): ``campaigns.crowd_hits_per_participant``."""
        campaign = Campaign.objects.filter(pk=target.object_id).first()
        return 1 if campaign is None else campaigns.crowd_hits_per_participant(campaign)

    def _work(self, assignment, last_activity=None):
        return Work(
            key=str(assignment.pk),
            unit_key=str(assignment.hit_id),
            unit_label=f"HIT {_hit_label(assignment.hit)}",
            url=services.assignment_path(assignment),
            completed=assignment.completed_at is not None,
            last_activity=last_activity,
        )

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        if unit_key is None:  # the crowd's arrival path: one transaction, the worker created in it when new
            assignment = services.assign_by_external_id(target.object_id, worker_key, source="crowd")
            return None if assignment is None else self._work(assignment)
        worker = workers.participant_worker(worker_key)
        hit = HIT.objects.filter(campaign_id=target.object_id, pk=int(unit_key)).first()
        assignment = services.assign_on_hit(hit, worker) if hit is not None else None
        return None if assignment is None else self._work(assignment)

    def work(self, target, work_key):
        assignment = (
            Assignment.objects.select_related("hit")
            .filter(pk=int(work_key), hit__campaign_id=target.object_id)
            .annotate(last=Max("judgments__finished_at"))
            .first()
        )
        if assignment is None or assignment.released_at is not None:
            return None
        return self._work(assignment, assignment.last or assignment.created_at)

    def page(self, request, target, work, *, finish_url=""):
        """The rating page as Start's answer: one query (the current item with its HIT and campaign)."""
        from .views import rating_page

        item = services.page_item(int(work.key), int(work.unit_key))
        if item is None:  # every item judged: Start redirects to the page, which shows it done
            return None
        assignment = Assignment(pk=int(work.key), hit=item.hit)
        return rating_page(
            request,
            assignment,
            services.assignment_token(assignment),
            finish_url=finish_url,
            item=item,
            address=work.url,
        )

    def release(self, target, work_key):
        return services.release_assignment(int(work_key), reason="crowd")

    def assignments(self, target):
        campaign = self._campaign(target)
        rows = list(
            Assignment.objects.filter(hit__campaign=campaign, released_at__isnull=True).values_list(
                "pk", "worker_id", "worker__external_id", "hit__external_id", "hit__number", "completed_at"
            )
        )
        statuses = services.qc_statuses(campaign)
        stored = {r.worker_id: r for r in QCResult.objects.filter(campaign=campaign)}
        out = []
        for pk, worker_id, external, hit_ext, hit_no, completed_at in rows:
            status = statuses.get(worker_id)
            result = stored.get(worker_id)
            if completed_at is None:
                status = "in_progress"
            qc = QCOutcome(
                status=str(status or "in_progress"),
                test=result.test if result else campaign.qc_test,
                p_value=result.p_value if result else None,
                n_pairs=result.n_pairs if result else None,
                threshold=result.threshold if result else campaign.qc_threshold,
                detail=(
                    f"{result.n_pairs} pairs, {result.min_pairs} needed"
                    if result and status == "insufficient_data"
                    else ""
                ),
            )
            out.append(AssignmentRecord(str(pk), external, hit_ext or str(hit_no), completed_at is not None, qc))
        return out

    def preview(self, target, unit_key):
        hit = (
            HIT.objects.filter(campaign_id=target.object_id, pk=ascii_int(unit_key)).first()
            if ascii_int(unit_key) is not None
            else None
        )
        if hit is None:
            hit = HIT.objects.filter(campaign_id=target.object_id).order_by("number").first()
        item = (
            Item.objects.filter(hit=hit).select_related("caption__video").order_by("position").first() if hit else None
        )
        campaign = self._campaign(target)
        items = [] if item is None else [{"text": item.text, "video_url": item.caption.video.playback_url or ""}]
        return {"statement": campaign.statement, "items": items}

    # --- MTurk results ------------------------------------------------------------------------------------------

    def answer_spec(self, target):
        def validate(answers):
            problems = []
            for key, value in answers.items():
                if key.startswith("item_") and value.strip():  # (an empty cell: checked against its HIT's size)
                    try:
                        services.clean_score(value)
                    except services.SubmissionError as exc:
                        problems.append((key, str(exc)))
            if not any(k.startswith("item_") for k in answers) and not answers.get("completion_code"):
                problems.append(("item_1", "no scores (Answer.item_<position>) and no completion code"))
            return problems

        return [], validate

    def _hits(self, campaign):
        hits = {}
        for hit in HIT.objects.filter(campaign=campaign).order_by("number"):
            hits.setdefault(str(hit.pk), hit)
            hits.setdefault(str(hit.number), hit)
            if hit.external_id:
                hits[hit.external_id] = hit
        return hits

    def _plan(self, campaign, rows):
        """(problems as (line, field, message), [(row, hit, {item pk: score})])."""
        hits = self._hits(campaign)
        items = {
            (h, p + 1): pk
            for h, p, pk in Item.objects.filter(hit__campaign=campaign).values_list("hit_id", "position", "pk")
        }
        problems, plans, seen = [], [], {}
        for row in rows:
            key = row.inputs.get("hit_id", "")
            hit = hits.get(key)
            if hit is None:
                problems.append((row.line, "Input.hit_id", f"no HIT {key!r} in campaign {campaign.name}"))
                continue
            repeated = answered_before(seen, row, hit.pk, f"HIT {key}")
            if repeated:
                problems.append(repeated)
                continue
            scores = {}
            for name, value in row.answers.items():
                if not name.startswith("item_"):
                    continue
                position = name[len("item_") :]
                if ascii_int(position) is None or (hit.pk, ascii_int(position)) not in items:
                    if not value.strip() and ascii_int(position) is not None:
                        continue  # a column of a larger HIT of the batch: MTurk leaves it empty for this one
                    problems.append((row.line, f"Answer.{name}", f"HIT {key} has no item {position}"))
                    continue
                try:
                    scores[items[(hit.pk, int(position))]] = services.clean_score(value)
                except services.SubmissionError as exc:  # (an empty cell of an item the HIT has: not answered)
                    problems.append((row.line, f"Answer.{name}", str(exc)))
            plans.append((row, hit, scores))
        return problems, plans

    def check_results(self, target, rows):
        return self._plan(self._campaign(target), rows)[0]

    def import_results(self, target, rows, worker_keys):
        campaign = self._campaign(target)
        _, plans = self._plan(campaign, rows)
        out, now, added = {}, timezone.now(), {}
        for row, hit, scores in plans:
            worker = workers.participant_worker(worker_keys[row.worker_id], source="mturk")
            assignment, created = Assignment.objects.get_or_create(worker=worker, hit=hit)
            if created:
                added.setdefault(hit.pk, []).append(row.line)
            uuids = {item: uuid.uuid5(IMPORT_NAMESPACE, f"{row.assignment_id}:{item}") for item in scores}
            known = set(
                Judgment.objects.filter(client_uuid__in=list(uuids.values())).values_list("client_uuid", flat=True)
            )
            Judgment.objects.bulk_create(
                [
                    Judgment(assignment=assignment, item_id=item, score=score, client_uuid=uuids[item], finished_at=now)
                    for item, score in scores.items()
                    if uuids[item] not in known
                ],
                ignore_conflicts=True,
            )
            if (
                scores
                and assignment.completed_at is None
                and not Item.objects.filter(hit=hit).exclude(judgments__assignment=assignment).exists()
            ):
                Assignment.objects.filter(pk=assignment.pk).update(completed_at=now)
            out[row.assignment_id] = str(assignment.pk)
        transaction.on_commit(lambda: services.store_qc(campaign))
        return adapters.Imported(out, self._over_capacity(campaign, added))

    def _over_capacity(self, campaign, added):
        """``(line, "WorkerId", message)`` of each HIT the import took above the campaign's workers per HIT (its
        live assignments, as the hand-out counts them), on the row of the first worker beyond it; the judgments
        are imported all the same, and the HIT is handed out to nobody else (``workflow.capacity.above``, as the
        other protocols' imports; one query). ``added`` maps each HIT given new assignments to their rows."""
        if not added:
            return []
        hits = HIT.objects.filter(campaign=campaign).annotate(
            position=F("number"),
            assigned=Count("assignments", filter=Q(assignments__released_at__isnull=True)),
            label=Coalesce(NullIf("external_id", Value("")), Cast("number", CharField())),
        )
        return [
            (line, "WorkerId", message)
            for line, message in capacity.above(
                hits,
                added,
                campaign.workers_per_hit,
                label="label",
                noun="HIT",
                scope=("campaign", campaign.name),
                what="judgments",
                people="workers",
            )
        ]
