from django.contrib import admin

from .models import CaptionPair, Metric, Report


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "source", "version", "updated_at"]
    list_filter = ["source", "dataset"]
    list_select_related = ["dataset"]
    search_fields = ["name", "label"]


@admin.register(CaptionPair)
class CaptionPairAdmin(admin.ModelAdmin):
    list_display = ["pair_set", "dataset", "correct", "foil"]
    list_filter = ["dataset", "pair_set"]
    list_select_related = ["dataset", "correct__system", "correct__video", "foil__system", "foil__video"]
    raw_id_fields = ["correct", "foil"]


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "dataset", "campaign", "created_at", "data_hash"]
    list_filter = ["kind", "dataset"]
    list_select_related = ["dataset"]
    readonly_fields = [
        "kind",
        "dataset",
        "campaign",
        "parameters",
        "parameters_hash",
        "snapshot",
        "data_hash",
        "versions",
        "result",
        "created_by",
        "created_at",
    ]

    def has_add_permission(self, request):
        # A report is the output of an analysis (every field is read-only): it is made by the metrics pages,
        # API or command, never typed in (an empty one would not even save).
        return False
