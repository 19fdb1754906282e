from django.contrib import admin

from .models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("kind", "status", "done", "total", "message", "created_at")
    list_filter = ("status", "kind")
    readonly_fields = [f.name for f in Job._meta.fields]
