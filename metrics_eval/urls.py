"""Pages of this app (mounted by annotation_site/urls.py)."""
urlpatterns = []
