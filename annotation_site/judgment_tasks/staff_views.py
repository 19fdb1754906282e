"""Researcher pages of a task: creating it from a preset, its overview (progress, imports, members, crowd
links), settings and definition, open / close, the report with its charts, and the downloads. Staff only."""

import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation_site.workflow.downloads import anonymise_requested

from . import charts, exports, imports, participants, presets, reports, services
from .forms import ImportForm, InviteForm, ParticipantForm, TaskCreateForm, TaskSettingsForm
from .models import Task
from .views import PAGES


def _task(name):
    return get_object_or_404(Task.objects.select_related("dataset"), name=name)


@staff_member_required
def task_create(request):
    form = TaskCreateForm(request.POST or None, initial={"preset": request.GET.get("preset")})
    if request.method == "POST" and form.is_valid():

        def create(data):
            return services.create_task(
                name=data["name"],
                dataset=data["dataset"],
                preset=data["preset"],
                annotators_per_item=data["annotators_per_item"],
                description=data["description"],
                created_by=request.user,
            )

        created = PAGES.create_from_form(
            request, form, create, lambda task: f"Created task {task.name}. Next: import its items (JSONL)."
        )
        if created is not None:
            return created
    return render(request, "judgment_tasks/task_create.html", {"form": form, "presets": presets.PRESETS})


def _task_detail(request, name):
    task = _task(name)
    return render(
        request,
        "judgment_tasks/task_detail.html",
        PAGES.context(
            task,
            progress=services.progress(task),
            invite_form=InviteForm(),
            items_form=ImportForm(prefix="items"),
            answers_form=ImportForm(prefix="answers"),
            participant_form=ParticipantForm(),
            editable=not services.work_started(task),
            definition=task.definition,
        ),
    )


task_detail = PAGES.staff_or_work(_task_detail)
task_invite = PAGES.invite_view(InviteForm)
task_status = PAGES.status_view()


@staff_member_required
def task_settings(request, name):
    task = _task(name)
    editable = not services.work_started(task)
    initial = {
        "title": task.title,
        "description": task.description,
        "instructions": task.instructions,
        "annotators_per_item": task.annotators_per_item,
        "definition": json.dumps(task.definition, indent=2),
    }
    form = TaskSettingsForm(request.POST or None, initial=initial)
    if not editable:
        form.fields["definition"].disabled = True
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if editable and data["definition"] != task.definition:
                services.update_definition(task, data["definition"])
            services.update_task(
                task,
                title=data["title"],
                description=data["description"],
                instructions=data["instructions"],
                annotators_per_item=data["annotators_per_item"],
            )
        except ValidationError as exc:
            for problem in exc.message_dict.get("definition", []):
                form.add_error("definition", problem)
            for key, problems in exc.message_dict.items():
                if key != "definition":
                    form.add_error(None, problems)
        else:
            messages.success(request, "Settings saved.")
            return redirect("tasks-detail", name=name)
    return render(request, "judgment_tasks/task_settings.html", {"task": task, "form": form, "editable": editable})


@staff_member_required
@require_POST
def task_participant(request, name):
    """Make a signed link for one participant without an account (any source that sends people to a URL)."""
    task = _task(name)
    form = ParticipantForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            annotator = participants.admit(task, provider=data["provider"], external_id=data["external_id"])
        except ValueError as exc:
            messages.error(request, f"No link was made: {exc}.")
            return redirect("tasks-detail", name=name)
        link = request.build_absolute_uri(
            participants.entry_url(task, annotator, limit=data["limit"], finish_url=data["finish_url"] or "")
        )
        messages.info(request, f"Link for participant {annotator.external_id}: {link}")
    else:
        messages.error(request, "Give the participant's id (and a valid finish address, if any).")
    return redirect("tasks-detail", name=name)


@staff_member_required
@require_POST
def task_import(request, name, what):
    task = _task(name)

    def run(text, filename):
        if what == "items":
            counts = imports.import_items(task, text, filename=filename, replace=form.cleaned_data["replace"])
            return f"Imported {counts['items']} items ({counts['elements']} list elements)."
        counts = imports.import_model_answers(task, text, filename=filename)
        return f"Imported {counts['answers']} model answers of {counts['models']} models."

    form = ImportForm(request.POST, request.FILES, prefix=what)
    return PAGES.import_upload(request, task, form, run, refused=imports.WorkStarted)


def _median_ties(request):
    value = request.GET.get("median_ties", "lower")
    return value if value in reports.MEDIAN_TIES else "lower"


@staff_member_required
def task_report(request, name):
    task = _task(name)
    report, _, _ = reports.task_report(task, median_ties=_median_ties(request))
    return render(
        request,
        "judgment_tasks/report.html",
        {
            "task": task,
            "report": report,
            "charts": charts.chart_names(report) if report["judged_items"] else [],
            "median_ties": _median_ties(request),
        },
    )


@staff_member_required
def task_chart(request, name, chart, fmt):
    task = _task(name)
    report, _, _ = reports.task_report(task, median_ties=_median_ties(request))
    try:
        figure = charts.chart(report, chart)
    except KeyError:
        raise Http404("no such chart") from None
    if fmt == "png":
        response = exports.attachment(charts.render(figure, "png"), f"{task.name}-{chart}.png", "image/png")
        response["Content-Disposition"] = response["Content-Disposition"].replace("attachment", "inline")
        return response
    response = HttpResponse(charts.render(figure, "svg"), content_type="image/svg+xml")
    return response


@staff_member_required
def task_download(request, name, what):
    task = _task(name)
    if what == "answers.jsonl":
        anonymise = anonymise_requested(request.GET)
        return exports.attachment(
            exports.answers_jsonl(task, anonymise=anonymise), f"{task.name}-answers.jsonl", "application/x-ndjson"
        )
    report, labels, item_frame = reports.task_report(task, median_ties=_median_ties(request))
    if what == "report.json":
        return exports.attachment(exports.report_json(report), f"{task.name}-report.json", "application/json")
    if what == "figures.csv":
        return exports.attachment(exports.figures_csv(report), f"{task.name}-figures.csv", "text/csv")
    rows = reports.label_rows(task.definition, labels, item_frame)
    if what == "labels.csv":
        return exports.attachment(exports.labels_csv(rows), f"{task.name}-labels.csv", "text/csv")
    if what == "labels.json":
        return exports.attachment(exports.labels_json(rows), f"{task.name}-labels.json", "application/json")
    raise Http404("no such download")
