"""Django admin of Direct Assessment, for looking things up; campaigns are planned and judgments stored through
the services (the pages, the API and the commands)."""

from django.contrib import admin

from annotation_site.human_work import ProtectHumanWork

from .models import HIT, Assignment, Campaign, Item, Judgment, QCResult, Worker


@admin.register(Campaign)
class CampaignAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("name", "dataset", "source", "hit_size", "qc_test", "seed", "created_at")
    list_select_related = ("dataset",)
    search_fields = ("name",)
    raw_id_fields = ("dataset", "human_system")
    filter_horizontal = ("systems",)
    readonly_fields = ("seed", "planned_at", "created_at")


@admin.register(HIT)
class HITAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("campaign", "number", "external_id", "n_items")
    list_select_related = ("campaign",)
    list_filter = ("campaign",)


@admin.register(Item)
class ItemAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("hit", "position", "item_type", "caption", "control_of")
    list_select_related = ("hit__campaign", "caption__system", "caption__video", "control_of__hit__campaign")
    list_filter = ("item_type",)
    raw_id_fields = ("hit", "caption", "control_of", "donor_caption")


@admin.register(Worker)
class WorkerAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("external_id", "user", "source", "created_at")
    search_fields = ("external_id",)
    raw_id_fields = ("user",)


@admin.register(Assignment)
class AssignmentAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("worker", "hit", "created_at", "completed_at")
    list_select_related = ("worker", "hit__campaign")
    raw_id_fields = ("worker", "hit")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ("assignment", "item", "score", "played", "finished_at")
    list_select_related = ("assignment__worker", "assignment__hit__campaign", "item__hit__campaign")
    raw_id_fields = ("assignment", "item")


@admin.register(QCResult)
class QCResultAdmin(admin.ModelAdmin):
    list_display = ("campaign", "worker", "test", "n_pairs", "p_value", "passed", "computed_at")
    list_select_related = ("campaign", "worker")
    list_filter = ("passed", "test")
    raw_id_fields = ("campaign", "worker")
    # when the judgments it was computed from were read: a later date typed here would keep every recomputation
    # from replacing the row (annotation_site/newest_wins.py)
    readonly_fields = ("computed_at",)
