"""REST endpoints of this app (mounted at /api/metrics/ by annotation_site/urls.py)."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("reports", api.ReportViewSet, basename="metrics-report-api")

urlpatterns = [
    path("datasets/<str:name>/metrics/", api.MetricListView.as_view(), name="api-metrics-list"),
    path("datasets/<str:name>/metrics/<str:metric>/", api.MetricDetailView.as_view(), name="api-metrics-detail"),
    path("datasets/<str:name>/scores/", api.ScoreListView.as_view(), name="api-metrics-scores"),
    path("datasets/<str:name>/compute/", api.ComputeView.as_view(), name="api-metrics-compute"),
    path("datasets/<str:name>/import/", api.ImportView.as_view(), name="api-metrics-import"),
    path("datasets/<str:name>/pairs/", api.PairsImportView.as_view(), name="api-metrics-pairs"),
    path("datasets/<str:name>/correlate/", api.CorrelateView.as_view(), name="api-metrics-correlate"),
    path("", include(router.urls)),
]
