"""Django admin of the corpus, for looking things up and small fixes; imports and processing go through the
services. Related rows are picked by id (``raw_id_fields``) and lists select their relations in the same query,
so the pages stay fast on tables of many thousand rows. Sentence text and tokens are read-only here: error
spans elsewhere point at token indices, so editing them would silently move every span. Deleting a dataset, a
video, a system or a caption that people's judgments depend on is refused unless forced (``ProtectHumanWork``,
annotation_site/human_work.py)."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models, transaction

from annotation_site.human_work import ProtectHumanWork

from .models import Caption, Dataset, Reference, Sentence, System, Video


@admin.register(Dataset)
class DatasetAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("name", "source_format", "created_at")
    search_fields = ("name", "description")
    list_filter = ("source_format",)
    readonly_fields = ("created_at",)


@admin.register(System)
class SystemAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("name", "dataset", "is_human", "position")
    list_select_related = ("dataset",)
    list_filter = ("is_human", "dataset")
    search_fields = ("name", "dataset__name")
    autocomplete_fields = ("dataset",)


def _process_again(video_ids):
    from .tasks import process_video

    for video_id in video_ids:
        process_video.delay(video_id)


@admin.register(Video)
class VideoAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("external_id", "dataset", "kind", "status", "duration", "width", "height")
    list_select_related = ("dataset",)
    list_filter = ("status", "dataset")
    search_fields = ("external_id", "url")
    autocomplete_fields = ("dataset",)
    readonly_fields = ("duration", "width", "height", "thumbnail", "status", "processing_error")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    actions = ["process_again"]

    @admin.action(description="Probe the selected video files again (duration, size, thumbnail)")
    def process_again(self, request, queryset):
        ids = list(queryset.exclude(file="").values_list("pk", flat=True))
        queryset.filter(pk__in=ids).update(status=Video.Status.PENDING, processing_error="")
        transaction.on_commit(lambda: _process_again(ids))
        self.message_user(request, f"{len(ids)} video(s) queued for processing.", messages.SUCCESS)

    def save_model(self, request, obj, form, change):
        new_file = "file" in form.changed_data and obj.file
        if new_file:  # what was probed belongs to the old file
            obj.status, obj.processing_error = Video.Status.PENDING, ""
            obj.duration = obj.width = obj.height = None
        elif "url" in form.changed_data and obj.url and not obj.file:
            obj.status = Video.Status.EXTERNAL
        super().save_model(request, obj, form, change)
        if new_file:
            transaction.on_commit(lambda: _process_again([obj.pk]))


class SentenceInline(admin.TabularInline):
    model = Sentence
    fields = ("index", "text", "start", "end")
    readonly_fields = ("index", "text")
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Caption)
class CaptionAdmin(ProtectHumanWork, admin.ModelAdmin):
    list_display = ("id", "video", "system", "dataset")
    list_select_related = ("video__dataset", "system")
    list_filter = ("video__dataset",)
    search_fields = ("video__external_id", "system__name")
    raw_id_fields = ("video", "system")
    inlines = [SentenceInline]

    @admin.display(ordering="video__dataset__name")
    def dataset(self, caption):
        return caption.video.dataset


@admin.register(Sentence)
class SentenceAdmin(admin.ModelAdmin):
    list_display = ("id", "text", "index", "system", "video")
    list_select_related = ("caption__system", "caption__video")
    list_filter = ("caption__video__dataset",)
    search_fields = ("text", "caption__video__external_id")
    raw_id_fields = ("caption",)
    readonly_fields = ("text", "tokens")

    # Never one sentence on its own: the caption's other sentences keep their indices, so error labels and answers
    # would point past a gap, and the sentence's own judgments (factuality answers' sentence labels) would go with
    # it. A caption goes whole (its own page, guarded like every deletion of human work). Not has_delete_permission:
    # the admin asks it of every row a cascade reaches, so deleting a dataset or a caption would be refused too.
    def delete_view(self, request, object_id, extra_context=None):
        raise PermissionDenied("a sentence is deleted with its caption, never on its own")

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.display(ordering="caption__system__name")
    def system(self, sentence):
        return sentence.caption.system

    @admin.display(ordering="caption__video__external_id")
    def video(self, sentence):
        return sentence.caption.video


@admin.register(Reference)
class ReferenceAdmin(admin.ModelAdmin):
    list_display = ("video", "reference_set", "short_text")
    list_select_related = ("video",)
    list_filter = ("reference_set", "video__dataset")
    search_fields = ("text", "video__external_id", "reference_set")
    raw_id_fields = ("video",)

    @admin.display(description="text")
    def short_text(self, reference):
        return reference.text[:100]
