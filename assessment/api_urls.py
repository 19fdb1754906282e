"""REST endpoints of Direct Assessment (mounted at /api/da/ by annotation_site/urls.py)."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("campaigns", api.CampaignViewSet, basename="api-da-campaign")

urlpatterns = [
    path("replication/", api.ReplicationView.as_view(), name="api-da-replication"),
    path("campaigns/<str:name>/judgments.csv", api.JudgmentsView.as_view(), name="api-da-campaign-judgments"),
    path("assignments/<str:token>/", api.AssignmentStateView.as_view(), name="api-da-assignment"),
    path("assignments/<str:token>/judgments/", api.JudgmentSubmitView.as_view(), name="api-da-judgments"),
    path("", include(router.urls)),
]
