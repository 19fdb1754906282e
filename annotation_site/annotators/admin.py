from django.contrib import admin

from .models import Annotator


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "kind", "provider", "external_id", "user", "created_at")
    list_select_related = ("user",)
    list_filter = ("kind", "provider")
    search_fields = ("user__username", "external_id", "display_name")
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)
