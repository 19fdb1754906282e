"""The REST API (DRF): one router for every app's viewsets, documented at /api/schema/ and /api/docs/."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from annotation_site.corpus.api import DatasetViewSet, VideoViewSet
from annotation_site.interchange.api import DatasetExportView, DatasetImportView
from annotation_site.jobs.api import JobViewSet

router = DefaultRouter()
router.register("datasets", DatasetViewSet, basename="dataset")
router.register("videos", VideoViewSet, basename="video")
router.register("jobs", JobViewSet, basename="job")

urlpatterns = [
    path("datasets/import/", DatasetImportView.as_view(), name="api-dataset-import"),
    path("datasets/<str:name>/export/", DatasetExportView.as_view(), name="api-dataset-export"),
    path("", include(router.urls)),
]
