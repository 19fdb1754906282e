"""Annotator pages: the projects list, instructions, taking the next video and the annotation page. Thin:
every decision is a service call; templates only display (and escape every caption)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site.annotators.services import annotator_for_user
from annotation_site.annotators.views import invitation_messages
from annotation_site.crowd.hooks import frameable, link_problem
from annotation_site.workflow.answers import draft_version
from annotation_site.workflow.pages import ProtocolPages

from . import assignment as assigning
from . import judgments, projects
from .assignment import ProjectClosed, paragraph_letter
from .crowd_links import assignment_from_token
from .models import Assignment, Project


def _mine(project, annotator):
    return (
        Assignment.objects.filter(project=project, annotator=annotator)
        .select_related("project_video__video")
        .order_by("created_at", "id")
    )


PAGES = ProtocolPages(
    noun="project",
    unit_noun="video",
    url_prefix="factuality",
    templates="factuality",
    queryset=lambda: Project.objects.select_related("dataset"),
    detail_url="factuality-project",
    annotator_for_user=annotator_for_user,
    is_member=projects.is_member,
    units_for=projects.projects_for,
    assignments_of=_mine,
    assignable_count=assigning.assignable_count,
    next_assignment=assigning.next_assignment,
    closed_error=ProjectClosed,
    not_member_message="You are not invited to annotate in this project.",
    invite=projects.invite_to_project,
    announce_invitations=invitation_messages,
    set_status=projects.set_status,
    home_label="Annotation",
)

home = login_required(PAGES.home)
work = login_required(PAGES.work)
start = login_required(require_POST(PAGES.start))


@login_required
def instructions(request, name):
    project, _ = PAGES.unit_for(request, name)
    return render(request, "factuality/instructions.html", {"project": project, "scale": projects.scale_of(project)})


@frameable
def instructions_token(request, token):
    """The instructions of a crowd annotator's project, by their assignment's signed link (no account): the
    annotation page's "Instructions" opens this."""
    found = assignment_from_token(token)
    if found is None:
        return link_problem(request)
    project = found.project
    return render(
        request,
        "factuality/instructions.html",
        {"project": project, "scale": projects.scale_of(project), "participant": True},
    )


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
    name = found.project.name
    work = reverse("factuality-work", args=[name])
    return _annotate(
        request,
        found,
        draft_url=reverse("api-factuality-draft", args=[found.pk]),
        submit_url=reverse("api-factuality-submit", args=[found.pk]),
        urls={
            "breadcrumbs": [("Annotation", reverse("factuality-home")), (name, work)],
            "instructions": reverse("factuality-instructions", args=[name]),
            "leave": work,
            "start": reverse("factuality-start", args=[name]),  # the next video: a POST to Start
        },
    )


@frameable
def annotate_token(request, token):
    """The annotation page of a crowd annotator (no account): reached by the assignment's signed link; after
    submitting, the page goes to the crowd's end page (code, redirect to the platform, or MTurk's form). Every
    address on it is one the link's holder may open: the instructions by the same token, leaving and the next
    step at the crowd's page of this participant (their end page, which sends unfinished work back to their
    study page), no breadcrumbs to the annotators' pages."""
    from annotation_site.crowd.hooks import finish_path

    found = assignment_from_token(token)
    if found is None:
        return link_problem(request)
    crowd_page = finish_path("factuality", found.pk) or request.path
    return _annotate(
        request,
        found,
        draft_url=reverse("api-factuality-token-draft", args=[token]),
        submit_url=reverse("api-factuality-token-submit", args=[token]),
        urls={
            "breadcrumbs": [],
            "instructions": reverse("factuality-annotate-token-instructions", args=[token]),
            "leave": crowd_page,
            "next": crowd_page,  # a GET: the end page (or this page again for work that came no crowd way)
        },
        participant=True,
    )


def _annotate(request, found, *, draft_url, submit_url, urls, participant=False):
    """The annotation page. ``urls``: ``breadcrumbs`` [(label, address)], ``instructions``, ``leave`` ("Save
    draft and leave") and where the page goes after a submit: ``start`` (a POST handing out the next video) or
    ``next`` (a GET). ``participant``: a crowd annotator's page (no account): no site navigation."""
    project = found.project
    presented = assigning.presented_captions(found)
    number, total, more = assigning.position_of(found)
    scale = projects.scale_of(project)
    paragraphs = [
        {
            "letter": paragraph_letter(i),
            "index": i,
            "prompt": caption.prompt,
            "sentences": [{"index": j, "tokens": s.tokens} for j, s in enumerate(sentences)],
        }
        for i, (caption, sentences) in enumerate(presented)
    ]
    config = {
        "kind": project.kind,
        "rationale": project.rationale,
        "scale": [[value, label] for value, label in scale],
        "paragraphs": [
            {"letter": p["letter"], "sentences": [len(s["tokens"]) for s in p["sentences"]]} for p in paragraphs
        ],
        "draftUrl": draft_url,
        "submitUrl": submit_url,
        "workUrl": urls["leave"],
        "open": project.is_open,
        "state": page_state(found, presented),
        "submitted": found.status == Assignment.Status.SUBMITTED,
        # drafts name the submission this page started from, so a late autosave cannot shadow a newer answer
        "basedOn": judgments.current_submission_uuid(found),
        # the version of the draft rendered: the page restores the answer it kept in the tab only over this one
        "draftVersion": draft_version(found.draft_saved_at),
    }
    return render(
        request,
        "factuality/annotate.html",
        {
            "assignment": found,
            "project": project,
            "video": found.project_video.video,
            "paragraphs": paragraphs,
            "scale": scale,
            "number": number,
            "total": total,
            "more": more,
            "config": config,
            "urls": urls,
            "participant": participant,
        },
    )
