"""Researchers' pages of crowd work: studies (progress, participants, actions), per-participant links, the MTurk
batch file, the payment preview (every decision and the money before anything is sent), the ledger download
and the worker page. Thin: services do the work."""

from datetime import timedelta
from decimal import Decimal
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation_site import spreadsheet_csv, uploads
from annotation_site.jobs import services as jobs
from annotation_site.strict_numbers import amount, form_integer

from . import adapters, admission, mturk_formats, mturk_import, payments, sending, studies
from .config import MissingCredential
from .models import BonusScope, Dispatch, LedgerEntry, Participant, Participation, Policy, Provider, Study
from .providers.base import AdmissionRefused
from .providers.prolific_client import ProlificError, TransientError


@staff_member_required
def study_list(request):
    rows = Study.objects.annotate(n=Count("participations")).order_by("-created_at")
    return render(
        request,
        "crowd/study_list.html",
        {
            "studies": rows,
            "protocols": sorted(adapters.registered()),
            "providers": [p for p in Provider.choices if p[0] != "none"],
        },
    )


@staff_member_required
@require_POST
def study_create(request):
    """Create a study for a campaign or project (the form on the studies page)."""
    data = request.POST
    try:
        reward = amount(data.get("reward") or "0", what="Reward")
        study = studies.create_study(
            data.get("protocol", ""),
            data.get("target", "").strip(),
            name=data.get("name", "").strip(),
            provider=data.get("provider", ""),
            reward=reward,
            completion_code=data.get("completion_code", "").strip(),
            hits_per_participant=form_integer(
                data.get("hits_per_participant") or "1",
                low=1,
                high=studies.MAX_HITS_PER_PARTICIPANT,
                what="HITs per participant",
            ),
        )
    except (studies.StudyError, ValidationError, ValueError) as exc:
        messages.error(request, "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
        return redirect("crowd-studies")
    messages.success(request, f"Study {study.name} created as a draft: check it, then publish it.")
    if warning := studies.qc_warning(study):
        messages.warning(request, warning)
    return redirect("crowd-study", name=study.name)


@staff_member_required
@require_POST
def mturk_file(request, name):
    """Upload an MTurk results CSV: import it, or get it back with Approve / Reject filled from the ledger."""
    study = get_object_or_404(Study, name=name)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose the batch results CSV first.")
        return redirect("crowd-study", name=name)
    approving = request.POST.get("action") == "approve-reject"
    try:
        text = uploads.upload_text(upload)
    except uploads.UploadRefused as exc:
        messages.error(request, f"{exc}; {mturk_formats.refusal_outcome(request.POST.get('action'))}.")
        return redirect("crowd-study", name=name)
    try:
        if approving:
            written = mturk_import.approve_reject_file(study, text, filename=upload.name)
            response = HttpResponse(written, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{name}-approve-reject.csv"'
            return response
        result = mturk_import.import_results(study, text, filename=upload.name)
    except mturk_formats.FormatError as exc:
        heading = "No approve / reject file was written" if approving else ""
        return render(
            request,
            "crowd/import_problems.html",
            {"study": study, "problems": exc.problems, "heading": heading},
            status=400,
        )
    messages.success(
        request, f"{result['rows']} assignments read: {result['created']} new, {result['unchanged']} already imported."
    )
    for warning in result["warnings"]:
        messages.warning(request, warning)
    return redirect("crowd-study", name=name)


@staff_member_required
def study_detail(request, name):
    study = get_object_or_404(Study, name=name)
    participations = (
        Participation.objects.filter(study=study).select_related("participant").order_by("-created_at")[:300]
    )
    return render(
        request,
        "crowd/study_detail.html",
        {
            "study": study,
            "progress": studies.progress(study),
            "participations": participations,
            "entry_url": studies.entry_url(study, request),
            "ledger": sending.summary(study),
            "dispatches": Dispatch.objects.filter(study=study)
            .exclude(state=Dispatch.State.DONE)
            .annotate(rows=Count("entries")),
            "links": request.session.pop(f"crowd-links-{study.pk}", None),
            "links_warning": admission.links_warning(study, how_to_publish='press "Publish" above'),
            "qc_warning": studies.qc_warning(study),
            "job": jobs.latest_job(f"crowd-study:{study.pk}", "crowd-payments"),
        },
    )


ACTIONS = ("publish", "pause", "close", "sync", "release-idle", "apply-payments", "add-places", "hits-per-participant")


@staff_member_required
@require_POST
def study_action(request, name):
    study = get_object_or_404(Study, name=name)
    action = request.POST.get("action")
    try:
        if action == "publish":
            studies.publish(study)
            messages.success(request, "The study is published.")
        elif action == "pause":
            studies.pause(study)
            messages.success(request, "The study is paused: nobody new is admitted.")
        elif action == "close":
            studies.close(study)
            messages.success(request, "The study is closed.")
        elif action == "hits-per-participant":
            hits = form_integer(
                request.POST.get("hits_per_participant"),
                low=1,
                high=studies.MAX_HITS_PER_PARTICIPANT,
                what="HITs per participant",
            )
            studies.set_hits_per_participant(study, hits)
            messages.success(request, f"Each participant may now do {hits} HIT{'s' if hits != 1 else ''}.")
        elif action == "add-places":
            places = form_integer(request.POST.get("places"), low=1, high=studies.MAX_PLACES_ADDED, what="Places")
            studies.add_places(study, places)
            messages.success(request, "Places added.")
        elif action == "sync":
            outcome = admission.sync_submissions(study)
            messages.success(request, f"Submissions read from the platform: {outcome or 'none'}.")
        elif action == "release-idle":
            messages.success(request, f"{admission.release_idle()} idle task(s) released.")
        elif action == "retry-failed":
            counts = sending.plan_failed_again(study)
            messages.success(
                request,
                f"{counts['planned']} failed ledger row(s) planned again (send the recorded payments to send them); "
                f"{counts['confirmed']} found done on the platform; {counts['unchecked']} could not be checked and "
                "stay failed (try again later).",
            )
        elif action == "apply-payments":
            start_payments_job(study, request.user)
            messages.info(request, "Decisions and bonuses are being sent; this page shows the progress.")
        else:
            raise Http404("unknown action")
    except (studies.StudyError, ProlificError, TransientError, AdmissionRefused, ValueError, MissingCredential) as exc:
        messages.error(request, str(exc))
    return redirect("crowd-study", name=name)


def start_payments_job(study, user=None):
    """A Job that follows the Celery task sending the study's planned rows (sent once the transaction commits)."""
    from django.db import transaction

    from .tasks import apply_payments

    job = jobs.create_job(
        "crowd-payments",
        scope=f"crowd-study:{study.pk}",
        total=1,
        message="waiting for a worker",
        user=user if user is not None and user.is_authenticated else None,
    )
    transaction.on_commit(lambda: apply_payments.delay(study.pk, str(job.pk)))
    return job


@staff_member_required
@require_POST
def study_links(request, name):
    study = get_object_or_404(Study, name=name)
    ids = [i.strip() for i in request.POST.get("ids", "").replace(",", "\n").splitlines() if i.strip()]
    try:
        days = form_integer(
            request.POST.get("days") or "7", low=1, high=admission.MAX_LINK_DAYS, what="Valid for (days)"
        )
        given = request.POST.get("max_hits", "").strip()  # empty: the study's HITs per participant
        max_hits = form_integer(given, low=1, high=admission.MAX_LINK_HITS, what="HITs per link") if given else None
        made = admission.create_participant_links(
            study, ids, expires_at=timezone.now() + timedelta(days=days), max_hits=max_hits
        )
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("crowd-study", name=name)
    request.session[f"crowd-links-{study.pk}"] = [
        {"id": i, "url": studies.participant_link_url(t, request)} for i, t in made
    ]
    return redirect("crowd-study", name=name)  # which says, above the links, if they let nobody in yet


@staff_member_required
def mturk_batch_csv(request, name):
    study = get_object_or_404(Study, name=name)
    text, _ = studies.mturk_batch(study)
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}-batch-input.csv"'
    return response


def _said_recorded(request, recorded, target):
    """The messages after a recording (``payments.Recorded``), and the sending started when asked."""
    if recorded.written or not recorded.already:
        messages.success(request, f"{recorded.sentence()}; nothing was sent yet.")
    else:  # a second click, or another person's: the first one recorded them
        messages.info(request, f"{recorded.sentence()}.")
    if recorded.warning():  # sent meanwhile, or bonuses sent before: what was asked did not happen
        messages.warning(request, f"{recorded.warning()}.")
    if request.POST.get("send") == "yes":
        for s in payments.target_studies(target):
            start_payments_job(s, request.user)
        messages.info(request, "Sending started.")


@staff_member_required
def payments_preview(request, protocol, target):
    """Every planned decision and the money, before anything is recorded or sent."""
    try:
        adapter, resolved = adapters.resolve(protocol, target)
    except adapters.AdapterError as exc:
        raise Http404(str(exc)) from None
    study = payments.provider_study(resolved)
    data = request.POST if request.method == "POST" else request.GET
    chosen, problems = payments.run_settings(
        study, data, labels={"policy": "Policy", "bonus_scope": "Bonus scope", "bonus_amount": "Bonus"}
    )
    if problems and request.method == "POST":
        messages.error(request, f"{'; '.join(problems.values())}; nothing was recorded.")
        return redirect(request.path)
    for problem in problems.values():
        messages.error(request, f"{problem}; the preview below does not use it.")
    if request.method == "GET" and (conflict := payments.mixed_settings(resolved)):
        messages.warning(request, conflict)
    policy, scope, bonus = chosen.policy, chosen.bonus_scope, chosen.bonus_amount
    if request.method == "POST":
        if request.POST.get("confirm") != "yes":
            messages.error(request, "Tick the confirmation box to record these decisions.")
        else:
            try:  # decided again and checked against what was shown under the ledger's lock, then recorded
                decisions, recorded = payments.decide_and_record(
                    adapter, resolved, chosen, study=study, user=request.user, seen=request.POST.get("seen")
                )
            except payments.MixedSettings as exc:
                messages.error(request, str(exc))
            except payments.DecisionsChanged:
                messages.error(
                    request,
                    "The decisions changed since this page was shown (new QC results or submissions); nothing "
                    "was recorded. Check them again below.",
                )
            else:
                _said_recorded(request, recorded, resolved)
        return redirect(f"{request.path}?{urlencode({'policy': policy, 'bonus_scope': scope, 'bonus_amount': bonus})}")
    decisions = payments.run_decisions(adapter, resolved, chosen, study=study)
    seen = payments.decisions_digest(decisions)
    return render(
        request,
        "crowd/payments.html",
        {
            "target": resolved,
            "decisions": decisions,
            "totals": payments.totals(decisions, study.reward if study else Decimal("0")),
            "policy": policy,
            "policies": Policy.choices,
            "bonus_scope": scope,
            "scopes": BonusScope.choices,
            "bonus_amount": bonus,
            "max_bonus": payments.max_bonus(),
            "study": study,
            "seen": seen,
            "currency": study.currency if study else "",
        },
    )


@staff_member_required
def ledger_csv(request, name):
    study = get_object_or_404(Study, name=name)
    response = HttpResponse(
        spreadsheet_csv.rows_to_text(LEDGER_COLUMNS, ledger_rows(study)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{name}-ledger.csv"'
    return response


LEDGER_COLUMNS = [
    "worker_id",
    "hit_id",
    "assignment",
    "submission_id",
    "kind",
    "action",
    "amount",
    "currency",
    "state",
    "policy",
    "qc_status",
    "qc_test",
    "qc_p_value",
    "qc_n_pairs",
    "qc_threshold",
    "reason",
    "error",
    "completion_code",
    "created_at",
    "sent_at",
    "settled_at",
]


def ledger_rows(study):
    from . import links

    for e in LedgerEntry.objects.filter(study=study).select_related("participation__participant").order_by("pk"):
        code = (
            links.completion_code(study.pk, e.participation.work_key, e.participation.participant.worker_key)
            if e.participation_id
            else ""
        )
        yield [
            e.worker_id,
            e.hit_id,
            e.assignment_key,
            e.submission_id,
            e.kind,
            e.action,
            "" if e.amount is None else f"{e.amount:.2f}",
            e.currency,
            e.state,
            e.policy,
            e.qc_status,
            e.qc_test,
            e.qc_p_value,
            e.qc_n_pairs,
            e.qc_threshold,
            e.reason,
            e.error,
            code,
            e.created_at.isoformat(),
            e.sent_at.isoformat() if e.sent_at else "",
            e.settled_at.isoformat() if e.settled_at else "",
        ]


@staff_member_required
def worker_page(request, pk):
    """One participant: their HITs in every study, the QC each came with, and every ledger row."""
    participant = get_object_or_404(Participant, pk=pk)
    participations = list(
        Participation.objects.filter(participant=participant).select_related("study").order_by("created_at")
    )
    qc = {}
    for study in {p.study for p in participations}:
        try:
            adapter, target = adapters.study_target(study)
        except adapters.AdapterError:
            continue
        for record in adapter.assignments(target):
            if record.worker_id == participant.worker_key:
                qc[(study.pk, record.key)] = record.qc
    rows = [{"participation": p, "qc": qc.get((p.study_id, p.work_key))} for p in participations]
    ledger = LedgerEntry.objects.filter(participation__participant=participant).order_by("created_at")
    paid = sum((e.amount for e in ledger if e.kind == "bonus" and e.state == "confirmed"), Decimal("0"))
    return render(
        request, "crowd/worker.html", {"participant": participant, "rows": rows, "ledger": ledger, "bonus_paid": paid}
    )
