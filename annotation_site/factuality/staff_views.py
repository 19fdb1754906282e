"""Researcher pages of a project: creating it, its overview (progress, annotators, invitations), settings,
aggregation, the agreement report with its charts, downloads and the raw-labels import. Staff only."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation_site.corpus.models import Dataset
from annotation_site.workflow.downloads import anonymise_requested, attachment

from . import aggregation, agreement, charts, exports, projects, raw_labels
from .forms import InviteForm, ProjectCreateForm, ProjectSettingsForm, RawImportForm
from .models import Aggregation, Project
from .views import PAGES


def _project(name):
    return get_object_or_404(Project.objects.select_related("dataset", "label_set"), name=name)


@staff_member_required
def project_create(request):
    dataset = Dataset.objects.filter(name=request.POST.get("dataset") or request.GET.get("dataset")).first()
    form = ProjectCreateForm(request.POST or None, dataset=dataset)
    if request.method == "POST" and form.is_valid():

        def create(data):
            return projects.create_project(
                projects.ProjectSpec(
                    name=data["name"],
                    dataset=data["dataset"],
                    kind=data["kind"],
                    systems=form.chosen_systems(),
                    videos=data["videos"] or None,
                    annotators_per_video=data["annotators_per_video"],
                    shuffle_systems=data["shuffle_systems"],
                    description=data["description"],
                    preset=data.get("preset") or "",
                    rationale=data.get("rationale") or Project.Rationale.OFF,
                ),
                created_by=request.user,
            )

        created = PAGES.create_from_form(
            request,
            form,
            create,
            lambda project: f"Created project {project.name} with {project.project_videos.count()} videos.",
        )
        if created is not None:
            return created
    return render(request, "factuality/project_create.html", {"form": form, "dataset": dataset})


def _project_detail(request, name):
    project = _project(name)
    return render(
        request,
        "factuality/project_detail.html",
        PAGES.context(
            project,
            progress=projects.progress(project),
            invite_form=InviteForm(),
            import_form=RawImportForm(),
            aggregation=Aggregation.objects.filter(project=project).first(),
            systems=project.systems.order_by("position", "name"),
            scale=projects.scale_of(project),
        ),
    )


project_detail = PAGES.staff_or_work(_project_detail)
project_invite = PAGES.invite_view(InviteForm)
project_status = PAGES.status_view()


@staff_member_required
@require_POST
def project_reissue(request, name, username):
    """A new invitation link for an invited account that never activated (the lost link stops working)."""
    project = _project(name)
    try:
        path = projects.reissue_invitation(project, username)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.info(
            request,
            f"New invitation link for {username} (the earlier one no longer works): {request.build_absolute_uri(path)}",
        )
    return redirect("factuality-project", name=name)


@staff_member_required
def project_settings(request, name):
    project = _project(name)
    anchors = projects.scale_of(project) if project.is_rating else ()
    initial = {
        "description": project.description,
        "annotators_per_video": project.annotators_per_video,
        "instructions": project.instructions,
        "question": project.question,
        "rationale": project.rationale,
    }
    form = ProjectSettingsForm(request.POST or None, initial=initial, anchors=anchors)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            projects.update_project(
                project,
                instructions=data["instructions"],
                description=data["description"],
                annotators_per_video=data["annotators_per_video"],
                question=data["question"] if project.is_rating else None,
                rationale=(data["rationale"] or None) if project.is_rating else None,
                anchors=form.anchors(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, "Settings saved.")
            return redirect("factuality-project", name=name)
    return render(request, "factuality/project_settings.html", {"project": project, "form": form})


@staff_member_required
@require_POST
def project_aggregate(request, name):
    project = _project(name)
    if project.is_rating:
        raise Http404("rating projects have no aggregated label set")
    ties = request.POST.get("ties", "error")
    try:
        result = aggregation.aggregate_project(project, ties=ties)
        run = aggregation.write_label_set(project, result, created_by=request.user)
    except (ValueError, aggregation.LabelSetNameTaken) as exc:
        messages.error(request, str(exc))
    else:
        text = (
            f"Aggregated {run.captions} captions and {run.sentences} sentences ({run.spans} spans) into "
            f"label set “{run.label_set.name}”."
        )
        if run.errors_without_spans:
            text += (
                f" {run.errors_without_spans} sentences are erroneous by majority with no word marked by a "
                "majority: the FactVC export cannot show them."
            )
        messages.success(request, text)
    return redirect("factuality-project", name=name)


@staff_member_required
def project_report(request, name):
    project = _project(name)
    report = agreement.project_report(project)
    names = {row["annotator"].pk: row["annotator"].name for row in projects.progress(project)["annotators"]}
    for row in report["annotators"]:
        row["name"] = names.get(row["annotator_id"], f"#{row['annotator_id']}")
    return render(
        request, "factuality/report.html", {"project": project, "report": report, "scale": projects.scale_of(project)}
    )


@staff_member_required
def project_chart(request, name, chart):
    project = _project(name)
    if chart not in ("scores", "errors") or (chart == "errors" and project.is_rating):
        raise Http404("no such chart")
    systems = agreement.project_systems(project)
    if chart == "scores":
        title = "Ratings per system" if project.is_rating else "Paragraph scores per system"
        svg = charts.score_distribution(systems, projects.scale_of(project), title=title)
    elif chart == "errors":
        svg = charts.error_shares(systems)
    else:
        raise Http404("no such chart")
    response = HttpResponse(svg, content_type="image/svg+xml")
    return response


@staff_member_required
def export_raw(request, name):
    project = _project(name)
    anonymise = anonymise_requested(request.GET)
    return attachment(
        raw_labels.export_lines(project, anonymise=anonymise), exports.raw_filename(project), "application/x-ndjson"
    )


@staff_member_required
@require_POST
def import_raw(request, name):
    project = _project(name)

    form = RawImportForm(request.POST, request.FILES)

    def run(text, filename):
        _, counts = raw_labels.import_lines(
            text,
            project_name=project.name,
            dataset=project.dataset,
            filename=filename,
            own_export=form.cleaned_data.get("own_export", False),  # (import_upload validated the form first)
        )
        for warning in counts["warnings"]:
            messages.warning(request, warning)
        return (
            f"Imported {counts['lines']} labelled captions ({counts['submissions']} submissions from "
            f"{counts['annotators']} annotators"
            + (f"; {counts['unchanged']} unchanged, not stored again" if counts["unchanged"] else "")
            + ")."
        )

    return PAGES.import_upload(request, project, form, run)
