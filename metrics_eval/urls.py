"""Pages of this app (mounted at /metrics/ by annotation_site/urls.py)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="metrics-index"),
    path("datasets/<str:name>/", views.dataset_report, name="metrics-dataset"),
    path("datasets/<str:name>/compute/", views.compute, name="metrics-compute"),
    path("datasets/<str:name>/import/", views.import_scores, name="metrics-import"),
    path("datasets/<str:name>/pairs/", views.import_pairs, name="metrics-pairs-import"),
    path("datasets/<str:name>/metrics/<str:metric>/delete/", views.delete_metric, name="metrics-delete"),
    path("campaigns/<str:name>/", views.campaign_report, name="metrics-campaign"),
    path("reports/<int:pk>/", views.report_detail, name="metrics-report"),
    path("reports/<int:pk>/table.csv", views.report_csv, name="metrics-report-csv"),
    path("reports/<int:pk>/report.json", views.report_json, name="metrics-report-json"),
    path("reports/<int:pk>/figures/<str:figure>.<str:fmt>", views.report_figure, name="metrics-report-figure"),
]
