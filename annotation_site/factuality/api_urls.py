"""REST endpoints of this app (mounted at /api/factuality/ by annotation_site/urls.py)."""

from django.urls import path

from . import api

urlpatterns = [
    path("projects/", api.ProjectListView.as_view(), name="api-factuality-projects"),
    path("projects/<str:name>/", api.ProjectDetailView.as_view(), name="api-factuality-project"),
    path("projects/<str:name>/annotators/", api.InviteView.as_view(), name="api-factuality-invite"),
    path(
        "projects/<str:name>/annotators/<str:username>/invitation/",
        api.ReissueView.as_view(),
        name="api-factuality-reissue",
    ),
    path("projects/<str:name>/aggregate/", api.AggregateView.as_view(), name="api-factuality-aggregate"),
    path("projects/<str:name>/agreement/", api.AgreementView.as_view(), name="api-factuality-agreement"),
    path("projects/<str:name>/labels/", api.LabelsView.as_view(), name="api-factuality-labels"),
    path("projects/<str:name>/next/", api.NextVideoView.as_view(), name="api-factuality-next"),
    path("assignments/<int:pk>/draft/", api.DraftView.as_view(), name="api-factuality-draft"),
    path("assignments/<int:pk>/submit/", api.SubmitView.as_view(), name="api-factuality-submit"),
    path("a/<str:token>/draft/", api.TokenDraftView.as_view(), name="api-factuality-token-draft"),
    path("a/<str:token>/submit/", api.TokenSubmitView.as_view(), name="api-factuality-token-submit"),
]
