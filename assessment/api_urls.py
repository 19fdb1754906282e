"""REST endpoints of this app (mounted under /api/ by annotation_site/api_urls.py)."""
urlpatterns = []
