"""Annotator pages: the task list, instructions, the work page, taking the next item and the annotation page;
the same pages for crowd participants through a signed link (``/tasks/p/TOKEN/...``, no account). Thin: every
decision is a service call; templates only display (and escape every text)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site.annotators.services import annotator_for_user
from annotation_site.annotators.views import invitation_messages
from annotation_site.crowd.hooks import frameable, link_problem
from annotation_site.workflow.answers import draft_version
from annotation_site.workflow.pages import ProtocolPages

from . import answers, participants, presentation, services
from . import assignment as assigning
from .assignment import TaskClosed
from .models import Assignment, Task


def _mine(task, annotator):
    return Assignment.objects.filter(task=task, annotator=annotator).order_by("created_at", "id")


PAGES = ProtocolPages(
    noun="task",
    unit_noun="item",
    url_prefix="tasks",
    templates="judgment_tasks",
    queryset=lambda: Task.objects.select_related("dataset"),
    detail_url="tasks-detail",
    annotator_for_user=annotator_for_user,
    is_member=services.is_member,
    units_for=services.tasks_for,
    assignments_of=_mine,
    assignable_count=assigning.assignable_count,
    next_assignment=assigning.next_assignment,
    closed_error=TaskClosed,
    not_member_message="You are not a member of this task.",
    invite=services.invite_to_task,
    announce_invitations=invitation_messages,
    set_status=services.set_status,
    home_label="Tasks",
    title_attr="display_title",
)

home = login_required(PAGES.home)
work = login_required(PAGES.work)
start = login_required(require_POST(PAGES.start))


@login_required
def instructions(request, name):
    task, _ = PAGES.unit_for(request, name)
    return render(request, "judgment_tasks/instructions.html", {"task": task})


def _annotation_page(request, found, *, participant=None):
    task, item = found.task, found.item
    shown = presentation.present(task.definition, item)
    limit = participant.limit if participant else None
    number, total, more = assigning.position_of(found, limit=limit)
    token = participant.token if participant else None
    config = {
        "questions": presentation.script_config(task.definition, shown),
        "draftUrl": reverse("api-tasks-draft", args=[found.pk]),
        "submitUrl": reverse("api-tasks-submit", args=[found.pk]),
        "participantToken": token,
        "open": task.is_open,
        "state": answers.page_state(found),
        "submitted": found.status == Assignment.Status.SUBMITTED,
        # the submission the page starts from: a copy of an answer the tab kept from before it is dropped
        "basedOn": answers.current_submission_uuid(found) if found.status == Assignment.Status.SUBMITTED else None,
        # the version of the draft rendered: the page restores the answer it kept in the tab only over this one
        "draftVersion": draft_version(found.draft_saved_at),
    }
    if participant:
        urls = {
            "next": reverse("tasks-participant-next", args=[token]),
            "work": reverse("tasks-participant", args=[token]),
            "instructions": reverse("tasks-participant", args=[token]) + "#instructions",
        }
    else:
        urls = {
            "next": reverse("tasks-start", args=[task.name]),
            "work": reverse("tasks-work", args=[task.name]),
            "instructions": reverse("tasks-instructions", args=[task.name]),
        }
    return render(
        request,
        "judgment_tasks/annotate.html",
        {
            "assignment": found,
            "task": task,
            "item": item,
            "video": item.video,
            "shown": shown,
            "number": number,
            "total": total,
            "more": more,
            "config": config,
            "urls": urls,
            "participant": participant,
        },
    )


@login_required
def annotate(request, pk):
    found = assigning.assignment_for(annotator_for_user(request.user, create=False), pk)
    if found is None:
        raise Http404("no such assignment")
    return _annotation_page(request, found)


# --- crowd participants (no account: the signed token names the task and the participant) ----------------


def _participant(request, token):
    try:
        return participants.read_token(token)
    except participants.TokenInvalid as exc:
        raise _Refused(link_problem(request, str(exc), expired=exc.expired, status=403)) from None


class _Refused(Exception):
    def __init__(self, response):
        self.response = response


def _refusals(view):
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except _Refused as refused:
            return refused.response

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper


@frameable
@_refusals
def participant_home(request, token):
    """The participant's landing page: instructions, their progress, and start / continue (or the end)."""
    participant = _participant(request, token)
    task, annotator = participant.task, participant.annotator
    counts = participants.progress(task, annotator, limit=participant.limit)
    done = participants.nothing_left(counts) and counts["taken"] > 0  # (is_complete would read them again)
    return render(
        request,
        "judgment_tasks/participant.html",
        {
            "participant": participant,
            "task": task,
            "counts": counts,
            "done": done,
            "full": counts["taken"] == 0 and counts["available"] == 0,
        },
    )


@frameable
@_refusals
@require_POST
def participant_next(request, token):
    participant = _participant(request, token)
    return redirect(participants.next_path(participant))


@frameable
@_refusals
def participant_item(request, token, pk):
    participant = _participant(request, token)
    found = assigning.assignment_for(participant.annotator, pk)
    if found is None or found.task_id != participant.task.pk:
        raise Http404("no such item")
    return _annotation_page(request, found, participant=participant)


@frameable
@_refusals
def participant_done(request, token):
    """Nothing left: straight on to the platform's completion address when the link carries one."""
    participant = _participant(request, token)
    complete = participants.is_complete(participant.task, participant.annotator, limit=participant.limit)
    if complete and participant.finish_url:
        return redirect(participant.finish_url)
    return redirect("tasks-participant", token=token)
