"""Metric pages (staff only). Thin: every operation is a service or report call; templates only display."""

import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site import uploads
from annotation_site.corpus import services as corpus_services
from annotation_site.corpus.models import Dataset
from annotation_site.factuality.models import LabelSet

from . import analysis, charts, loaders, reports, services, text_metrics
from .forms import ComputeForm, PairsImportForm, ReportForm, ScoreImportForm
from .models import Metric, Report
from .score_import import FormatError


@staff_member_required
def index(request):
    datasets = Dataset.objects.order_by("name")
    counts = {}
    for dataset_id, name in Metric.objects.order_by("name").values_list("dataset_id", "name"):
        counts.setdefault(dataset_id, []).append(name)
    recent = Report.objects.select_related("dataset").order_by("-created_at")[:10]
    return render(
        request,
        "metrics_eval/index.html",
        {
            "datasets": [(d, counts.get(d.pk, [])) for d in datasets],
            "campaigns": loaders.campaigns(),
            "reports": recent,
        },
    )


def _report_context(report):
    """What the report part of a page shows (no queries: everything is in the stored report)."""
    result = report.result
    humans = result["humans"]
    labels = {name: info.get("label") or name for name, info in report.snapshot.get("metrics", {}).items()}
    rows = []
    for metric, levels in result["metrics"].items():
        cells = []
        for human in humans:
            entry = levels.get(human) or {}
            cells.append(
                {
                    **entry,
                    "best": metric in result["best"].get(human, []),
                    "cluster": result["clusters"].get(human, {}).get(metric),
                }
            )
        rows.append({"metric": metric, "label": labels.get(metric, metric), "cells": cells})
    rankings = []
    systems = result.get("systems") or {}
    for human in humans:
        per_metric = systems.get("rankings", {}).get(human, {})
        if not per_metric:
            continue
        order = next(iter(per_metric.values()))["order"]
        table = []
        for system in order:
            table.append(
                {
                    "system": system,
                    "human": systems["human"].get(human, {}).get(system),
                    "human_rank": next(iter(per_metric.values()))["human_rank"][system],
                    "metrics": [
                        {
                            "rank": per_metric[m]["metric_rank"].get(system),
                            "score": systems["metrics"].get(m, {}).get(system),
                            "inconsistent": system in per_metric[m]["inconsistent"],
                        }
                        if m in per_metric
                        else None
                        for m in result["metrics"]
                    ],
                }
            )
        inverted = {m: per_metric[m]["inverted_pairs"] for m in per_metric}
        rankings.append({"human": human, "rows": table, "inverted": inverted})
    parameters = result["parameters"]
    return {
        "report": report,
        "result": result,
        "humans": humans,
        "rows": rows,
        "rankings": rankings,
        "metric_labels": [labels.get(m, m) for m in result["metrics"]],
        "parameters": parameters,
        "confidence_percent": round(100 * parameters["confidence"]),
        "figures": list(charts.figures(report)),
        "formats": list(charts.FORMATS),
        "method_label": charts.method_label(report),
        "snapshot_json": json.dumps(report.snapshot, indent=2, sort_keys=True),
        "versions": sorted(report.versions.items()),
        "human_systems": (
            reports.describe_human_systems(result["human_systems"]) if "human_systems" in result else None
        ),
        "human_pairs": reports.describe_human_pairs(result["human_pairs"]) if "human_pairs" in result else None,
        "cautions": reports.cautions(result, report.snapshot),
    }


def _pairs_context(name, report):
    """A pair set's report as the dataset page shows it: one row per metric (no queries)."""
    parameters = report.result["parameters"]
    return {
        "name": name,
        "report": report,
        "pairs": report.snapshot["counts"]["captions"],
        "rows": list(reports.table_rows(report)),
        "resamples": parameters["resamples"],
        "seed": parameters["seed"],
        "confidence_percent": round(100 * parameters["confidence"]),
        "tie_credit": parameters.get("tie_credit"),
        "human_pairs": (
            reports.describe_human_pairs(report.result["human_pairs"]) if "human_pairs" in report.result else None
        ),
        "cautions": reports.cautions(report.result, report.snapshot),
    }


@staff_member_required
def dataset_report(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    metric_rows = loaders.metrics(dataset)
    label_sets = list(LabelSet.objects.filter(dataset=dataset).order_by("name").values_list("name", flat=True))
    form = ReportForm(request.GET or None, label_sets=label_sets, metric_names=[m.name for m in metric_rows])
    context = {
        "dataset": dataset,
        "metrics": metric_rows,
        "label_sets": label_sets,
        "form": form,
        "compute_form": ComputeForm(reference_sets=corpus_services.reference_sets(dataset)),
        "import_form": ScoreImportForm(),
        "job": services.latest_compute_job(dataset),
        "text_metrics": text_metrics.TEXT_METRICS,
        "problem": None,
        "pairs_form": PairsImportForm(),
        "pair_reports": [],
        "pairs_problem": None,
    }
    try:  # correct/foil pairs: with the resamples, seed and confidence of the analysis form
        kwargs = form.analysis_kwargs() if (not form.is_bound or form.is_valid()) else {}
        pair_params = analysis.Parameters(**{k: kwargs[k] for k in ("resamples", "seed", "confidence") if k in kwargs})
        context["pair_reports"] = [
            _pairs_context(name, report)
            for name, report in reports.pair_set_reports(dataset, params=pair_params, user=request.user)
        ]
    except reports.REFUSALS as exc:  # (the platform's own words only: anything else is a fault, not a sentence)
        context["pairs_problem"] = str(exc)
    if metric_rows and label_sets and (not form.is_bound or form.is_valid()):
        chosen = form.cleaned_data.get("metrics") if form.is_bound else None
        _add_report(
            context,
            lambda: reports.factuality_report(
                dataset,
                label_set=(form.cleaned_data.get("labels") if form.is_bound else None) or None,
                metrics=chosen or None,
                params=analysis.Parameters(**form.analysis_kwargs()),
                user=request.user,
                include_human=form.human_included(),
            ),
        )
    return render(request, "metrics_eval/dataset_report.html", context)


@staff_member_required
@require_POST
def compute(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    form = ComputeForm(request.POST, reference_sets=corpus_services.reference_sets(dataset))
    if not form.is_valid():
        messages.error(request, "Choose the metrics to compute.")
        return redirect("metrics-dataset", name=name)
    try:
        services.start_compute_job(
            dataset, form.cleaned_data["metrics"], reference_sets=form.cleaned_data["reference_sets"], user=request.user
        )
    except services.ComputeRunning as exc:
        messages.warning(
            request,
            f"Already computing metrics for this dataset (started "
            f"{exc.job.created_at:%H:%M} UTC); this page shows its progress. Start again "
            "once it has finished.",
        )
        return redirect("metrics-dataset", name=name)
    except services.MetricError as exc:
        messages.error(request, str(exc))
    else:  # (the job is queued: it never runs inside the request; the page follows its progress)
        messages.info(request, "Computing the metrics in the background; this page shows the progress.")
    return redirect("metrics-dataset", name=name)


def _import_upload(request, run, also=()):
    """The result of ``run()`` (an import of an uploaded file), or None after telling the page why nothing was
    imported: a refused upload, the file's problems, or (``also``) an error the import names."""
    try:
        return run()
    except uploads.UploadRefused as exc:
        messages.error(request, f"{exc}; nothing was imported.")
    except FormatError as exc:
        messages.error(request, exc.describe())
    except also as exc:
        messages.error(request, str(exc))
    return None


@staff_member_required
@require_POST
def import_scores(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    form = ScoreImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a score file to import.")
        return redirect("metrics-dataset", name=name)
    data = form.cleaned_data
    result = _import_upload(
        request,
        lambda: services.import_score_upload(
            dataset, data["file"], replace=data["replace"], version=data["version"] or None
        ),
    )
    if result is not None:
        messages.success(request, "Imported " + ", ".join(f"{n} {name} scores" for name, n in result.metrics.items()))
    return redirect("metrics-dataset", name=name)


@staff_member_required
@require_POST
def import_pairs(request, name):
    dataset = get_object_or_404(Dataset, name=name)
    form = PairsImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a pairs file and name the pair set.")
        return redirect(reverse("metrics-dataset", args=[name]) + "#pairs")
    data = form.cleaned_data
    count = _import_upload(
        request,
        lambda: services.import_pairs_upload(dataset, data["file"], pair_set=data["pair_set"], replace=data["replace"]),
        also=(services.MetricError,),
    )
    if count is not None:
        messages.success(request, f"Imported {count} correct/foil pairs as pair set {data['pair_set']}.")
    return redirect(reverse("metrics-dataset", args=[name]) + "#pairs")


@staff_member_required
@require_POST
def delete_metric(request, name, metric):
    dataset = get_object_or_404(Dataset, name=name)
    if request.POST.get("confirm") != metric:  # the form's box, naming the metric
        messages.error(request, f"Tick the box to confirm deleting metric {metric}; nothing was deleted.")
        return redirect(reverse("metrics-dataset", args=[name]) + "#scores-heading")
    try:
        count = services.delete_metric(dataset, metric)
    except services.UnknownMetric as exc:
        raise Http404(str(exc)) from None
    messages.success(request, f"Deleted metric {metric} with its {count} scores (stored reports stay).")
    return redirect(reverse("metrics-dataset", args=[name]) + "#scores-heading")


def _add_report(context, build):
    """The page's context of the report ``build()`` makes (or reuses), or the problem that stopped it."""
    try:
        report, _ = build()
    except reports.REFUSALS as exc:  # (the platform's own words only: anything else is a fault, not a sentence)
        context["problem"] = str(exc)
        context["problem_field"] = exc.field  # (the page links where to act on it: "metrics", the dataset's page)
    else:
        context.update(_report_context(report))


@staff_member_required
def campaign_report(request, name):
    form = ReportForm(request.GET or None)
    context = {"campaign": name, "form": form, "problem": None}
    try:
        context["dataset"] = loaders.campaign(name).dataset
    except loaders.UnknownCampaign as exc:  # a page named by an unknown campaign, like one of an unknown dataset
        raise Http404(str(exc)) from None
    except loaders.HumanScoresUnavailable as exc:  # (no assessment app: the page says so)
        context["problem"] = str(exc)
        return render(request, "metrics_eval/campaign_report.html", context)
    if not form.is_bound or form.is_valid():
        _add_report(
            context,
            lambda: reports.da_report(
                name,
                params=analysis.Parameters(**form.analysis_kwargs()),
                user=request.user,
                include_human=form.human_included(),
            ),
        )
    return render(request, "metrics_eval/campaign_report.html", context)


@staff_member_required
def report_detail(request, pk):
    report = get_object_or_404(Report.objects.select_related("dataset", "created_by"), pk=pk)
    return render(request, "metrics_eval/report_detail.html", _report_context(report))


@staff_member_required
def report_csv(request, pk):
    report = get_object_or_404(Report.objects.select_related("dataset"), pk=pk)
    response = HttpResponse(reports.table_csv(report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="captioneval-report-{report.pk}.csv"'
    return response


@staff_member_required
def report_json(request, pk):
    report = get_object_or_404(Report.objects.select_related("dataset"), pk=pk)
    body = {
        "id": report.pk,
        "kind": report.kind,
        "dataset": report.dataset.name,
        "campaign": report.campaign,
        "created_at": report.created_at.isoformat(),
        "parameters": report.parameters,
        "snapshot": report.snapshot,
        "versions": report.versions,
        "result": report.result,
    }
    response = HttpResponse(json.dumps(body, indent=1), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="captioneval-report-{report.pk}.json"'
    return response


@staff_member_required
def report_figure(request, pk, figure, fmt):
    if figure not in charts.FIGURES or fmt not in charts.FORMATS:
        raise Http404("unknown figure or format")
    report = get_object_or_404(Report.objects.select_related("dataset"), pk=pk)
    if figure not in charts.figures(report):  # (a pairs report has no scatter or ranking: empty axes were drawn)
        raise Http404(f"report {report.pk} has no {figure} figure")
    # (keyed by the level drawn, not by the query: any other value would be a cache entry, and a render, of its
    # own, under a key as long as the query)
    human = charts.drawn_level(report, figure, request.GET.get("human"))
    key = f"metrics-figure-v2:{report.pk}:{report.data_hash[:16]}:{figure}:{fmt}:{human or ''}"
    content = cache.get(key)
    if content is None:
        content = charts.render(report, figure, fmt, human=human)
        cache.set(key, content, 3600)
    response = HttpResponse(content, content_type=charts.FORMATS[fmt])
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="captioneval-report-{report.pk}-{figure}.{fmt}"'
    return response
