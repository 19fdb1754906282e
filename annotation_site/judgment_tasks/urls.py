"""Pages of the judgment tasks (mounted at /tasks/ by annotation_site/urls.py). Task names live under ``t/``
and participant links under ``p/``, so no name can shadow a fixed word."""

from django.urls import path

from . import staff_views, views

urlpatterns = [
    path("", views.home, name="tasks-home"),
    path("new/", staff_views.task_create, name="tasks-create"),
    path("assignments/<int:pk>/", views.annotate, name="tasks-annotate"),
    path("t/<str:name>/", staff_views.task_detail, name="tasks-detail"),
    path("t/<str:name>/settings/", staff_views.task_settings, name="tasks-settings"),
    path("t/<str:name>/invite/", staff_views.task_invite, name="tasks-invite"),
    path("t/<str:name>/participants/", staff_views.task_participant, name="tasks-participant-link"),
    path("t/<str:name>/status/", staff_views.task_status, name="tasks-status"),
    path("t/<str:name>/import/<str:what>/", staff_views.task_import, name="tasks-import"),
    path("t/<str:name>/report/", staff_views.task_report, name="tasks-report"),
    path("t/<str:name>/charts/<str:chart>.<str:fmt>", staff_views.task_chart, name="tasks-chart"),
    path("t/<str:name>/download/<str:what>", staff_views.task_download, name="tasks-download"),
    path("t/<str:name>/work/", views.work, name="tasks-work"),
    path("t/<str:name>/start/", views.start, name="tasks-start"),
    path("t/<str:name>/instructions/", views.instructions, name="tasks-instructions"),
    path("p/<str:token>/", views.participant_home, name="tasks-participant"),
    path("p/<str:token>/next/", views.participant_next, name="tasks-participant-next"),
    path("p/<str:token>/done/", views.participant_done, name="tasks-participant-done"),
    path("p/<str:token>/items/<int:pk>/", views.participant_item, name="tasks-participant-item"),
]
