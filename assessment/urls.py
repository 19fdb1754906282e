"""Pages of Direct Assessment (mounted at /da/ by annotation_site/urls.py)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.campaign_list, name="da-campaigns"),
    path("campaigns/new/", views.campaign_create, name="da-campaign-create"),
    path("import/", views.judgments_import, name="da-judgments-import"),
    path("campaigns/<str:name>/", views.campaign_detail, name="da-campaign"),
    path("campaigns/<str:name>/qc/", views.campaign_qc, name="da-campaign-qc"),
    path("campaigns/<str:name>/assign/", views.campaign_assign, name="da-campaign-assign"),
    path("campaigns/<str:name>/report.json", views.campaign_report, name="da-campaign-report"),
    path("campaigns/<str:name>/captions.csv", views.campaign_captions_csv, name="da-campaign-captions"),
    path("campaigns/<str:name>/judgments.csv", views.campaign_judgments_csv, name="da-campaign-judgments"),
    path("campaigns/<str:name>/rate/", views.rate_account, name="da-rate"),
    path("replication/", views.replication_page, name="da-replication"),
    path("a/<str:token>/", views.rate_token, name="da-rate-token"),
    path("join/<str:token>/", views.join, name="da-join"),
]
