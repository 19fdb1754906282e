"""Pages of the factuality app (mounted at /factuality/ by annotation_site/urls.py). Fixed words never share a
level with a project name, so every name stays reachable."""

from django.urls import include, path

from . import staff_views, views

urlpatterns = [
    path("", views.home, name="factuality-home"),
    path("new-project/", staff_views.project_create, name="factuality-project-create"),
    path("assignments/<int:pk>/", views.annotate, name="factuality-annotate"),
    path("a/<str:token>/", views.annotate_token, name="factuality-annotate-token"),
    path("a/<str:token>/instructions/", views.instructions_token, name="factuality-annotate-token-instructions"),
    path("projects/<str:name>/", staff_views.project_detail, name="factuality-project"),
    path("projects/<str:name>/work/", views.work, name="factuality-work"),
    path("projects/<str:name>/start/", views.start, name="factuality-start"),
    path("projects/<str:name>/instructions/", views.instructions, name="factuality-instructions"),
    path("projects/<str:name>/settings/", staff_views.project_settings, name="factuality-settings"),
    path("projects/<str:name>/status/", staff_views.project_status, name="factuality-status"),
    path("projects/<str:name>/invite/", staff_views.project_invite, name="factuality-invite"),
    path("projects/<str:name>/invitations/<str:username>/", staff_views.project_reissue, name="factuality-reissue"),
    path("projects/<str:name>/aggregate/", staff_views.project_aggregate, name="factuality-aggregate"),
    path("projects/<str:name>/report/", staff_views.project_report, name="factuality-report"),
    path("projects/<str:name>/charts/<str:chart>.svg", staff_views.project_chart, name="factuality-chart"),
    path("projects/<str:name>/export/raw/", staff_views.export_raw, name="factuality-export-raw"),
    path("projects/<str:name>/import/raw/", staff_views.import_raw, name="factuality-import-raw"),
    path("", include("annotation_site.annotators.urls")),
]
