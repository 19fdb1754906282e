from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from annotation_site.datasets.views import project_export_factvc
from annotation_site.interchange.api import ProjectFactvcExportView


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("annotation_site.api_urls")),
    # the FactVC download of a project is written by interchange (above factuality), so it is mounted here
    path("api/factuality/projects/<str:name>/export/", ProjectFactvcExportView.as_view(), name="api-factuality-export"),
    path("api/factuality/", include("annotation_site.factuality.api_urls")),
    path("api/da/", include("assessment.api_urls")),
    path("api/tasks/", include("annotation_site.judgment_tasks.api_urls")),
    path("api/metrics/", include("metrics_eval.api_urls")),
    path("factuality/projects/<str:name>/export/factvc/", project_export_factvc, name="factuality-export-factvc"),
    path("factuality/", include("annotation_site.factuality.urls")),
    path("da/", include("assessment.urls")),
    path("tasks/", include("annotation_site.judgment_tasks.urls")),
    path("metrics/", include("metrics_eval.urls")),
    path("crowd/", include("annotation_site.crowd.urls")),
    path("api/crowd/", include("annotation_site.crowd.api_urls")),
    path("healthz", healthz, name="healthz"),
    path("", include("annotation_site.datasets.urls")),
]
