"""REST endpoints of Direct Assessment (mounted at /api/da/).

Researchers (staff; session or token authentication): campaigns (list, create + plan, detail with progress),
results (the da_report document), caption scores, QC (stored results; POST recomputes as a Job), assignments
(hand a HIT to a worker and get the signed link), judgments (the CSV download, and importing one), replication
between two campaigns.
Workers (anyone holding an assignment's signed token; an account's assignment also needs that account): the
current state (progress and next item) and idempotent submission of a score.
"""

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from . import campaigns, csv_import, judgments_download, replication, services, workers
from .analysis import analyse
from .models import Campaign, QCResult, QCTest
from .results import PUBLIC_CAPTION_COLUMNS


class CampaignSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    systems = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    human_system = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = Campaign
        fields = [
            "name",
            "description",
            "dataset",
            "systems",
            "human_system",
            "source",
            "statement",
            "hit_size",
            "pairs_per_hit",
            "repeats_per_hit",
            "min_control_distance",
            "workers_per_hit",
            "seed",
            "qc_test",
            "qc_threshold",
            "qc_min_pairs",
            "significance_threshold",
            "watch_fraction",
            "watch_max_seconds",
            "created_at",
            "planned_at",
        ]


class CampaignCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    dataset = serializers.CharField(help_text="Dataset name.")
    systems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="System names (default: every non-human system of the dataset).",
    )
    human_system = serializers.CharField(required=False, help_text="A human system of the dataset.")
    reference_set = serializers.CharField(required=False, help_text="Or: a reference set made into a human system.")
    hit_size = serializers.IntegerField(
        required=False,
        min_value=campaigns.HIT_SIZE_RANGE[0],
        max_value=campaigns.HIT_SIZE_RANGE[1],
        help_text="Default: suggested for the dataset (100 when it is large enough).",
    )
    pairs_per_hit = serializers.IntegerField(required=False, min_value=1, help_text="Default: suggested.")
    repeats_per_hit = serializers.IntegerField(required=False, min_value=0, help_text="Default: suggested.")
    min_control_distance = serializers.IntegerField(required=False, min_value=2)
    workers_per_hit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=campaigns.MAX_WORKERS_PER_HIT,
        help_text="Default: suggested (at least 3, a multiple of the HITs a worker needs to reach the QC minimum).",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**63 - 1)
    qc_test = serializers.ChoiceField(choices=QCTest.values, default=QCTest.WILCOXON)
    qc_threshold = serializers.FloatField(default=0.05)
    qc_min_pairs = serializers.IntegerField(default=10, min_value=1, max_value=campaigns.MAX_QC_MIN_PAIRS)
    watch_fraction = serializers.FloatField(
        required=False, min_value=0, max_value=1, help_text="Share of a clip that must really play (default 0.9)."
    )
    watch_max_seconds = serializers.FloatField(
        required=False, min_value=0, help_text="Cap of the required playback, seconds (default 30)."
    )

    def validate(self, data):
        if bool(data.get("human_system")) == bool(data.get("reference_set")):
            raise serializers.ValidationError("give either human_system or reference_set")
        return data


def campaign_error_body(exc):
    """The 400 body of a refused campaign: the reason, and the values that would work when known."""
    body = {"detail": str(exc)}
    if exc.suggestions:
        body["suggestions"] = exc.suggestions
    if exc.suggested:
        body["suggested"] = exc.suggested
    return body


class AssignSerializer(serializers.Serializer):
    worker_id = serializers.CharField(max_length=200)


class CampaignViewSet(viewsets.GenericViewSet):
    """Direct Assessment campaigns (by name)."""

    serializer_class = CampaignSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return Campaign.objects.select_related("dataset", "human_system").prefetch_related("systems")

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(CampaignSerializer(page, many=True).data)

    @extend_schema(request=CampaignCreateSerializer, responses={201: CampaignSerializer})
    def create(self, request):
        serializer = CampaignCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            campaign = campaigns.create_campaign_by_names(**serializer.validated_data)
        except campaigns.CampaignError as exc:
            return Response(campaign_error_body(exc), status=status.HTTP_400_BAD_REQUEST)
        return Response(CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def retrieve(self, request, name=None):
        campaign = self.get_object()
        return Response({**CampaignSerializer(campaign).data, "progress": services.progress(campaign)})

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True)
    def results(self, request, name=None):
        """The report: parameters, worker QC, system scores (by z, descending), significant wins."""
        return Response(analyse(self.get_object()).report())

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True)
    def captions(self, request, name=None):
        """Per-caption scores (passing workers only)."""
        captions = analyse(self.get_object()).captions[PUBLIC_CAPTION_COLUMNS]
        return Response(captions.to_dict(orient="records"))

    @extend_schema(methods=["GET"], responses={200: OpenApiTypes.OBJECT})
    @extend_schema(methods=["POST"], request=None, responses={202: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get", "post"])
    def qc(self, request, name=None):
        """GET: the stored QC results, with each worker's ``status`` (passed, failed, insufficient_data,
        in_progress); POST: recompute them for every worker (a Job; poll /api/jobs/ID/)."""
        campaign = self.get_object()
        if request.method == "POST":
            job = services.start_qc_job(campaign, request.user)
            return Response(
                {"job": str(job.pk), "status_url": reverse("job-detail", args=[job.pk])},
                status=status.HTTP_202_ACCEPTED,
            )
        rows = QCResult.objects.filter(campaign=campaign).select_related("worker").order_by("worker__external_id")
        return Response(
            [
                {
                    "worker_id": r.worker.external_id,
                    "test": r.test,
                    "threshold": r.threshold,
                    "min_pairs": r.min_pairs,
                    "n_pairs": r.n_pairs,
                    "statistic": r.statistic,
                    "p_value": r.p_value,
                    "passed": r.passed,
                    "status": r.status,
                    "n_repeats": r.n_repeats,
                    "repeats_p_value": r.repeats_p_value,
                    "computed_at": r.computed_at,
                }
                for r in rows
            ]
        )

    @extend_schema(request=AssignSerializer, responses={201: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"])
    def assignments(self, request, name=None):
        """Hand the worker (created on first use) a HIT; answers the signed link of the assignment."""
        campaign = self.get_object()
        serializer = AssignSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            worker = workers.worker_by_external_id(serializer.validated_data["worker_id"])
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        assignment = services.assign(campaign, worker)
        if assignment is None:
            return Response({"detail": "no HIT left for this worker"}, status=status.HTTP_409_CONFLICT)
        return Response(
            {
                "worker_id": worker.external_id,
                "hit": assignment.hit.number,
                "token": services.assignment_token(assignment),
                "url": request.build_absolute_uri(services.assignment_path(assignment)),
            },
            status=status.HTTP_201_CREATED,
        )


class JudgmentsImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text=f"A CSV with the header line {','.join(csv_import.HEADER)}.")
    own_download = serializers.BooleanField(default=False, help_text=csv_import.OWN_DOWNLOAD_HELP)


class JudgmentsView(APIView):
    """A campaign's judgments as a CSV file: GET downloads them (the da_import_judgments format); POST imports a
    file into the campaign (created, with a dataset of the same name, when it does not exist): checked whole
    first, written in one transaction, 400 with every problem's file, line and field otherwise."""

    parser_classes = [MultiPartParser]

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.BINARY})
    def get(self, request, name):
        return judgments_download.response(get_object_or_404(Campaign, name=name))

    @extend_schema(request={"multipart/form-data": JudgmentsImportSerializer}, responses={201: OpenApiTypes.OBJECT})
    def post(self, request, name):
        serializer = JudgmentsImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        # a refused file or one with problems: 400, nothing imported (annotation_site.api_errors)
        summary = csv_import.import_upload(
            name, serializer.validated_data["file"], own_download=serializer.validated_data["own_download"]
        )
        return Response({**summary, "campaign": name}, status=status.HTTP_201_CREATED)


class ReplicationView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("a", str), OpenApiParameter("b", str)], responses={200: OpenApiTypes.OBJECT}
    )
    def get(self, request):
        """Pearson correlation of the system scores (raw and z) of campaigns ``a`` and ``b``."""
        a = get_object_or_404(Campaign.objects.select_related("human_system"), name=request.query_params.get("a"))
        b = get_object_or_404(Campaign.objects.select_related("human_system"), name=request.query_params.get("b"))
        try:
            result = replication.correlate(analyse(a).systems, analyse(b).systems, names=(a.name, b.name))
        except replication.ReplicationError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"a": a.name, "b": b.name, **result})


# --- Workers ------------------------------------------------------------------------------------------------


class JudgmentSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    score = serializers.JSONField(help_text="An integer from 0 to 100.")
    client_uuid = serializers.UUIDField(help_text="Made by the client once per item: a retry stores nothing new.")
    elapsed_ms = serializers.FloatField(required=False, allow_null=True, min_value=0)
    played = serializers.BooleanField(default=False)
    watched_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0)


class WorkerAPIView(APIView):
    permission_classes = [AllowAny]
    authentication_classes = [SessionAuthentication]

    def assignment(self, request, token):
        assignment = services.assignment_from_token(token)
        if assignment is None:
            raise NotFound("unknown or invalid assignment link")
        if services.owned_by_another_account(assignment, request.user):
            raise PermissionDenied("this assignment belongs to another account")
        return assignment


class AssignmentStateView(WorkerAPIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request, token):
        """Progress and the next item of the assignment (null when the HIT is complete)."""
        assignment = self.assignment(request, token)
        return Response(services.state(assignment))


class JudgmentSubmitView(WorkerAPIView):
    @extend_schema(request=JudgmentSubmitSerializer, responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT})
    def post(self, request, token):
        """Store the score of the current item. 201: stored; 200: this client_uuid was stored before (the stored
        judgment is returned); 400: invalid; 403: the item is not in this assignment; 409: out of order or
        already rated. Every answer carries the assignment's current state."""
        assignment = self.assignment(request, token)
        serializer = JudgmentSubmitSerializer(data=request.data)
        if not serializer.is_valid():
            return Response({"error": "invalid", "detail": serializer.errors}, status=status.HTTP_400_BAD_REQUEST)
        data = serializer.validated_data
        try:
            submission = services.submit(
                assignment,
                item_id=data["item"],
                score=data["score"],
                client_uuid=data["client_uuid"],
                elapsed_ms=data.get("elapsed_ms"),
                played=data["played"],
                watched_seconds=data.get("watched_seconds"),
            )
        except services.SubmissionError as exc:
            body = {"error": exc.code, "detail": str(exc), "state": services.state(assignment)}
            if exc.judgment is not None:
                body["judgment"] = judgment_data(exc.judgment)
            return Response(body, status=exc.status)
        body = {
            "created": submission.created,
            "judgment": judgment_data(submission.judgment),
            "state": services.state(assignment, submission.next_item, lookup=False),
        }
        return Response(body, status=status.HTTP_201_CREATED if submission.created else status.HTTP_200_OK)


def judgment_data(judgment):
    return {
        "id": judgment.pk,
        "item": judgment.item_id,
        "score": judgment.score,
        "client_uuid": str(judgment.client_uuid) if judgment.client_uuid else None,
        "played": judgment.played,
    }
