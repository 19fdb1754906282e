from django.contrib import admin

from annotation_site.human_work import ProtectHumanWork
from annotation_site.workflow import capacity

from .models import Assignment, Item, ModelAnswer, Submission, Task, TaskMember


@admin.register(Task)
class TaskAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ["name", "preset", "dataset", "status", "annotators_per_item", "created_at"]
    list_filter = ["status", "preset"]
    search_fields = ["name", "title"]
    list_select_related = ["dataset"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)  # the admin's view runs in a transaction
        capacity.follow(obj.items.all(), obj.annotators_per_item)


@admin.register(Item)
class ItemAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ["key", "task", "video", "system", "model", "subset", "assigned"]
    list_filter = ["task"]
    search_fields = ["key"]
    list_select_related = ["task", "video"]
    raw_id_fields = ["video"]
    readonly_fields = ["capacity"]  # the task's overlap, copied (annotation_site/workflow/capacity.py)


@admin.register(Assignment)
class AssignmentAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ["pk", "task", "item", "annotator", "status", "submitted_at"]
    list_filter = ["task", "status"]
    list_select_related = ["task", "item", "annotator"]
    raw_id_fields = ["item", "annotator"]


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["client_uuid", "assignment", "annotator", "is_current", "source", "created_at"]
    list_filter = ["is_current", "source"]
    raw_id_fields = ["assignment", "annotator"]


admin.site.register(TaskMember)
admin.site.register(ModelAnswer)
