"""REST endpoints of crowd work (staff; session or token authentication), documented at /api/docs/.

``studies/`` (GET list, POST create), ``studies/NAME/`` (GET detail with progress and the ledger's states),
``studies/NAME/ACTION/`` (POST: publish, pause, close, places, sync, release-idle, links, apply-payments,
mturk-batch (GET), mturk-results, approve-reject, ledger (GET), export), ``payments/`` (GET the contract document;
POST records it), ``dispatches/ID/resolve/`` (POST), ``codes/verify/`` (POST).
"""

from datetime import timedelta

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation_site import uploads
from annotation_site.strict_numbers import amount, form_integer

from . import adapters, admission, exports, links, mturk_formats, mturk_import, payments, sending, studies
from .config import MissingCredential
from .models import BonusScope, Dispatch, Participation, Policy, Study
from .providers.base import AdmissionRefused
from .providers.prolific_client import ProlificError, TransientError


class AmountField(serializers.DecimalField):
    """Money in and out as the model's decimal string; read strictly (``strict_numbers.amount``): no NaN,
    infinity, exponent, sign or digits of other scripts, at most two decimals."""

    def __init__(self, **kwargs):
        super().__init__(max_digits=8, decimal_places=2, **kwargs)

    def to_internal_value(self, data):
        try:
            return amount(data, what=self.field_name)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class StudySerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text="draft, published, paused or closed")
    reward = AmountField(required=False, help_text="Per HIT, in the currency (e.g. 1.50).")
    bonus_amount = AmountField(required=False, help_text="Bonus per HIT under the bonus scope (e.g. 0.50).")

    class Meta:
        model = Study
        fields = [
            "name",
            "provider",
            "protocol",
            "target_name",
            "status",
            "external_id",
            "title",
            "description",
            "reward",
            "currency",
            "estimated_minutes",
            "places",
            "places_taken",
            "hits_per_participant",
            "closes_at",
            "id_parameter",
            "idle_minutes",
            "consent_text",
            "instructions",
            "end_mode",
            "completion_url",
            "completion_code",
            "screened_out_code",
            "policy",
            "bonus_scope",
            "bonus_amount",
            "rejection_category",
            "rejection_message",
            "created_at",
        ]
        read_only_fields = ["protocol", "target_name", "status", "external_id", "places_taken", "created_at"]


class StudyCreateSerializer(StudySerializer):
    target = serializers.CharField(help_text="Campaign or project name.")
    protocol = serializers.CharField(required=False, allow_blank=True, help_text="da, factuality, ... (optional)")

    class Meta(StudySerializer.Meta):
        fields = StudySerializer.Meta.fields + ["target"]
        read_only_fields = ["target_name", "status", "external_id", "places_taken", "created_at"]


def _detail(study, request=None):
    return {
        **StudySerializer(study).data,
        "entry_url": studies.entry_url(study, request),
        "progress": studies.progress(study),
        "ledger": sending.summary(study),
        "qc_warning": studies.qc_warning(study),
    }


class StudyListView(APIView):
    @extend_schema(responses={200: StudySerializer(many=True)})
    def get(self, request):
        return Response(StudySerializer(Study.objects.all(), many=True).data)

    @extend_schema(request=StudyCreateSerializer, responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        serializer = StudyCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        target, protocol = data.pop("target"), data.pop("protocol", "")
        name, provider = data.pop("name"), data.pop("provider")
        try:
            study = studies.create_study(protocol, target, name=name, provider=provider, **data)
        except studies.StudyError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_detail(study, request), status=status.HTTP_201_CREATED)


class StudyDetailView(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request, name):
        return Response(_detail(get_object_or_404(Study, name=name), request))


class StudyActionView(APIView):
    """POST an action on a study (GET for mturk-batch and ledger)."""

    @extend_schema(operation_id="crowd_study_read", responses={200: OpenApiTypes.OBJECT})
    def get(self, request, name, action):
        study = get_object_or_404(Study, name=name)
        if action == "mturk-batch":
            text, xml = studies.mturk_batch(study)
            return Response({"batch_input_csv": text, "external_question": xml})
        if action == "ledger":
            from .staff_views import LEDGER_COLUMNS, ledger_rows

            return Response([dict(zip(LEDGER_COLUMNS, row)) for row in ledger_rows(study)])
        return Response({"detail": f"GET {action} is not an operation"}, status=status.HTTP_404_NOT_FOUND)

    @extend_schema(operation_id="crowd_study_act", request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request, name, action):
        study = get_object_or_404(Study, name=name)
        data = request.data  # an object (SafeJSONParser) or a form
        try:
            if action == "publish":
                return Response(_detail(studies.publish(study), request))
            if action == "pause":
                return Response(_detail(studies.pause(study), request))
            if action == "close":
                return Response(_detail(studies.close(study), request))
            if action == "places":
                extra = form_integer(data.get("add"), low=1, high=studies.MAX_PLACES_ADDED, what="add")
                return Response(_detail(studies.add_places(study, extra), request))
            if action == "hits-per-participant":
                hits = form_integer(
                    data.get("hits_per_participant"),
                    low=1,
                    high=studies.MAX_HITS_PER_PARTICIPANT,
                    what="hits_per_participant",
                )
                return Response(_detail(studies.set_hits_per_participant(study, hits), request))
            if action == "sync":
                return Response({"outcomes": admission.sync_submissions(study)})
            if action == "release-idle":
                return Response({"released": admission.release_idle()})
            if action == "links":
                days = form_integer(data.get("days", 7), low=1, high=admission.MAX_LINK_DAYS, what="days")
                max_hits = (  # by default the study's hits_per_participant
                    None
                    if data.get("max_hits") is None
                    else form_integer(data["max_hits"], low=1, high=admission.MAX_LINK_HITS, what="max_hits")
                )
                made = admission.create_participant_links(
                    study,
                    _participant_ids(data),
                    max_hits=max_hits,
                    expires_at=timezone.now() + timedelta(days=days),
                )
                warning = admission.links_warning(
                    study, how_to_publish=f"POST /api/crowd/studies/{study.name}/publish/"
                )
                return Response(
                    {
                        "links": [
                            {"participant_id": i, "url": studies.participant_link_url(t, request)} for i, t in made
                        ],
                        "warning": warning,
                        "qc_warning": studies.qc_warning(study),
                    },
                    status=status.HTTP_201_CREATED,
                )
            if action == "block":
                ids = _participant_ids(data)
                return Response({"blocked": admission.block(study, ids, str(data.get("reason") or "blocked"))})
            if action == "retry-failed":
                return Response(sending.plan_failed_again(study))
            if action == "apply-payments":
                from .staff_views import start_payments_job

                job = start_payments_job(study, request.user)
                return Response(
                    {"job": str(job.pk), "status_url": reverse("job-detail", args=[job.pk])},
                    status=status.HTTP_202_ACCEPTED,
                )
            if action in ("mturk-results", "approve-reject"):
                upload = request.FILES.get("file")
                if upload is None:
                    return Response(
                        {"detail": "send the results CSV as the multipart field 'file'"},
                        status=status.HTTP_400_BAD_REQUEST,
                    )
                try:
                    text = uploads.upload_text(upload)
                except uploads.UploadRefused as exc:
                    return Response(
                        exc.as_json(mturk_formats.refusal_outcome(action)), status=status.HTTP_400_BAD_REQUEST
                    )
                if action == "approve-reject":
                    return Response({"csv": mturk_import.approve_reject_file(study, text, filename=upload.name)})
                return Response(mturk_import.import_results(study, text, filename=upload.name))
            if action == "export":
                return Response(exports.export_ledger(study), status=status.HTTP_201_CREATED)
        except mturk_formats.FormatError as exc:
            return Response(
                {"detail": str(exc).splitlines()[0], "problems": exc.problems}, status=status.HTTP_400_BAD_REQUEST
            )
        except (
            studies.StudyError,
            ProlificError,
            AdmissionRefused,
            ValueError,
            exports.ExportError,
            MissingCredential,
        ) as exc:  # a platform's credential missing: said, as the platform's own refusals are
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except TransientError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response({"detail": f"unknown action {action!r}"}, status=status.HTTP_404_NOT_FOUND)


def _participant_ids(data):
    """``participant_ids``: a list of ids (text, or whole numbers as some panels' ids are); else ValueError."""
    ids = data.get("participant_ids")
    if ids is None:
        return []
    if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, (str, int)) for i in ids):
        raise ValueError('participant_ids must be a list of ids, e.g. ["5f1a...", "p-17"]')
    return [str(i) for i in ids]


def _flag(data, name, default=None):
    """A yes/no value of a request (JSON true / false, or the words DRF's BooleanField takes: "false", "0",
    "no", ...), ``default`` when it is absent; anything else is refused (400). ``bool("false")`` is True: a
    person's "not paid" must never be read as "paid"."""
    if name not in data and default is not None:
        return default
    try:
        return serializers.BooleanField().to_internal_value(data.get(name))
    except serializers.ValidationError:
        raise serializers.ValidationError({name: f"{name} must be true or false"}) from None


class PaymentsView(APIView):
    params = [
        OpenApiParameter("campaign", str, description="Campaign or project name"),
        OpenApiParameter("protocol", str, required=False),
        OpenApiParameter("policy", str, enum=Policy.values, required=False, description="default: the study's"),
        OpenApiParameter(
            "bonus_scope", str, enum=BonusScope.values, required=False, description="default: the study's"
        ),
        OpenApiParameter("bonus_amount", str, required=False, description="default: the study's"),
    ]

    def _plan(self, data):
        adapter, target, study, chosen = self._settings(data)
        decisions = payments.run_decisions(adapter, target, chosen, study=study)
        return target, chosen.policy, decisions

    def _settings(self, data):
        name = data.get("campaign") or ""
        try:
            adapter, target = (
                adapters.resolve(data["protocol"], name) if data.get("protocol") else adapters.find_target(name)
            )
        except adapters.AdapterError as exc:
            raise serializers.ValidationError({"campaign": str(exc)}) from None
        study = payments.provider_study(target)
        chosen, problems = payments.run_settings(study, data)  # the study's own settings unless given
        if problems:
            raise serializers.ValidationError(problems)
        return adapter, target, study, chosen

    @extend_schema(parameters=params, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        """The decisions a policy makes (the crowd_payments --dry-run document); nothing is recorded."""
        target, policy, decisions = self._plan(request.query_params)
        return Response(payments.document(target, decisions, policy))

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        """Record the decisions as planned ledger rows (``send: true`` also starts sending them). ``recorded``:
        the rows this call wrote; ``already_recorded``: the rows the ledger held already as decided. A retry, or
        a second call at the same moment, is answered like the first with ``recorded`` 0: nothing is stored
        twice. ``not_changed``: the assignment keys whose rows a payment run sent meanwhile with their earlier
        decision, which this call asked to change (or remove) and did not; ``kept``: those whose planned bonus was
        sent once before (refused, then planned again) and keeps its amount where this call asked for another."""
        send = _flag(request.data, "send", default=False)  # refused before anything is recorded
        adapter, target, study, chosen = self._settings(request.data)
        # decided under the ledger's lock: a call that waited for another records from the QC of now
        try:
            decisions, recorded = payments.decide_and_record(adapter, target, chosen, study=study, user=request.user)
        except payments.MixedSettings as exc:
            raise serializers.ValidationError({"campaign": str(exc)}) from None
        policy = chosen.policy
        body = payments.document(target, decisions, policy)
        # a retry (a double click, a dropped connection) is answered alike: nothing recorded, all already there
        body["recorded"], body["already_recorded"] = recorded.written, recorded.already
        # assignments whose rows were sent meanwhile with their earlier decision: not changed as asked
        body["not_changed"] = list(recorded.not_changed)
        body["kept"] = list(recorded.kept)  # bonuses sent once before: their amount is never changed
        if send:
            from .staff_views import start_payments_job

            body["jobs"] = [str(start_payments_job(s, request.user).pk) for s in payments.target_studies(target)]
        return Response(body, status=status.HTTP_201_CREATED)


class ResolveDispatchView(APIView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request, pk):
        """A person checked an in-doubt bonus batch on the platform: ``{"paid": true | false}``."""
        dispatch = get_object_or_404(Dispatch, pk=pk)
        if "paid" not in request.data:
            return Response(
                {"detail": 'say whether the platform shows it paid: {"paid": true|false}'},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            paid = _flag(request.data, "paid")
            dispatch = sending.resolve_dispatch(dispatch, paid=paid, user=request.user)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response({"dispatch": dispatch.pk, "state": dispatch.state})


class VerifyCodeView(APIView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request):
        """Is ``code`` the completion code of ``participant_id``'s work in ``study``? Answers the HIT it is for."""
        study = get_object_or_404(Study, name=request.data.get("study", ""))
        code = str(request.data.get("code", ""))
        pid = str(request.data.get("participant_id", ""))
        for p in (
            Participation.objects.filter(study=study, participant__platform_id=pid)
            .exclude(work_key="")
            .select_related("participant")
        ):
            if links.verify_code(study.pk, p.work_key, p.participant.worker_key, code):
                return Response({"valid": True, "hit": p.unit_label, "status": p.status})
        return Response({"valid": False})
