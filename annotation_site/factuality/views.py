"""Annotator pages: the projects list, instructions, taking the next video and the annotation page. Thin:
every decision is a service call; templates only display (and escape every caption)."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site.annotators.services import annotator_for_user
from annotation_site.crowd.hooks import frameable

from . import assignment as assigning
from . import judgments, projects
from .assignment import ProjectClosed, paragraph_letter
from .models import Assignment, Project


def _project_for(request, name):
    """A project the user may open: staff see every project, annotators the ones they are invited to."""
    project = get_object_or_404(Project.objects.select_related("dataset"), name=name)
    annotator = annotator_for_user(request.user, create=request.user.is_staff)
    if not request.user.is_staff and not projects.is_member(project, annotator):
        raise Http404("no such project")
    return project, annotator


@login_required
def home(request):
    annotator = annotator_for_user(request.user, create=request.user.is_staff)
    context = {"mine": projects.projects_for(annotator)}
    if request.user.is_staff:
        context["all_projects"] = Project.objects.select_related("dataset").order_by("-created_at")
    return render(request, "factuality/home.html", context)


@login_required
def instructions(request, name):
    project, _ = _project_for(request, name)
    return render(request, "factuality/instructions.html", {
        "project": project, "scale": projects.scale_of(project)})


@login_required
def work(request, name):
    """An annotator's view of a project: their videos (to revise before the project closes) and a start button."""
    project, annotator = _project_for(request, name)
    if request.user.is_staff and not projects.is_member(project, annotator):
        return redirect("factuality-project", name=name)
    mine = list(Assignment.objects.filter(project=project, annotator=annotator)
                .select_related("project_video__video").order_by("created_at", "id"))
    return render(request, "factuality/work.html", {
        "project": project, "assignments": mine,
        "available": assigning.assignable_count(project, annotator),
        "open": next((a for a in mine if a.status == Assignment.Status.OPEN), None),
    })


@login_required
@require_POST
def start(request, name):
    """Hand the annotator their next video (or the one in progress) and open it."""
    project, annotator = _project_for(request, name)
    try:
        found = assigning.next_assignment(project, annotator)
    except ProjectClosed:
        messages.error(request, "This project is closed.")
        return redirect("factuality-work", name=name)
    except PermissionDenied:
        messages.error(request, "You are not invited to annotate in this project.")
        return redirect("factuality-project", name=name)
    if found is None:
        messages.success(request, "There is no video left for you in this project. Thank you!")
        return redirect("factuality-work", name=name)
    return redirect("factuality-annotate", pk=found.pk)


def page_state(assignment, presented):
    """What the page starts from: the draft, else the current submitted answer, else nothing."""
    if assignment.draft:
        return dict(assignment.draft, source="draft")
    current = judgments.current_answer(assignment, presented)
    if current is not None:
        return dict(current, source="submitted")
    return {"answer": None, "time_spent": 0, "video_played": False, "watched_seconds": 0, "source": "new"}


@login_required
def annotate(request, pk):
    annotator = annotator_for_user(request.user, create=False)
    found = assigning.assignment_for(annotator, pk)
    if found is None:
        raise Http404("no such assignment")
    return _annotate(request, found, draft_url=reverse("api-factuality-draft", args=[found.pk]),
                     submit_url=reverse("api-factuality-submit", args=[found.pk]))


@frameable
def annotate_token(request, token):
    """The annotation page of a crowd annotator (no account): reached by the assignment's signed link; after
    submitting, the page goes to the crowd's end page (code, redirect to the platform, or MTurk's form)."""
    from annotation_site.crowd.hooks import finish_path

    from .crowd_links import assignment_from_token

    found = assignment_from_token(token)
    if found is None:
        raise Http404("unknown or invalid assignment link")
    finish = finish_path("factuality", found.pk)
    return _annotate(request, found, draft_url=reverse("api-factuality-token-draft", args=[token]),
                     submit_url=reverse("api-factuality-token-submit", args=[token]), next_url=finish,
                     work_url=finish or request.path)


def _annotate(request, found, *, draft_url, submit_url, next_url=None, work_url=None):
    project = found.project
    presented = assigning.presented_captions(found)
    number, total = assigning.position_of(found)
    scale = projects.scale_of(project)
    paragraphs = [{"letter": paragraph_letter(i), "index": i, "prompt": caption.prompt,
                   "sentences": [{"index": j, "tokens": s.tokens} for j, s in enumerate(sentences)]}
                  for i, (caption, sentences) in enumerate(presented)]
    config = {
        "kind": project.kind,
        "rationale": project.rationale,
        "scale": [[value, label] for value, label in scale],
        "paragraphs": [{"letter": p["letter"], "sentences": [len(s["tokens"]) for s in p["sentences"]]}
                       for p in paragraphs],
        "draftUrl": draft_url,
        "submitUrl": submit_url,
        "startUrl": reverse("factuality-start", args=[project.name]),
        "workUrl": work_url or reverse("factuality-work", args=[project.name]),
        "open": project.is_open,
        "state": page_state(found, presented),
        "submitted": found.status == Assignment.Status.SUBMITTED,
        # drafts name the submission this page started from, so a late autosave cannot shadow a newer answer
        "basedOn": judgments.current_submission_uuid(found),
    }
    return render(request, "factuality/annotate.html", {
        "assignment": found, "project": project, "video": found.project_video.video, "paragraphs": paragraphs,
        "scale": scale, "number": number, "total": total, "config": config, "next_url": next_url,
    })
