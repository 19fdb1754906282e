from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    # Fixed words never share a level with a dataset name or video id, so any name or id stays reachable.
    path("import/", views.import_dataset, name="dataset-import"),
    path("datasets/<str:name>/", views.dataset_detail, name="dataset-detail"),
    path("datasets/<str:name>/export/<str:fmt>/", views.export_dataset, name="dataset-export"),
    path("datasets/<str:name>/add-video/", views.add_video, name="video-add"),
    path("datasets/<str:name>/process-videos/", views.process_videos, name="dataset-process-videos"),
    # path: video ids may contain "/"
    path("datasets/<str:name>/videos/<path:external_id>/", views.video_detail, name="video-detail"),
]
