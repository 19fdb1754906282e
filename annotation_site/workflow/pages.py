"""The pages every annotation protocol has, written once: an annotator's list of their work, the work page of one
unit of work (a factuality project, a judgment task) with its start button, taking the next assignment, and the
researcher's mechanics (the detail page that sends non-staff to the work page, inviting annotators, opening and
closing, importing an uploaded file).

A protocol describes itself once in a ``ProtocolPages`` (its model's queryset, its URL names, its words and its
services) and mounts the views it gets from it; its own pages (the annotation page, settings, reports) stay in
the app. This module imports no app: what it needs of the protocol and of the annotators comes in the
``ProtocolPages`` (workflow sits beside ``annotators`` and below the protocols, ``.importlinter``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site import uploads
from annotation_site.problems import FormatError

from .slots import more_than_counted
from .statuses import AssignmentStatus


def _url_name(suffix):
    """A ProtocolPages URL name: ``<url_prefix>-<suffix>``."""
    return property(lambda self: f"{self.url_prefix}-{suffix}")


def _show_refusal(form, exc):
    """A service's ValidationError on the form: on the field it names when the form has it, else above the form
    with the field's name (a user name refused while inviting is not a field of the form: Django's
    ``add_error`` raised ValueError for it, a 500)."""
    named = exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]
    for field, texts in named:
        if field in form.fields:
            form.add_error(field, texts)
        else:
            form.add_error(None, [text if field in (None, "__all__") else f"{field}: {text}" for text in texts])


@dataclass(frozen=True)
class ProtocolPages:
    """What the shared pages need of one protocol."""

    noun: str  # "project" / "task": the page texts and the templates' context key
    unit_noun: str  # what an assignment is on: "video" / "item"
    templates: str  # the template folder: "<templates>/home.html", "work.html", "import_problems.html"
    queryset: Callable[[], Any]  # the protocol's units with what its pages show (``select_related``)
    url_prefix: str  # the protocol's URL names are "<url_prefix>-work", "-annotate" (``pk``), "-home" (none),
    # "-instructions", "-start", "-status" (each taking ``name``)
    detail_url: str  # the staff detail page's URL name (taking ``name``)
    annotator_for_user: Callable  # annotators.services.annotator_for_user
    is_member: Callable  # (unit, annotator) -> bool
    units_for: Callable  # annotator -> the units they are members of, with their counts
    assignments_of: Callable  # (unit, annotator) -> their assignments, in order
    assignable_count: Callable  # (unit, annotator) -> how many more they may take
    next_assignment: Callable  # (unit, annotator) -> an assignment or None
    closed_error: type  # what next_assignment raises on a closed unit
    not_member_message: str  # why a non-member may not start
    invite: Callable  # (unit, username) -> an invitation (annotators.services.Invited)
    announce_invitations: Callable  # (request, invited): annotators.views.invitation_messages
    set_status: Callable  # (unit, status)
    home_label: str  # what the breadcrumbs call the list
    title_attr: str = "name"  # what the annotator pages call a unit

    work_url = _url_name("work")
    annotate_url = _url_name("annotate")
    home_url = _url_name("home")
    instructions_url = _url_name("instructions")
    start_url = _url_name("start")
    status_url = _url_name("status")

    @property
    def all_key(self):
        """The staff's list of every unit on the home page: ``all_projects``, ``all_tasks``."""
        return f"all_{self.noun}s"

    def unit(self, name):
        return get_object_or_404(self.queryset(), name=name)

    def context(self, unit, **more):
        """What the shared templates need of a unit's page (``workflow/work.html``, ``workflow/unit_detail.html``):
        the unit under its own name and as ``unit``, and these pages' names and words."""
        return {self.noun: unit, "unit": unit, "pages": self, **more}

    # --- annotators ----------------------------------------------------------------------------------------

    def unit_for(self, request, name):
        """``(unit, annotator)`` the user may open: staff see every unit, annotators the ones they belong to."""
        unit = get_object_or_404(self.queryset(), name=name)
        annotator = self.annotator_for_user(request.user, create=request.user.is_staff)
        if not request.user.is_staff and not self.is_member(unit, annotator):
            raise Http404(f"no such {self.noun}")
        return unit, annotator

    def home(self, request):
        annotator = self.annotator_for_user(request.user, create=request.user.is_staff)
        context = {"mine": self.units_for(annotator)}
        if request.user.is_staff:
            context[self.all_key] = self.queryset().order_by("-created_at")
        return render(request, f"{self.templates}/home.html", context)

    def work(self, request, name):
        """An annotator's view of a unit: their assignments (to revise while it is open) and a start button."""
        unit, annotator = self.unit_for(request, name)
        if request.user.is_staff and not self.is_member(unit, annotator):
            return redirect(self.detail_url, name=name)
        mine = list(self.assignments_of(unit, annotator))
        available = self.assignable_count(unit, annotator)
        return render(
            request,
            f"{self.templates}/work.html",
            self.context(
                unit,
                title=getattr(unit, self.title_attr),
                assignments=mine,
                available=available,
                more_available=more_than_counted(available),  # counted only that far: "100+"
                open=next((a for a in mine if a.status == AssignmentStatus.OPEN), None),
            ),
        )

    def start(self, request, name):
        """Hand the annotator their next assignment (or the one in progress) and open it."""
        unit, annotator = self.unit_for(request, name)
        return redirect(self.next_page(request, unit, annotator))

    def next_page(self, request, unit, annotator):
        """Where Start sends the annotator, as a path: hand out their next assignment (or the one in progress)
        and name its annotation page; else the page that says why, with its message (nothing left: the work
        page; closed: the work page; not a member: the detail page). The start view redirects there; a submit
        that asks for the next page answers it (``workflow.api.submit_response``), so both hand out alike."""
        try:
            found = self.next_assignment(unit, annotator)
        except self.closed_error:
            messages.error(request, f"This {self.noun} is closed.")
            return reverse(self.work_url, args=[unit.name])
        except PermissionDenied:
            messages.error(request, self.not_member_message)
            return reverse(self.detail_url, args=[unit.name])
        if found is None:
            messages.success(request, f"There is no {self.unit_noun} left for you in this {self.noun}. Thank you!")
            return reverse(self.work_url, args=[unit.name])
        return reverse(self.annotate_url, args=[found.pk])

    # --- researchers -----------------------------------------------------------------------------------------

    def staff_or_work(self, staff_view):
        """The unit's address serves the researcher's overview to staff and sends everyone else to the work
        page (annotators share one link)."""

        def view(request, name):
            if not request.user.is_authenticated or not request.user.is_staff:
                return redirect(self.work_url, name=name)
            return staff_member_required(staff_view)(request, name)

        view.__name__, view.__doc__ = staff_view.__name__, staff_view.__doc__
        return view

    def create_from_form(self, request, form, create, message):
        """A valid creation form: ``create(cleaned_data)`` the unit and invite its ``annotators``, then say
        ``message(unit)`` and go to the unit's page. None (the form carries the refusal) when it was refused."""
        try:
            with transaction.atomic():  # a refused user name leaves no unit and no account behind
                unit = create(form.cleaned_data)
                invited = [self.invite(unit, name) for name in form.cleaned_data["annotators"]]
        except ValidationError as exc:
            _show_refusal(form, exc)
            return None
        messages.success(request, message(unit))
        self.announce_invitations(request, invited)
        return redirect(self.detail_url, name=unit.name)

    def invite_view(self, form_class):
        @staff_member_required
        @require_POST
        def invite(request, name):
            unit = self.unit(name)
            form = form_class(request.POST)
            if form.is_valid():
                invited = []
                for username in form.cleaned_data["usernames"]:
                    try:
                        invited.append(self.invite(unit, username))
                    except ValidationError as exc:
                        messages.error(request, f"{username}: {' '.join(exc.messages)}")
                self.announce_invitations(request, invited)
            else:
                messages.error(request, " ".join(form.errors.get("usernames", ["Invalid input."])))
            return redirect(self.detail_url, name=name)

        return invite

    def status_view(self):
        @staff_member_required
        @require_POST
        def status(request, name):
            unit = self.unit(name)
            try:
                self.set_status(unit, request.POST.get("status", ""))
            except ValidationError as exc:
                messages.error(request, " ".join(exc.messages))
            else:
                messages.success(request, f"{self.noun.capitalize()} {unit.name} is {unit.status}.")
            return redirect(self.detail_url, name=name)

        return status

    def import_upload(self, request, unit, form, run, *, refused=()):
        """Import the file of a valid upload ``form``: ``run(text, filename)`` imports it and returns the success
        message. A refused upload (size, encoding) or one of the ``refused`` exceptions is a message; an invalid
        file, the page of its problems (400). Otherwise back to the unit's overview."""
        if not form.is_valid():
            messages.error(request, "Choose a file to import.")
            return redirect(self.detail_url, name=unit.name)
        upload = form.cleaned_data["file"]
        try:
            text = uploads.upload_text(upload)
            messages.success(request, run(text, upload.name))
        except uploads.UploadRefused as exc:
            messages.error(request, f"{exc}; nothing was imported.")
        except refused as exc:
            messages.error(request, str(exc))
        except FormatError as exc:
            return render(
                request,
                f"{self.templates}/import_problems.html",
                {self.noun: unit, "problems": exc.problems, "filename": upload.name},
                status=400,
            )
        return redirect(self.detail_url, name=unit.name)
