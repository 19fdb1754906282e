"""REST endpoints of metrics_eval (staff only, like every researcher endpoint), thin over services/reports."""

from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status, viewsets
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation_site.corpus.models import Dataset
from annotation_site.safe_json import SafeJSONParser

from . import analysis, correlation, loaders, reports, services, text_metrics
from .models import Metric, MetricScore, Report


class MetricSerializer(serializers.ModelSerializer):
    n_scores = serializers.IntegerField(read_only=True)

    class Meta:
        model = Metric
        fields = ["name", "label", "source", "version", "parameters", "origin", "n_scores", "created_at", "updated_at"]


class MetricListView(generics.ListAPIView):
    """The metrics of a dataset, with the number of scored captions."""

    serializer_class = MetricSerializer
    pagination_class = None

    def get_queryset(self):
        dataset = get_object_or_404(Dataset, name=self.kwargs["name"])
        return loaders.metrics(dataset)


class MetricDetailView(generics.RetrieveDestroyAPIView):
    """One metric of a dataset (with the number of scored captions); DELETE removes it with all its scores
    (stored reports stay), e.g. a mistyped import."""

    serializer_class = MetricSerializer

    def get_object(self):
        dataset = get_object_or_404(Dataset, name=self.kwargs["name"])
        return get_object_or_404(
            Metric.objects.filter(dataset=dataset).annotate(n_scores=Count("scores")), name=self.kwargs["metric"]
        )

    def perform_destroy(self, instance):
        try:
            services.delete_metric(instance.dataset, instance.name)
        except services.UnknownMetric as exc:  # deleted meanwhile
            raise Http404(str(exc)) from None


class ScoreSerializer(serializers.ModelSerializer):
    metric = serializers.CharField(source="metric.name")
    video_id = serializers.CharField(source="caption.video.external_id")
    system = serializers.CharField(source="caption.system.name")

    class Meta:
        model = MetricScore
        fields = ["metric", "video_id", "system", "score"]


class ScoreListView(generics.ListAPIView):
    """Per-caption scores of a dataset (``?metric=NAME`` to filter), paginated."""

    serializer_class = ScoreSerializer

    @extend_schema(parameters=[OpenApiParameter("metric", str)])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        dataset = get_object_or_404(Dataset, name=self.kwargs["name"])
        queryset = (
            MetricScore.objects.filter(metric__dataset=dataset)
            .select_related("metric", "caption__video", "caption__system")
            .order_by("metric__name", "caption__video__position", "caption__system__position", "pk")
        )
        metric = self.request.query_params.get("metric")
        return queryset.filter(metric__name=metric) if metric else queryset


class ComputeSerializer(serializers.Serializer):
    metrics = serializers.ListField(
        child=serializers.ChoiceField(choices=list(text_metrics.TEXT_METRICS)), allow_empty=False
    )
    reference_sets = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class ComputeView(APIView):
    """Start computing text metrics for every caption of the dataset (a Celery job; poll /api/jobs/ID/)."""

    parser_classes = [SafeJSONParser]

    @extend_schema(
        request=ComputeSerializer,
        responses={202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT},
    )
    def post(self, request, name):
        dataset = get_object_or_404(Dataset, name=name)
        serializer = ComputeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            job = services.start_compute_job(
                dataset,
                serializer.validated_data["metrics"],
                reference_sets=serializer.validated_data["reference_sets"],
                user=request.user,
            )
        except services.ComputeRunning as exc:  # never two computations of one dataset at once
            return Response(
                {
                    "detail": str(exc),
                    "job": str(exc.job.pk),
                    "status": exc.job.status,
                    "url": f"/api/jobs/{exc.job.pk}/",
                },
                status=status.HTTP_409_CONFLICT,
            )
        except services.MetricError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {"job": str(job.pk), "status": job.status, "url": f"/api/jobs/{job.pk}/"}, status=status.HTTP_202_ACCEPTED
        )


class ImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="scores as .csv, .json or .jsonl (see docs/metrics.md)")
    replace = serializers.BooleanField(default=False)
    version = serializers.CharField(required=False, allow_blank=True, max_length=200)


class ImportView(APIView):
    """Import per-caption scores (validated completely, then written in one transaction)."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": ImportSerializer},
        responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request, name):
        dataset = get_object_or_404(Dataset, name=name)
        serializer = ImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        # a refused file or one with problems: 400, nothing imported (annotation_site.api_errors)
        result = services.import_score_upload(
            dataset,
            upload,
            replace=serializer.validated_data["replace"],
            version=serializer.validated_data.get("version") or None,
        )
        return Response({"dataset": dataset.name, "metrics": result.metrics}, status=status.HTTP_201_CREATED)


class PairsImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="pairs as .csv, .json or .jsonl: video_id, correct, foil")
    pair_set = serializers.CharField(max_length=100)
    replace = serializers.BooleanField(default=False)


class PairsImportView(APIView):
    """Import correct/foil caption pairs (names of the correct and the foil system per video)."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": PairsImportSerializer},
        responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request, name):
        dataset = get_object_or_404(Dataset, name=name)
        serializer = PairsImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        try:
            count = services.import_pairs_upload(
                dataset,
                upload,
                pair_set=serializer.validated_data["pair_set"],
                replace=serializer.validated_data["replace"],
            )
        except services.MetricError as exc:  # (a refused file or one with problems: 400, api_errors)
            return Response({"detail": str(exc), "problems": []}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {"pair_set": serializer.validated_data["pair_set"], "pairs": count}, status=status.HTTP_201_CREATED
        )


class CorrelateSerializer(serializers.Serializer):
    human = serializers.ChoiceField(choices=["factuality", "da", "pairs"], default="factuality")
    labels = serializers.CharField(required=False, allow_blank=True, help_text="factuality label set")
    campaign = serializers.CharField(required=False, allow_blank=True, help_text="DA campaign (human=da)")
    pair_set = serializers.CharField(required=False, allow_blank=True, help_text="pair set (human=pairs)")
    metrics = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    method = serializers.ChoiceField(
        choices=[""] + list(correlation.METHODS),
        default="",
        allow_blank=True,
        help_text="factuality and DA: default pearson; not for human=pairs (measured by pairwise ranking accuracy)",
    )
    level = serializers.ChoiceField(choices=list(correlation.LEVELS), default="segment")
    group_by = serializers.ChoiceField(
        choices=list(correlation.GROUPINGS), default="none", help_text="segment level only (none at system level)"
    )
    resamples = serializers.IntegerField(default=1000, min_value=10, max_value=100_000)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**63 - 1)
    confidence = serializers.FloatField(default=0.95)
    alpha = serializers.FloatField(default=0.05)
    test = serializers.ChoiceField(choices=[""] + list(analysis.TESTS), default="", allow_blank=True)
    include_human = serializers.BooleanField(
        default=False,
        help_text="include the captions of human systems (left out by default), scored "
        "leave-one-out against the other references",
    )


class CorrelateView(APIView):
    """Correlate the dataset's metrics with human judgments; answers the report in the contract shape
    ``{"method", "level", "metrics": {metric: {human level: {"r", "ci", "n"}}}, "report": id, ...}``."""

    parser_classes = [SafeJSONParser]

    @extend_schema(
        request=CorrelateSerializer,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request, name):
        dataset = get_object_or_404(Dataset, name=name)
        serializer = CorrelateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            report, created = reports.build_report(dataset, serializer.validated_data, request.user)
        except reports.REFUSALS as exc:  # 400 naming the field (api_errors' shape); any other error is a fault
            raise serializers.ValidationError({exc.field: [str(exc)]}) from None
        return Response(reports.contract(report), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class ReportSerializer(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name")
    kind = serializers.CharField(read_only=True, help_text="factuality, da or pairs")

    class Meta:
        model = Report
        fields = [
            "id",
            "kind",
            "dataset",
            "campaign",
            "parameters",
            "snapshot",
            "versions",
            "result",
            "data_hash",
            "created_at",
        ]


class ReportListSerializer(ReportSerializer):
    class Meta(ReportSerializer.Meta):
        fields = ["id", "kind", "dataset", "campaign", "parameters", "data_hash", "created_at"]


class ReportViewSet(viewsets.ReadOnlyModelViewSet):
    """Stored correlation reports (``?dataset=NAME`` to filter); each records its data snapshot, parameters and
    package versions."""

    queryset = Report.objects.select_related("dataset").order_by("-created_at", "-id")

    def get_serializer_class(self):
        return ReportListSerializer if self.action == "list" else ReportSerializer

    def get_queryset(self):
        dataset = self.request.query_params.get("dataset")
        return self.queryset.filter(dataset__name=dataset) if dataset else self.queryset
