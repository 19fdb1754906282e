"""REST endpoints for dataset import (upload) and export (download), in both formats."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation_site.corpus.models import Dataset
from annotation_site.factuality.exports import attachment
from annotation_site.factuality.models import Project

from . import formats
from .services import (
    DEFAULT_LABEL_SET,
    PROJECT_FACTVC_FILENAME,
    ImportRefused,
    InvalidImportName,
    NothingToExport,
    default_label_set,
    export_bundle,
    import_upload,
    project_factvc_text,
)


class DatasetImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="factvc: a zip of the folder or factuality_annotation.json; jsonl: the file")
    format = serializers.ChoiceField(choices=formats.FORMATS)
    name = serializers.CharField(max_length=100)
    replace = serializers.BooleanField(default=False)
    force_delete_judgments = serializers.BooleanField(
        default=False,
        help_text="With replace: also when people's judgments are on the dataset (they are deleted; "
        "without it such a replace is refused with 409 and what would be lost).",
    )
    labels = serializers.CharField(default=DEFAULT_LABEL_SET, max_length=100)
    youtube = serializers.BooleanField(default=True)


class DatasetImportView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": DatasetImportSerializer},
        responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT},
    )
    def post(self, request):
        serializer = DatasetImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            result = import_upload(serializer.validated_data)  # a file with problems: 400 (api_errors)
        except InvalidImportName as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except ImportRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(
            {
                "dataset": result.dataset.name,
                "counts": result.counts,
                "label_set": result.label_set.name if result.label_set else None,
                "warnings": result.warnings,
            },
            status=status.HTTP_201_CREATED,
        )


class DatasetExportView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("format", enum=list(formats.FORMATS)), OpenApiParameter("labels", str)],
        responses={200: bytes},
    )
    def get(self, request, name):
        dataset = get_object_or_404(Dataset, name=name)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in formats.FORMATS:
            return Response({"detail": f"format must be one of {', '.join(formats.FORMATS)}"}, status=400)
        labels = request.query_params.get("labels")
        label_set = get_object_or_404(dataset.label_sets, name=labels) if labels else default_label_set(dataset)
        if fmt == "factvc" and label_set is None:
            return Response({"detail": "this dataset has no factuality labels to export as factvc"}, status=400)
        try:
            text = formats.render(fmt, export_bundle(dataset, label_set=label_set))
        except formats.Unwritable as exc:
            return Response({"detail": str(exc)}, status=400)
        response = HttpResponse(text, content_type=formats.content_type(fmt))
        response["Content-Disposition"] = f'attachment; filename="{formats.filename(fmt, dataset.name)}"'
        return response


class ProjectFactvcExportView(APIView):
    """Mounted at /api/factuality/projects/NAME/export/ (by annotation_site/urls.py: the formats sit above
    factuality, so factuality's own URL modules cannot reach this view)."""

    @extend_schema(responses={200: bytes})
    def get(self, request, name):
        project = get_object_or_404(Project.objects.select_related("dataset", "label_set"), name=name)
        try:
            text = project_factvc_text(project)
        except NothingToExport as exc:
            return Response({"detail": str(exc)}, status=404)
        except formats.Unwritable as exc:
            return Response({"detail": str(exc)}, status=400)
        return attachment(text, PROJECT_FACTVC_FILENAME, "application/json")
