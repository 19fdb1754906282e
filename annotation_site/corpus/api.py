"""REST endpoints of the corpus: datasets (by name) and their videos."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import ProtectedError, RestrictedError
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser

from annotation_site.api_errors import Conflict
from annotation_site.safe_json import SafeJSONParser

from . import services
from .models import Dataset, Video
from .protection import HumanWorkAtRisk, refuse_if_human_work


class DatasetSerializer(serializers.ModelSerializer):
    n_videos = serializers.IntegerField(read_only=True)
    n_systems = serializers.IntegerField(read_only=True)
    systems = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")

    class Meta:
        model = Dataset
        fields = ["name", "description", "source_format", "created_at", "n_videos", "n_systems", "systems"]


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = DatasetSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return services.datasets_with_counts().prefetch_related("systems")


class VideoSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", queryset=Dataset.objects.all())
    file = serializers.FileField(write_only=True, required=False)
    playback_url = serializers.CharField(read_only=True)
    thumbnail_url = serializers.SerializerMethodField()
    kind = serializers.CharField(read_only=True)

    class Meta:
        model = Video
        fields = [
            "id",
            "dataset",
            "external_id",
            "url",
            "file",
            "kind",
            "playback_url",
            "thumbnail_url",
            "duration",
            "width",
            "height",
            "status",
            "processing_error",
        ]
        read_only_fields = ["duration", "width", "height", "status", "processing_error"]
        validators = []  # uniqueness is checked by services.add_video, with a clearer message

    def get_thumbnail_url(self, video) -> str | None:
        return video.thumbnail.url if video.thumbnail else None


def _still_used(video, exc):
    """Why a video cannot be deleted on its own: the rows that must go first, by kind and with their owner where
    they have one (a judgment task's items: ``Item.video`` is RESTRICT, since an item shows its video). It was a
    500 (an unhandled RestrictedError), the human-work check passed or forced."""
    rows = list(exc.restricted_objects if isinstance(exc, RestrictedError) else exc.protected_objects)
    owners = sorted({str(getattr(row, "task", "")) for row in rows if getattr(row, "task", None) is not None})
    kind = (rows[0]._meta.verbose_name if len(rows) == 1 else rows[0]._meta.verbose_name_plural) if rows else "rows"
    if owners:
        first = f"of judgment task{'s' if len(owners) != 1 else ''} {', '.join(owners)}: replace the task's items, or "
        first += "delete the task, first"
    else:
        first = "that must be deleted first"
    return f"video {video.external_id!r} is shown by {len(rows)} {kind} {first}; nothing was deleted"


class VideoViewSet(mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):
    """Videos; filter with ``?dataset=NAME``. POST a file (multipart) or a ``url`` to add one."""

    serializer_class = VideoSerializer
    parser_classes = [MultiPartParser, FormParser, SafeJSONParser]

    def get_queryset(self):
        queryset = Video.objects.select_related("dataset").order_by("dataset__name", "position", "external_id")
        dataset = self.request.query_params.get("dataset")
        return queryset.filter(dataset__name=dataset) if dataset else queryset

    def perform_destroy(self, instance):
        """Refused (409, with what would be lost) while people's judgments are on the video's captions, unless
        ``?force_delete_judgments=true``."""
        force = self.request.query_params.get("force_delete_judgments", "").lower() in ("1", "true", "yes")
        try:
            refuse_if_human_work(
                f"deleting video {instance.external_id!r}",
                videos=[instance],
                force=force,
                force_hint="?force_delete_judgments=true",
            )
        except HumanWorkAtRisk as exc:
            raise Conflict(str(exc)) from None
        try:
            with transaction.atomic():
                instance.delete()
        except (RestrictedError, ProtectedError) as exc:  # a judgment task's items show the video (RESTRICT)
            raise Conflict(_still_used(instance, exc)) from None

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = services.add_video(
                data["dataset"], data["external_id"], file=data.get("file"), url=data.get("url", "")
            )
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages) from None
