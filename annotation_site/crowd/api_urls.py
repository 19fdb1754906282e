"""REST endpoints of crowd work (mounted at /api/crowd/)."""

from django.urls import path

from . import api

urlpatterns = [
    path("studies/", api.StudyListView.as_view(), name="api-crowd-studies"),
    path("studies/<str:name>/", api.StudyDetailView.as_view(), name="api-crowd-study"),
    path("studies/<str:name>/<str:action>/", api.StudyActionView.as_view(), name="api-crowd-study-action"),
    path("payments/", api.PaymentsView.as_view(), name="api-crowd-payments"),
    path("dispatches/<int:pk>/resolve/", api.ResolveDispatchView.as_view(), name="api-crowd-resolve"),
    path("codes/verify/", api.VerifyCodeView.as_view(), name="api-crowd-verify-code"),
]
