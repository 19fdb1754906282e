from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("datasets/import/", views.import_dataset, name="dataset-import"),
    path("datasets/<str:name>/", views.dataset_detail, name="dataset-detail"),
    path("datasets/<str:name>/export/<str:fmt>/", views.export_dataset, name="dataset-export"),
    path("datasets/<str:name>/videos/add/", views.add_video, name="video-add"),
    path("datasets/<str:name>/videos/<str:external_id>/", views.video_detail, name="video-detail"),
]
