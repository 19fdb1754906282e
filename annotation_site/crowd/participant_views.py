"""Pages participants see: entry (Prolific, MTurk HIT page, entry links, per-participant links), consent and
instructions, practice items with feedback, "Start" (taking a slot), the end page, and clear refusals.

These pages may be framed by a crowd platform (``CROWD_FRAME_ORIGINS``: MTurk shows HITs in an iframe), where
the browser does not send our cookies. So they carry no session: every address holds a signed token (the study,
or the participant's participation), and their POSTs are exempt from CSRF checks because the token in the
address is the credential an attacker would need.
"""

from functools import wraps

from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotation_site.strict_numbers import ascii_int, form_integer

from . import adapters, admission, config, links, rows, studies
from .models import Participation, PracticeItem
from .providers import provider_for
from .providers.base import AdmissionRefused

REFUSALS = {
    "invalid": ("This link does not work", 400),
    "unverified": ("We could not confirm who you are", 403),
    "expired": ("This link has expired", 410),
    "closed": ("This study is closed", 410),
    "full": ("This study is full", 409),
    "done": ("You have already done this", 409),
    "unavailable": ("Please try again in a minute", 503),
}


def frameable(view):
    """Allow the configured crowd origins (and only them) to frame the page."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        origins = " ".join(config.setting("CROWD_FRAME_ORIGINS") or [])
        response["Content-Security-Policy"] = f"frame-ancestors 'self' {origins}".strip()
        return response

    return xframe_options_exempt(wrapped)


def refused(request, exc, study=None):
    title, status = REFUSALS.get(exc.kind, REFUSALS["invalid"])
    return render(
        request,
        "crowd/refused.html",
        {"title": title, "message": str(exc), "kind": exc.kind, "study": study},
        status=status,
    )


def link_problem(request, message="this link is damaged or no longer valid", *, expired=False, status=404):
    """The page of a signed link that does not work (damaged, unknown, expired) for every protocol's pages
    reached by one: what happened (``message``, a sentence without its full stop) and what to do next, with no
    address that needs an account."""
    return render(request, "crowd/link_problem.html", {"message": message, "expired": expired}, status=status)


def _study(token):
    """The study of an entry token, knowing whether it has practice items (one query)."""
    study_id = links.study_id_from_entry_token(token)
    study = rows.study(study_id) if study_id else None
    if study is None:
        raise Http404("unknown study link")
    return study


def _participation(token):
    """The participation of a participant token with its study and participant, knowing whether the study has
    practice items (one query)."""
    pk = links.participation_id_from_token(token)
    participation = rows.participation(pk) if pk else None
    if participation is None:
        raise Http404("unknown participant link")
    return participation


def _has_practice(study):
    known = getattr(study, "has_practice", None)
    return PracticeItem.objects.filter(study=study).exists() if known is None else known


def _home(participation):
    return redirect("crowd-participant", token=links.participation_token(participation))


@frameable
def entry(request, token):
    """The study's address on the platform (Prolific study URL, MTurk ExternalQuestion, entry link)."""
    study = _study(token)
    try:
        participation = admission.admit(study, request.GET)
    except AdmissionRefused as exc:
        if exc.kind == "preview":
            return preview(request, study)
        return refused(request, exc, study)
    return _home_page(request, participation)


@frameable
def participant_link(request, token):
    """A per-participant link: it works for one participant, until it expires."""
    link = admission.link_for_token(token)
    if link is None:
        return refused(
            request, AdmissionRefused("invalid", "This link is not valid. Please ask the researcher for a new one.")
        )
    try:
        participant = admission.participant_for_link(link)
        participation = admission.admit(link.study, {}, participant=participant)
    except AdmissionRefused as exc:
        return refused(request, exc, link.study)
    return _home_page(request, participation)


def preview(request, study):
    """MTurk's preview (ASSIGNMENT_ID_NOT_AVAILABLE): the task as it will look, every input disabled."""
    adapter, target = adapters.study_target(study)
    unit = request.GET.get("unit") or ""
    content = adapter.preview(target, unit)
    description = adapter.describe(target)
    return render(request, "crowd/preview.html", {"study": study, "content": content, "scale": description.scale})


@frameable
def participant_home(request, token):
    return _home_page(request, _participation(token), token)


def _home_page(request, participation, token=None):
    """The participant's page: consent, practice, Start or Continue (entry links show it at once, no redirect)."""
    token = token or links.participation_token(participation)
    study = participation.study
    admission.touch(participation)
    context = {"study": study, "participation": participation, "token": token}
    if participation.status == Participation.Status.RELEASED:
        return refused(
            request,
            AdmissionRefused("closed", "This task was released (returned, timed out or left idle too long)."),
            study,
        )
    if participation.status == Participation.Status.COMPLETED:
        return redirect("crowd-finish", token=token)
    if study.consent_text and participation.consented_at is None:
        return render(request, "crowd/consent.html", context)
    practice = list(PracticeItem.objects.filter(study=study)) if _has_practice(study) else []
    if practice and participation.practice_done_at is None:
        return practice_page(request, participation, practice, token)
    if participation.status == Participation.Status.WORKING:
        adapter, target = adapters.study_target(study)
        work = adapter.work(target, participation.work_key)
        if work is not None and work.completed:
            return redirect("crowd-finish", token=token)
        context["work"] = work
    return render(request, "crowd/start.html", context)


@csrf_exempt
@require_POST
@frameable
def consent(request, token):
    participation = _participation(token)
    if request.POST.get("consent") != "yes":
        return render(
            request,
            "crowd/refused.html",
            {
                "title": "You did not consent",
                "kind": "no-consent",
                "study": participation.study,
                "message": "You chose not to take part. You can close this page; on Prolific, please return the study.",
            },
            status=200,
        )
    Participation.objects.filter(pk=participation.pk, consented_at__isnull=True).update(consented_at=timezone.now())
    return _home(participation)


def practice_page(request, participation, items, token, *, answered=None):
    done = (ascii_int(request.GET.get("step")) or 0) if answered is None else answered["step"]
    index = min(done, len(items) - 1)
    return render(
        request,
        "crowd/practice.html",
        {
            "study": participation.study,
            "token": token,
            "item": items[index],
            "number": index + 1,
            "total": len(items),
            "answered": answered,
        },
    )


@csrf_exempt
@require_POST
@frameable
def practice(request, token):
    """Check a practice answer and show the feedback; never stored as a judgment, never scored."""
    participation = _participation(token)
    items = list(PracticeItem.objects.filter(study=participation.study))
    try:
        item = next(i for i in items if i.pk == ascii_int(request.POST.get("item")))
        value = form_integer(request.POST.get("value"), low=-32768, high=32767, what="The answer")
    except (StopIteration, ValueError):
        return _home(participation)
    if request.POST.get("next") == "1":
        step = items.index(item) + 1
        if step >= len(items):
            Participation.objects.filter(pk=participation.pk, practice_done_at__isnull=True).update(
                practice_done_at=timezone.now()
            )
            return _home(participation)
        return HttpResponseRedirect(f"{request.path.rsplit('practice/', 1)[0]}?step={step}")
    right = item.accept_min <= value <= item.accept_max
    return practice_page(
        request, participation, items, token, answered={"step": items.index(item), "value": value, "right": right}
    )


@csrf_exempt
@require_POST
@frameable
def start(request, token):
    """Take a slot: the protocol hands out a HIT and answers with its page (or the participant is redirected to
    it). A reload of the answer cannot take a second slot: the page replaces the browser's address with its own
    (a GET), and a POST sent again finds the participant working and answers the same HIT."""
    participation = _participation(token)
    study = participation.study
    if study.consent_text and participation.consented_at is None:
        return _home(participation)
    if participation.practice_done_at is None and _has_practice(study):
        return _home(participation)
    try:
        participation, work = admission.take_slot(participation)
    except AdmissionRefused as exc:
        return refused(request, exc, study)
    if work is None:
        return refused(request, AdmissionRefused("full", "There is no task left for you in this study."), study)
    if work.completed:
        return redirect("crowd-finish", token=token)
    page = admission.work_page(request, participation, work, finish_url=reverse("crowd-finish", args=[token]))
    return page if page is not None else redirect(work.url)


@frameable
def finish(request, token):
    """The end page: the completion code, the way back to the platform (it goes there by itself at once, with a
    link in case it does not), or the MTurk submit form."""
    participation = _participation(token)
    ending = admission.finish(participation)
    if ending is None:
        return _home(participation)
    more = admission.hits_left(participation) if ending.mode == "code" else 0  # say so, or they stop at one
    context = {"study": participation.study, "ending": ending, "participation": participation, "more_hits": more}
    # why: only where quality control judges over several HITs (a factuality study has none to give)
    context["checked_over_hits"] = bool(more) and studies.qc_over_several_hits(participation.study)
    return render(request, "crowd/end.html", context)


def provider_name(study):
    return provider_for(study).name
