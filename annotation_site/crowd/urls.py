"""Pages of crowd work (mounted at /crowd/ by annotation_site/urls.py)."""

from django.urls import path

from . import participant_views as p
from . import staff_views as s
from . import webhook_views

urlpatterns = [
    # participants
    path("s/<str:token>/", p.entry, name="crowd-entry"),
    path("p/<str:token>/", p.participant_link, name="crowd-participant-link"),
    path("w/<str:token>/", p.participant_home, name="crowd-participant"),
    path("w/<str:token>/consent/", p.consent, name="crowd-consent"),
    path("w/<str:token>/practice/", p.practice, name="crowd-practice"),
    path("w/<str:token>/start/", p.start, name="crowd-start"),
    path("w/<str:token>/finish/", p.finish, name="crowd-finish"),
    path("webhooks/prolific/", webhook_views.prolific_webhook, name="crowd-webhook-prolific"),
    # researchers
    path("", s.study_list, name="crowd-studies"),
    path("studies/new/", s.study_create, name="crowd-study-create"),
    path("studies/<str:name>/", s.study_detail, name="crowd-study"),
    path("studies/<str:name>/mturk/", s.mturk_file, name="crowd-mturk-file"),
    path("studies/<str:name>/action/", s.study_action, name="crowd-study-action"),
    path("studies/<str:name>/links/", s.study_links, name="crowd-study-links"),
    path("studies/<str:name>/mturk-batch.csv", s.mturk_batch_csv, name="crowd-mturk-batch"),
    path("payments/<str:protocol>/<str:target>/", s.payments_preview, name="crowd-payments"),
    path("ledger/<str:name>.csv", s.ledger_csv, name="crowd-ledger-csv"),
    path("workers/<int:pk>/", s.worker_page, name="crowd-worker"),
]
