"""REST endpoints of the judgment tasks (mounted at /api/tasks/ by annotation_site/urls.py)."""

from django.urls import path

from . import api

urlpatterns = [
    path("", api.TaskListView.as_view(), name="api-tasks"),
    path("presets/", api.PresetListView.as_view(), name="api-tasks-presets"),
    path("t/<str:name>/", api.TaskDetailView.as_view(), name="api-tasks-detail"),
    path("t/<str:name>/annotators/", api.InviteView.as_view(), name="api-tasks-invite"),
    path("t/<str:name>/participants/", api.ParticipantView.as_view(), name="api-tasks-participants"),
    path("t/<str:name>/items/", api.ItemsView.as_view(), name="api-tasks-items"),
    path("t/<str:name>/model-answers/", api.ModelAnswersView.as_view(), name="api-tasks-model-answers"),
    path("t/<str:name>/report/", api.ReportView.as_view(), name="api-tasks-report"),
    path("t/<str:name>/labels/", api.LabelsView.as_view(), name="api-tasks-labels"),
    path("t/<str:name>/answers/", api.AnswersView.as_view(), name="api-tasks-answers"),
    path("t/<str:name>/next/", api.NextItemView.as_view(), name="api-tasks-next"),
    path("assignments/<int:pk>/draft/", api.DraftView.as_view(), name="api-tasks-draft"),
    path("assignments/<int:pk>/submit/", api.SubmitView.as_view(), name="api-tasks-submit"),
]
