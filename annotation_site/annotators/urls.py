"""Pages of the annotators app (mounted under /factuality/ by annotation_site/factuality/urls.py)."""

from django.urls import path

from . import views

urlpatterns = [
    path("invitations/<str:uidb64>/<str:token>/", views.accept_invitation, name="annotator-invitation"),
]
