"""Admin of annotators, and the auth User admin re-registered with the guard of human work: deleting a user deletes
their Annotator and, through it, every answer they gave (annotation_site/human_work.py)."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from annotation_site.human_work import ProtectHumanWork

from .models import Annotator


@admin.register(Annotator)
class AnnotatorAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("id", "name", "kind", "provider", "external_id", "user", "created_at")
    list_select_related = ("user",)
    list_filter = ("kind", "provider")
    search_fields = ("user__username", "external_id", "display_name")
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)


User = get_user_model()
# django.contrib.auth comes before this app in INSTALLED_APPS, so its admin module (autodiscovered in that order)
# has registered Django's UserAdmin by now; it is replaced by the same admin with the guard.
admin.site.unregister(User)


@admin.register(User)
class ProtectedUserAdmin(ProtectHumanWork, UserAdmin):
    """Django's user admin; deleting a user who has given answers is refused unless forced."""
