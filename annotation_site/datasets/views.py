"""Dataset pages. Thin: every operation is a service call; templates only display."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation_site.corpus import attach
from annotation_site.corpus import services as corpus
from annotation_site.corpus.models import Dataset, Video
from annotation_site.factuality import labels
from annotation_site.factuality.exports import attachment
from annotation_site.factuality.models import Project
from annotation_site.interchange import formats
from annotation_site.interchange.bundle import FormatError
from annotation_site.interchange.services import (
    PROJECT_FACTVC_FILENAME,
    ImportRefused,
    NothingToExport,
    default_label_set,
    export_bundle,
    import_upload,
    project_factvc_text,
)
from annotation_site.jobs.services import latest_job

from . import charts
from .forms import DatasetImportForm, VideoAddForm


def _label_set(dataset, request):
    name = request.GET.get("labels")
    if name:
        return get_object_or_404(dataset.label_sets, name=name)
    return default_label_set(dataset)


@login_required
def home(request):
    if not request.user.is_staff:
        return redirect("factuality-home")  # annotators work in their queue; the dataset pages are for staff
    return render(request, "datasets/home.html", {"datasets": corpus.datasets_with_counts()})


@staff_member_required
def dataset_detail(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    label_set = _label_set(dataset, request)
    videos = Paginator(dataset.videos.order_by("position", "external_id"), 50).get_page(request.GET.get("page"))
    summary = labels.system_summary(label_set) if label_set else None
    return render(
        request,
        "datasets/dataset_detail.html",
        {
            "dataset": dataset,
            "systems": dataset.systems.order_by("position", "name"),
            "videos": videos,
            "label_sets": labels.label_sets(dataset),
            "label_set": label_set,
            "summary": summary,
            "label_chart": charts.label_summary_chart(summary) if summary else None,
            "formats": formats.FORMATS,
            "processing_job": latest_job(f"dataset:{dataset.pk}", attach.PROCESS_KIND),
            "unprocessed": attach.videos_to_process(dataset).count(),
        },
    )


@staff_member_required
@require_POST
def process_videos(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    video_ids = list(attach.videos_to_process(dataset).values_list("pk", flat=True))
    if video_ids:
        attach.start_processing(dataset, video_ids, user=request.user)
        messages.success(request, f"Processing {len(video_ids)} videos.")
    else:
        messages.info(request, "Every video file is already processed.")
    return redirect("dataset-detail", name=name)


@staff_member_required
def video_detail(request, name, external_id):
    video = get_object_or_404(Video.objects.select_related("dataset"), dataset__name=name, external_id=external_id)
    label_set = _label_set(video.dataset, request)
    return render(
        request,
        "datasets/video_detail.html",
        {
            "video": video,
            "dataset": video.dataset,
            "label_set": label_set,
            "captions": labels.video_captions(video, label_set),
            "references": video.references.all(),
        },
    )


@staff_member_required
def import_dataset(request):
    form = DatasetImportForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        try:
            result = import_upload(form.cleaned_data)
        except FormatError as exc:
            problems = exc.problems  # Problem objects (file, line, where, message), or plain strings
        except ImportRefused as exc:
            form.add_error("name", str(exc))
        else:
            for warning in result.warnings:
                messages.warning(request, warning)
            messages.success(
                request,
                f"Imported {result.dataset.name}: " + ", ".join(f"{n} {what}" for what, n in result.counts.items()),
            )
            return redirect("dataset-detail", name=result.dataset.name)
    return render(request, "datasets/import.html", {"form": form, "problems": problems})


@staff_member_required
def export_dataset(request, name, fmt):
    dataset = get_object_or_404(Dataset, name=name)
    if fmt not in formats.FORMATS:
        raise Http404("unknown format")
    label_set = _label_set(dataset, request)
    if fmt == "factvc" and label_set is None:
        messages.error(request, "This dataset has no factuality labels to export in the FactVC format.")
        return redirect("dataset-detail", name=name)
    try:
        text = formats.render(fmt, export_bundle(dataset, label_set=label_set))
    except formats.Unwritable as exc:
        messages.error(request, str(exc))
        return redirect("dataset-detail", name=name)
    response = HttpResponse(text, content_type=formats.content_type(fmt))
    response["Content-Disposition"] = f'attachment; filename="{formats.filename(fmt, dataset.name)}"'
    return response


@staff_member_required
def add_video(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    form = VideoAddForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            video = corpus.add_video(
                dataset,
                form.cleaned_data["external_id"],
                file=form.cleaned_data.get("file"),
                url=form.cleaned_data.get("url") or "",
            )
        except ValidationError as exc:
            form.add_error(None, exc)  # a dict of field errors goes to those fields, a message to the form
        else:
            messages.success(request, f"Added video {video.external_id}.")
            return redirect("video-detail", name=name, external_id=video.external_id)
    return render(request, "datasets/video_add.html", {"form": form, "dataset": dataset})


@staff_member_required
def project_export_factvc(request, name):
    """The FactVC download of a factuality project's aggregated labels (mounted under /factuality/ by
    annotation_site/urls.py, beside the project's other pages)."""
    project = get_object_or_404(Project.objects.select_related("dataset", "label_set"), name=name)
    try:
        text = project_factvc_text(project)
    except (NothingToExport, formats.Unwritable) as exc:
        messages.error(request, str(exc))
        return redirect("factuality-project", name=name)
    return attachment(text, PROJECT_FACTVC_FILENAME, "application/json")
