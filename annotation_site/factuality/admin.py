"""Django admin of factuality labels: browsing label sets and single labels; related rows by id, relations
selected in the list query, so the pages stay fast on large label sets."""

from django.contrib import admin

from annotation_site.human_work import ProtectHumanWork
from annotation_site.workflow import capacity

from .models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel


class LabelSetFilter(admin.RelatedFieldListFilter):
    """Filter by label set; its choices name the dataset too, read in one query."""

    def field_choices(self, field, request, model_admin):
        return [
            (label_set.pk, str(label_set))
            for label_set in LabelSet.objects.select_related("dataset").order_by("dataset__name", "name")
        ]


@admin.register(LabelSet)
class LabelSetAdmin(admin.ModelAdmin):
    list_display = ("name", "dataset", "origin", "source", "created_at")
    list_select_related = ("dataset",)
    list_filter = ("origin", "dataset")
    search_fields = ("name", "source", "dataset__name")
    autocomplete_fields = ("dataset",)
    readonly_fields = ("created_at",)


@admin.register(ParagraphLabel)
class ParagraphLabelAdmin(admin.ModelAdmin):
    list_display = ("id", "label_set", "caption", "score")
    list_select_related = ("label_set__dataset", "caption__system", "caption__video")
    list_filter = ("score", ("label_set", LabelSetFilter))
    search_fields = ("caption__video__external_id", "caption__system__name")
    raw_id_fields = ("label_set", "caption")


class ErrorSpanInline(admin.TabularInline):
    model = ErrorSpan
    fields = ("start", "end", "words")
    readonly_fields = ("words",)
    extra = 0

    @admin.display(description="erroneous words")
    def words(self, span):
        if span.pk is None:
            return ""
        return " ".join(span.sentence_label.sentence.tokens[span.start : span.end])

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("sentence_label__sentence")


@admin.register(SentenceLabel)
class SentenceLabelAdmin(admin.ModelAdmin):
    list_display = ("id", "label_set", "sentence", "error")
    list_select_related = ("label_set__dataset", "sentence")
    list_filter = ("error", ("label_set", LabelSetFilter))
    search_fields = ("sentence__text", "sentence__caption__video__external_id")
    raw_id_fields = ("label_set", "sentence")
    inlines = [ErrorSpanInline]


@admin.register(ErrorSpan)
class ErrorSpanAdmin(admin.ModelAdmin):
    list_display = ("id", "sentence_label", "start", "end", "sentence")
    list_select_related = ("sentence_label__sentence",)
    list_filter = (("sentence_label__label_set", LabelSetFilter),)
    search_fields = ("sentence_label__sentence__text",)
    raw_id_fields = ("sentence_label",)

    @admin.display(description="sentence")
    def sentence(self, span):
        return span.sentence_label.sentence.text


# --- projects and judgments ---------------------------------------------------------------------------------
from .models import (  # noqa: E402
    Aggregation,
    Assignment,
    CaptionRating,
    ParagraphJudgment,
    Project,
    ProjectMember,
    ProjectVideo,
    ScaleAnchor,
    SentenceJudgment,
    SpanJudgment,
    Submission,
)


class ScaleAnchorInline(admin.TabularInline):
    model = ScaleAnchor
    extra = 0


class ProjectMemberInline(admin.TabularInline):
    model = ProjectMember
    raw_id_fields = ("annotator",)
    extra = 0


@admin.register(Project)
class ProjectAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("name", "dataset", "kind", "status", "annotators_per_video", "shuffle_systems", "created_at")
    list_select_related = ("dataset",)
    list_filter = ("kind", "status")
    search_fields = ("name", "dataset__name")
    raw_id_fields = ("dataset", "label_set", "created_by")
    filter_horizontal = ("systems",)
    inlines = [ScaleAnchorInline, ProjectMemberInline]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)  # the admin's view runs in a transaction
        capacity.follow(obj.project_videos.all(), obj.annotators_per_video)


@admin.register(ProjectVideo)
class ProjectVideoAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("id", "project", "video", "position", "assigned")
    list_select_related = ("project", "video")
    list_filter = ("project",)
    raw_id_fields = ("project", "video")
    readonly_fields = ("capacity",)  # the project's overlap, copied (annotation_site/workflow/capacity.py)


@admin.register(Assignment)
class AssignmentAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("id", "project", "project_video", "annotator", "status", "created_at", "submitted_at")
    list_select_related = ("project", "project_video__video", "annotator__user")
    list_filter = ("status", "project")
    raw_id_fields = ("project", "project_video", "annotator")


class SpanJudgmentInline(admin.TabularInline):
    model = SpanJudgment
    extra = 0


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "assignment",
        "annotator",
        "is_current",
        "source",
        "time_spent",
        "video_played",
        "confirmed_incomplete",
        "created_at",
    )
    list_select_related = ("assignment", "annotator__user")
    list_filter = ("is_current", "source", "confirmed_incomplete", "assignment__project")
    search_fields = ("client_uuid",)
    raw_id_fields = ("assignment", "annotator")


@admin.register(ParagraphJudgment)
class ParagraphJudgmentAdmin(admin.ModelAdmin):
    list_display = ("id", "submission", "caption", "score")
    raw_id_fields = ("submission", "caption")


@admin.register(SentenceJudgment)
class SentenceJudgmentAdmin(admin.ModelAdmin):
    list_display = ("id", "submission", "sentence", "error")
    raw_id_fields = ("submission", "sentence")
    inlines = [SpanJudgmentInline]


@admin.register(CaptionRating)
class CaptionRatingAdmin(admin.ModelAdmin):
    list_display = ("id", "submission", "caption", "score")
    raw_id_fields = ("submission", "caption")


@admin.register(Aggregation)
class AggregationAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "project",
        "label_set",
        "ties",
        "captions",
        "sentences",
        "spans",
        "errors_without_spans",
        "created_at",
    )
    list_select_related = ("project", "label_set")
    raw_id_fields = ("project", "label_set", "created_by")
