from rest_framework import serializers, viewsets

from .models import Job


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    finished = serializers.BooleanField(read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "status",
            "done",
            "total",
            "percent",
            "finished",
            "message",
            "result",
            "error",
            "created_at",
            "updated_at",
        ]


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    """Progress of background jobs (pages poll this while Celery works)."""

    serializer_class = JobSerializer
    queryset = Job.objects.all()
