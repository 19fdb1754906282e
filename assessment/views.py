"""Pages of Direct Assessment. Thin: every operation is a service call; templates only display.

Researchers (staff): campaign list, creation, the campaign page (progress, results, charts, QC, links,
downloads), replication. Workers: the rating page, reached as a logged-in account (``campaigns/NAME/rate/``),
by an assignment's signed link (``a/TOKEN/``) or by the campaign's entry link with a worker id
(``join/TOKEN/?worker_id=ID``, for crowd platforms that append the worker's id).
"""

import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation_site import spreadsheet_csv, uploads
from annotation_site.corpus.models import Dataset
from annotation_site.crowd.hooks import frameable, link_problem
from annotation_site.jobs.services import latest_job
from annotation_site.problems import FormatError

from . import campaigns, charts, csv_import, judgments_download, replication, services, workers
from .analysis import analyse
from .forms import AssignForm, CampaignForm, JudgmentsImportForm
from .models import Campaign, QCStatus, Worker
from .results import PUBLIC_CAPTION_COLUMNS

QC_ROWS_SHOWN = 200


def _campaign(name):
    return get_object_or_404(Campaign.objects.select_related("dataset", "human_system"), name=name)


@staff_member_required
def campaign_list(request):
    campaigns_ = Campaign.objects.select_related("dataset", "human_system").annotate(n_hits=Count("hits"))
    return render(
        request,
        "assessment/campaign_list.html",
        {"campaigns": campaigns_, "datasets": Dataset.objects.order_by("name")},
    )


@staff_member_required
def campaign_create(request):
    dataset = Dataset.objects.filter(name=request.GET.get("dataset") or request.POST.get("dataset")).first()
    if dataset is None:
        return render(request, "assessment/campaign_form.html", {"datasets": Dataset.objects.order_by("name")})
    form = CampaignForm(request.POST or None, dataset=dataset)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = campaigns.create_campaign_by_names(**form.data_for_service())
        except campaigns.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request, f"Planned campaign {campaign.name}: {campaign.hits.count()} HITs (seed {campaign.seed})."
            )
            return redirect("da-campaign", name=campaign.name)
    return render(request, "assessment/campaign_form.html", {"form": form, "dataset": dataset})


@staff_member_required
def campaign_detail(request, name):
    campaign = _campaign(name)
    progress = services.progress(campaign)
    analysis = analyse(campaign) if progress["judgments"] else None
    context = {
        "campaign": campaign,
        "progress": progress,
        "analysis": analysis,
        "systems": campaign.systems.order_by("position", "name"),
        "entry_link": request.build_absolute_uri(services.campaign_entry_path(campaign)) + "?worker_id=",
        "assign_form": AssignForm(),
        "links": request.session.pop(f"da-links-{campaign.pk}", None),
        "qc_job": latest_job(f"da-campaign:{campaign.pk}", "da-qc"),
        "workload": campaigns.plan_workload(campaign) if campaign.source == Campaign.Source.PLANNED else None,
        "statuses": QCStatus,
    }
    if analysis is not None:
        order = {status: i for i, status in enumerate(QCStatus.values)}
        qc = analysis.qc.assign(order=analysis.qc["status"].map(order)).sort_values(["order", "p_value", "worker_id"])
        context.update(
            {
                "systems_table": analysis.systems.to_dict(orient="records"),
                "qc_rows": qc.head(QC_ROWS_SHOWN).to_dict(orient="records"),
                "qc_more": max(0, len(qc) - QC_ROWS_SHOWN),
                "qc_counts": [
                    (QCStatus(status).label, n) for status, n in analysis.parameters["n_workers_by_status"].items()
                ],
                "wins": analysis.wins,
                "scores_chart": charts.system_scores_chart(analysis.systems) if len(analysis.systems) else None,
                "win_chart": charts.win_matrix_chart(analysis.p_values, campaign.significance_threshold)
                if len(analysis.systems) > 1
                else None,
            }
        )
    return render(request, "assessment/campaign_detail.html", context)


@staff_member_required
@require_POST
def campaign_qc(request, name):
    campaign = _campaign(name)
    services.start_qc_job(campaign, request.user)
    messages.info(request, "Quality control is being recomputed for every worker.")
    return redirect("da-campaign", name=name)


@staff_member_required
@require_POST
def campaign_assign(request, name):
    campaign = _campaign(name)
    form = AssignForm(request.POST)
    links = []
    worker_ids = form.worker_ids() if form.is_valid() else []
    if not worker_ids:
        messages.error(request, "Give at least one worker id (one per line, or separated by commas).")
    for worker_id in worker_ids:
        try:
            worker = workers.worker_by_external_id(worker_id)
        except ValueError as exc:
            messages.error(request, f"{worker_id[:40]}: {exc}")
            continue
        assignment = services.assign(campaign, worker)
        if assignment is None:
            messages.warning(request, f"{worker_id}: no HIT left for this worker.")
            continue
        url = request.build_absolute_uri(services.assignment_path(assignment))
        links.append({"worker": worker.external_id, "hit": assignment.hit.number, "url": url})
    request.session[f"da-links-{campaign.pk}"] = links
    return redirect(reverse("da-campaign", args=[name]) + "#links")


@staff_member_required
def campaign_report(request, name):
    response = HttpResponse(json.dumps(analyse(_campaign(name)).report(), indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}-report.json"'
    return response


@staff_member_required
def campaign_captions_csv(request, name):
    captions = analyse(_campaign(name)).captions[PUBLIC_CAPTION_COLUMNS]
    response = HttpResponse(spreadsheet_csv.frame_to_csv(captions), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}-captions.csv"'
    return response


@staff_member_required
def campaign_judgments_csv(request, name):
    """Every judgment, in the da_import_judgments format, streamed."""
    return judgments_download.response(_campaign(name))


@staff_member_required
def judgments_import(request):
    """Import judgments collected elsewhere (or a campaign's own download): the file is checked whole first and
    written in one transaction; its problems are listed with file, line and field, and nothing is written."""
    form = JudgmentsImportForm(
        request.POST or None, request.FILES or None, initial={"campaign": request.GET.get("campaign", "")}
    )
    if request.method == "POST" and form.is_valid():
        name = form.cleaned_data["campaign"]
        upload = form.cleaned_data["file"]
        try:
            summary = csv_import.import_upload(name, upload, own_download=form.cleaned_data["own_download"])
        except uploads.UploadRefused as exc:
            form.add_error("file", f"{exc}; nothing was imported.")
        except FormatError as exc:
            # the form again for the corrected file, as it was filled in (a file field cannot be)
            again = JudgmentsImportForm(initial={"campaign": name, "own_download": form.cleaned_data["own_download"]})
            return _judgments_import_page(request, again, problems=exc.problems, filename=upload.name)
        else:
            messages.success(request, csv_import.summary_text(name, summary) + ".")
            return redirect("da-campaign", name=name)
    return _judgments_import_page(request, form)


def _judgments_import_page(request, form, *, problems=(), filename=""):
    context = {"form": form, "header": ",".join(csv_import.HEADER), "problems": problems, "filename": filename}
    return render(request, "assessment/judgments_import.html", context, status=400 if form.errors or problems else 200)


@staff_member_required
def replication_page(request):
    names = list(Campaign.objects.order_by("name").values_list("name", flat=True))
    a, b = request.GET.get("a"), request.GET.get("b")
    result = error = None
    if a and b:
        try:
            result = replication.correlate(analyse(_campaign(a)).systems, analyse(_campaign(b)).systems, names=(a, b))
        except replication.ReplicationError as exc:
            error = str(exc)
    return render(
        request, "assessment/replication.html", {"names": names, "a": a, "b": b, "result": result, "error": error}
    )


# --- Workers ----------------------------------------------------------------------------------------------


def _rate(request, assignment, token):
    from annotation_site.crowd.hooks import finish_path

    if assignment.released_at is not None:
        return render(
            request, "assessment/no_work.html", {"campaign": assignment.hit.campaign, "released": True}, status=410
        )
    finish_url = finish_path("da", assignment.pk)  # crowd work ends on the crowd's end page (code, redirect, submit)
    return rating_page(request, assignment, token, finish_url=finish_url or "")


def rating_page(request, assignment, token, *, finish_url="", item=None, address=""):
    """The rating page of an assignment holding its place: the GET view's answer, and the answer to a crowd
    participant's Start (``crowd_adapter``), which passes the current ``item`` it read with the HIT and campaign
    and the page's ``address``: the page puts it in the browser's address bar, so a reload is a GET of it."""
    state = services.state(assignment, item, lookup=item is None)
    if finish_url:
        state["completion_code"] = None
    return render(
        request,
        "assessment/rate.html",
        {
            "assignment": assignment,
            "campaign": assignment.hit.campaign,
            "state": state,
            "state_url": reverse("api-da-assignment", args=[token]),
            "submit_url": reverse("api-da-judgments", args=[token]),
            "finish_url": finish_url,
            "address": address,
        },
    )


@login_required
def rate_account(request, name):
    """A signed-in account's rating page. Opening it never takes a HIT slot (issue #11): it shows the account's
    open assignment if there is one, else a page with a Start button; taking a slot is that explicit POST."""
    campaign = get_object_or_404(Campaign, name=name)
    if request.method == "POST":
        assignment = services.assign(campaign, workers.worker_for_user(request.user))
        if assignment is None:
            return render(request, "assessment/no_work.html", {"campaign": campaign})
        return redirect("da-rate", name=campaign.name)
    worker = Worker.objects.filter(user=request.user).first()
    assignment = services.open_assignment(campaign, worker) if worker is not None else None
    if assignment is None:
        return render(request, "assessment/start.html", {"campaign": campaign})
    return _rate(request, assignment, services.assignment_token(assignment))


@frameable
def rate_token(request, token):
    """The rating page by the assignment's signed link; crowd platforms may frame it (MTurk's HIT iframe)."""
    assignment = services.assignment_from_token(token)
    if assignment is None:
        return link_problem(request)
    if services.owned_by_another_account(assignment, request.user):
        return redirect(f"{reverse('login')}?next={request.path}")
    return _rate(request, assignment, token)


def join(request, token):
    """The campaign's old entry link (``?worker_id=ID``): now the crowd entry of the campaign's default link study,
    capped like every entry link (places, and the HITs per participant quality control needs; docs/crowd.md)."""
    from annotation_site.crowd.hooks import default_entry_url

    campaign = services.campaign_from_entry_token(token)
    if campaign is None:
        return link_problem(request)
    return redirect(
        default_entry_url("da", campaign.pk, campaign.name, id_parameter="worker_id", query=request.GET.urlencode())
    )
