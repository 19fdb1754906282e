"""Factuality and rating projects plugged into crowd work (annotation_site.crowd), registered in
``FactualityConfig.ready``.

- a target is a Project; its units are its videos (capacity ``annotators_per_video``);
- a participant is an Annotator of kind ``crowd`` (provider ``crowd``, external id = the participant's
  ``worker_key``), made a member of the project when they take their first slot;
- the work page is the annotation page reached by a signed assignment link (no account);
- projects have no hidden quality control: every submitted assignment's QC status is ``insufficient_data``
  (policies: ``approve-all`` or ``review``; ``approve-passing`` sends them to review);
- MTurk results (rating and factuality projects): one row per assignment of one video, the video named by
  ``Input.hit_id`` (our unit key, as the batch export writes it) or ``Input.video_id``; per system of the
  project ``Answer.score_<system>`` (the paragraph's score), ``Answer.rationale_<system>`` (rating projects) and
  ``Answer.sentences_<system>`` (factuality projects: a JSON list of ``{"error": 0|1, "spans": [[start, end]]}``
  per sentence); the same keys may come in ``Answer.taskAnswers``. Checked like a web submit (hard problems
  refuse the file; a missing score or unmarked flagged sentence is stored as incomplete); stored once under a
  UUID derived from the AssignmentId.
"""

import secrets
import uuid

from django.urls import reverse

from annotation_site import safe_json
from annotation_site.annotators.models import Annotator
from annotation_site.crowd import adapters
from annotation_site.crowd.adapters import Description, Unit, Work
from annotation_site.strict_numbers import ascii_int
from annotation_site.workflow.crowd_units import UnitsAdapter

from . import assignment as assigning
from .judgments import check_answer, write_submissions
from .models import Assignment, Project, ProjectMember, ProjectVideo, Submission

NO_QC = "factuality projects have no hidden quality control: approve all, or review"
IMPORT_NAMESPACE = uuid.UUID("0c9b5e3a-7d21-4f6b-8a94-3e5f2d1c6b87")  # submission ids of imported MTurk answers


class FactualityAdapter(UnitsAdapter, adapters.ProtocolAdapter):
    protocol = "factuality"
    crowd = adapters
    annotator_model, target_model, unit_model = Annotator, Project, ProjectVideo
    assignment_model, member_model, submission_model = Assignment, ProjectMember, Submission
    target_field, unit_field, capacity_field = "project", "project_video", "annotators_per_video"
    unit_label, unit_noun, unit_input = "project_video__video__external_id", "video", "video_id"
    no_qc, import_namespace, work_related = NO_QC, IMPORT_NAMESPACE, ("project_video__video",)

    def new_assignment_fields(self):
        return {"shuffle_seed": secrets.randbits(62)}

    def release_assignment(self, found):
        return assigning.release(found)

    def unit_name(self, unit):
        return unit.video.external_id

    def describe(self, target):
        project = self._target(target)
        videos = ProjectVideo.objects.filter(project=project).select_related("video").order_by("position", "id")
        n_systems = project.systems.count()
        if project.is_rating:
            title = "Rate how faithfully captions describe a short video"
            scale = {"kind": "likert", "min": project.scale_min, "max": project.scale_max}
        else:
            title = "Find the factual errors in video captions"
            scale = {"kind": "likert", "min": 1, "max": 5}
        return Description(
            title=title,
            description=project.description or title,
            units=[Unit(str(v.pk), v.video.external_id, project.annotators_per_video) for v in videos],
            estimated_minutes=max(2, 2 * n_systems),
            scale=scale,
            statement=project.question or "How factual is this caption?",
        )

    def _work(self, assignment, *, last=None):
        from .crowd_links import assignment_token

        return Work(
            key=str(assignment.pk),
            unit_key=str(assignment.project_video_id),
            unit_label=assignment.project_video.video.external_id,
            url=reverse("factuality-annotate-token", args=[assignment_token(assignment)]),
            completed=assignment.status == Assignment.Status.SUBMITTED,
            last_activity=last or assignment.draft_saved_at or assignment.created_at,
        )

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        project = self._target(target)
        if project.status != Project.Status.OPEN:  # closed while its study admits: nothing to hand out (it was a
            return None  # ProjectClosed escaping Start, a 500 for the participant), as a closed task does
        annotator = self._member(project, worker_key)
        if unit_key is not None:
            found = self._claim(project, annotator, int(unit_key))
        else:
            found = assigning.next_assignment(project, annotator)
        if found is None:
            return None
        return self._work(Assignment.objects.select_related("project_video__video").get(pk=found.pk))

    def preview(self, target, unit_key):
        from annotation_site.corpus.models import Caption

        project = self._target(target)
        pv = (
            ProjectVideo.objects.filter(project=project, pk=ascii_int(unit_key)).select_related("video").first()
            if ascii_int(unit_key) is not None
            else ProjectVideo.objects.filter(project=project).select_related("video").first()
        )
        if pv is None:
            return {"statement": "", "items": []}
        captions = Caption.objects.filter(video=pv.video, system__in=project.systems.all())[:1]
        return {
            "statement": project.question or "",
            "items": [
                {
                    "text": " ".join(s.text for s in c.sentences.order_by("index")),
                    "video_url": pv.video.playback_url or "",
                }
                for c in captions
            ],
        }

    # --- MTurk results -------------------------------------------------------------------------------------

    def plan(self, project, rows):
        """(problems as (line, field, message), [(row, project video, cleaned paragraphs, incomplete)])."""
        videos = list(ProjectVideo.objects.filter(project=project).select_related("video"))
        by_pk = {str(v.pk): v for v in videos}
        by_external = {v.video.external_id: v for v in videos}
        problems, plans = [], []
        for row, pv in self.result_units(project, rows, by_pk, by_external, problems):
            presented = assigning.presented_captions(Assignment(project=project, project_video=pv, shuffle_seed=0))
            paragraphs, row_problems = [], []
            for caption, _ in presented:
                system = caption.system.name
                paragraph = {"score": _number(row.answers.get(f"score_{system}", ""))}
                if project.is_rating:
                    paragraph["rationale"] = row.answers.get(f"rationale_{system}", "")
                else:
                    raw = row.answers.get(f"sentences_{system}", "")
                    try:
                        paragraph["sentences"] = safe_json.loads(raw) if isinstance(raw, str) else raw
                    except ValueError as exc:  # safe_json: also too deep, huge numbers, NUL, lone surrogates
                        row_problems.append((row.line, f"Answer.sentences_{system}", f"not a JSON list: {exc.msg}"))
                        continue
                paragraphs.append(paragraph)
                if isinstance(paragraph["score"], str):
                    row_problems.append(
                        (row.line, f"Answer.score_{system}", f"{paragraph['score']!r} is not a whole number")
                    )
            if row_problems:
                problems.extend(row_problems)
                continue
            cleaned, hard, soft = check_answer(project, presented, {"paragraphs": paragraphs})
            for problem in hard:
                system = presented[problem.paragraph][0].system.name if problem.paragraph is not None else ""
                field = f"Answer.{_COLUMN_OF_PROBLEM.get(problem.code, 'sentences')}_{system}" if system else "Answer"
                problems.append((row.line, field, problem.message))
            if not hard:
                plans.append((row, pv, cleaned, bool(soft)))
        return problems, plans

    def imported_entry(self, project, paragraphs):
        return {"paragraphs": paragraphs, "source": Submission.Source.IMPORT}

    def write_imported(self, project, entries):
        write_submissions(entries, rating=project.is_rating)


# The results column a problem of ``check_answer`` is about, by its code (the rest are about the sentences).
_COLUMN_OF_PROBLEM = {"score": "score", "rationale": "rationale", "missing_rationale": "rationale"}


def _number(raw):
    """A score cell: an int, None when empty, or the text itself (reported as not a whole number)."""
    text = str(raw).strip()
    if text == "":
        return None
    number = ascii_int(text)  # ASCII digits only ("١٢", "+3" and "1e2" are reported)
    return text if number is None else number
