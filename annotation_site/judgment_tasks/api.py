"""REST endpoints (DRF) of judgment tasks. Researcher endpoints are staff-only (the default permission);
annotator endpoints (next item, draft, submit) serve the logged-in annotator's own assignments, or a crowd
participant's, named by the signed token of their link in the ``X-Participant-Token`` header."""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation_site import uploads
from annotation_site.annotators.services import annotator_for_user
from annotation_site.corpus.models import Dataset
from annotation_site.safe_json import SafeJSONParser
from annotation_site.workflow import api as workflow_api
from annotation_site.workflow.api import apply_changes, create_and_invite, with_progress
from annotation_site.workflow.downloads import anonymise_requested

from . import answers, exports, imports, participants, presets, reports, services
from .assignment import TaskClosed, assignment_for, next_assignment
from .models import Task
from .views import PAGES


class TaskSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    # plain text, not an enum: the schema already has other "status" enums (drf-spectacular would warn)
    status = serializers.CharField(read_only=True, help_text="open or closed")

    class Meta:
        model = Task
        fields = [
            "name",
            "dataset",
            "preset",
            "title",
            "description",
            "instructions",
            "status",
            "annotators_per_item",
            "definition",
            "created_at",
            "closed_at",
        ]


class TaskCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    dataset = serializers.CharField(max_length=100)
    preset = serializers.ChoiceField(choices=list(presets.PRESETS), required=False, allow_blank=True, default="")
    definition = serializers.JSONField(required=False, help_text="A definition (wins over the preset's).")
    annotators_per_item = serializers.IntegerField(default=3, min_value=1, max_value=50)
    title = serializers.CharField(required=False, allow_blank=True, default="")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    instructions = serializers.CharField(required=False, allow_blank=True, default="")
    annotators = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class TaskUpdateSerializer(serializers.Serializer):
    status = serializers.CharField(required=False, help_text="open or closed")
    title = serializers.CharField(required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)
    instructions = serializers.CharField(required=False, allow_blank=True)
    annotators_per_item = serializers.IntegerField(required=False, min_value=1, max_value=50)
    definition = serializers.JSONField(required=False, help_text="Only until the first item is handed out.")


def _task(name):
    return get_object_or_404(Task.objects.select_related("dataset"), name=name)


class PresetListView(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return Response(
            {
                key: {"label": p["label"], "title": p["title"], "definition": p["definition"]}
                for key, p in presets.PRESETS.items()
            }
        )


class TaskListView(APIView):
    @extend_schema(responses=TaskSerializer(many=True))
    def get(self, request):
        return Response(TaskSerializer(Task.objects.select_related("dataset"), many=True).data)

    @extend_schema(request=TaskCreateSerializer, responses={201: TaskSerializer})
    def post(self, request):
        return create_and_invite(
            request,
            TaskCreateSerializer,
            Dataset,
            create=lambda dataset, values: services.create_task(dataset=dataset, created_by=request.user, **values),
            invite=services.invite_to_task,
            serialize=lambda task: TaskSerializer(task).data,
        )


class TaskDetailView(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, name):
        task = _task(name)
        body = with_progress(TaskSerializer(task).data, services.progress(task))
        body["definition_editable"] = not services.work_started(task)
        return Response(body)

    @extend_schema(request=TaskUpdateSerializer, responses=TaskSerializer)
    def patch(self, request, name):
        task = _task(name)
        data = TaskUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        definition = values.pop("definition", None)

        def update(**changes):
            if definition is not None:
                services.update_definition(task, definition)
            services.update_task(task, **changes)

        return apply_changes(
            task, values, update=update, set_status=services.set_status, body=lambda: TaskSerializer(task).data
        )


class InviteView(workflow_api.InviteView):
    def unit(self, name):
        return _task(name)

    def invite(self, task, username):
        return services.invite_to_task(task, username)


class ParticipantView(APIView):
    """Admit a participant without an account and return their signed link (what the crowd code does)."""

    @extend_schema(
        request={
            "application/json": {
                "type": "object",
                "properties": {
                    "provider": {"type": "string"},
                    "external_id": {"type": "string"},
                    "limit": {"type": "integer"},
                    "finish_url": {"type": "string"},
                },
            }
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request, name):
        task = _task(name)
        data = request.data
        limit = data.get("limit")
        try:
            participants.check_limit(limit)  # before anything is written
            annotator = participants.admit(
                task, provider=data.get("provider") or "link", external_id=data.get("external_id") or ""
            )
            url = participants.entry_url(task, annotator, limit=limit, finish_url=data.get("finish_url") or "")
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=400)
        return Response({"annotator": annotator.name, "url": request.build_absolute_uri(url)}, status=201)


class _ImportView(APIView):
    parser_classes = [MultiPartParser]

    def read(self, request):
        upload = request.FILES.get("file")
        if upload is None:
            raise serializers.ValidationError({"file": "send the JSONL file as 'file'"})
        return uploads.upload_text(upload), upload.name  # a refused file: 400 (annotation_site.api_errors)


class ItemsView(_ImportView):
    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}, "replace": {"type": "boolean"}},
            }
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request, name):
        task = _task(name)
        text, filename = self.read(request)
        replace = str(request.data.get("replace", "")).lower() in ("1", "true", "yes", "on")
        try:
            counts = imports.import_items(task, text, filename=filename, replace=replace)
        except imports.WorkStarted as exc:
            return Response({"detail": str(exc)}, status=409)
        return Response(counts, status=201)


class ModelAnswersView(_ImportView):
    @extend_schema(
        request={
            "multipart/form-data": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request, name):
        task = _task(name)
        text, filename = self.read(request)
        counts = imports.import_model_answers(task, text, filename=filename)  # problems: 400 (api_errors)
        return Response(counts, status=201)


MEDIAN_TIES = OpenApiParameter("median_ties", enum=list(reports.MEDIAN_TIES))


def _report(request, task):
    """``(report, labels, items)`` of a task with the request's ``median_ties``, or the 400 answer of a refused
    parameter."""
    try:
        return reports.task_report(task, median_ties=request.query_params.get("median_ties", "lower"))
    except ValueError as exc:
        return Response({"detail": str(exc)}, status=400)


class ReportView(APIView):
    @extend_schema(parameters=[MEDIAN_TIES], responses=OpenApiTypes.OBJECT)
    def get(self, request, name):
        found = _report(request, _task(name))
        return found if isinstance(found, Response) else Response(reports.jsonable(found[0]))


class LabelsView(APIView):
    @extend_schema(parameters=[MEDIAN_TIES, OpenApiParameter("format", enum=["json", "csv"])], responses={200: bytes})
    def get(self, request, name):
        task = _task(name)
        found = _report(request, task)
        if isinstance(found, Response):
            return found
        _, labels, items = found
        rows = reports.label_rows(task.definition, labels, items)
        if request.query_params.get("format") == "csv":
            return exports.attachment(exports.labels_csv(rows), f"{task.name}-labels.csv", "text/csv")
        return exports.attachment(exports.labels_json(rows), f"{task.name}-labels.json", "application/json")


class AnswersView(APIView):
    @extend_schema(parameters=[OpenApiParameter("anonymise", bool)], responses={200: bytes})
    def get(self, request, name):
        task = _task(name)
        anonymise = anonymise_requested(request.query_params)
        return exports.attachment(
            exports.answers_jsonl(task, anonymise=anonymise), f"{task.name}-answers.jsonl", "application/x-ndjson"
        )


# --- annotator endpoints (an account, or a crowd participant's token) ----------------------------------------


class IsWorker(BasePermission):
    """A logged-in account, or a valid participant token in X-Participant-Token."""

    def has_permission(self, request, view):
        return worker_of(request) is not None


def worker_of(request):
    """``(annotator, participant or None)`` of a request, cached on it; None when neither is there."""
    if not hasattr(request, "_task_worker"):
        token = request.headers.get("X-Participant-Token")
        found = None
        if token:
            try:
                participant = participants.read_token(token)
                found = (participant.annotator, participant)
            except participants.TokenInvalid:
                found = None
        elif request.user and request.user.is_authenticated:
            found = (annotator_for_user(request.user, create=False), None)
        request._task_worker = found
    return request._task_worker


class NextItemView(APIView):
    permission_classes = [IsWorker]

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, name):
        task = _task(name)
        annotator, participant = worker_of(request)
        if participant is not None and participant.task.pk != task.pk:
            return Response({"detail": "this link is for another task"}, status=403)
        try:  # (an account without an annotator record is refused there, and none is created for the refusal)
            found = next_assignment(task, annotator, limit=participant.limit if participant else None)
        except TaskClosed as exc:
            return Response({"detail": str(exc)}, status=409)
        except PermissionDenied as exc:
            return Response({"detail": str(exc)}, status=403)
        if found is None:
            return Response({"assignment": None, "detail": "no item left for you"})
        url = (
            reverse("tasks-participant-item", args=[participant.token, found.pk])
            if participant
            else reverse("tasks-annotate", args=[found.pk])
        )
        return Response({"assignment": found.pk, "url": url})


class _AssignmentView(APIView):
    permission_classes = [IsWorker]
    parser_classes = [SafeJSONParser]

    def assignment(self, request, pk):
        annotator, participant = worker_of(request)
        found = assignment_for(annotator, pk)
        if found is None or (participant is not None and found.task_id != participant.task.pk):
            raise NotFound("no such assignment")
        return found


ANSWERS = workflow_api.AnswerService(
    save_draft=answers.save_draft,
    submit=lambda found, data, **fields: answers.submit(found, data.get("answer"), **fields),
    closed=TaskClosed,
)


class DraftView(_AssignmentView, workflow_api.DraftView):
    answers = ANSWERS


class SubmitView(_AssignmentView, workflow_api.SubmitView):
    answers = ANSWERS

    def next_page(self, request, assignment):
        # what the page's next form would do: a participant's Next (their link's quota), else Start
        annotator, participant = worker_of(request)
        if participant is not None:
            return participants.next_path(participant)
        return PAGES.next_page(request, assignment.task, annotator)
