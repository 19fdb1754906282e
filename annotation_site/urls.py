from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("annotation_site.api_urls")),
    path("api/factuality/", include("annotation_site.factuality.api_urls")),
    path("api/da/", include("assessment.api_urls")),
    path("api/metrics/", include("metrics_eval.api_urls")),
    path("factuality/", include("annotation_site.factuality.urls")),
    path("da/", include("assessment.urls")),
    path("metrics/", include("metrics_eval.urls")),
    path("healthz", healthz, name="healthz"),
    path("", include("annotation_site.datasets.urls")),
]
