"""REST endpoints (DRF) of factuality projects. Annotator endpoints (next video, draft, submit) need a login
and serve only the annotator's own assignments; every researcher endpoint is staff-only (the default)."""

from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation_site import uploads
from annotation_site.annotators.services import annotator_for_user
from annotation_site.corpus.models import Dataset
from annotation_site.safe_json import SafeJSONParser
from annotation_site.workflow import api as workflow_api
from annotation_site.workflow.api import (
    apply_changes,
    create_and_invite,
    validation_errors,
    with_progress,
)
from annotation_site.workflow.downloads import anonymise_requested, attachment

from . import aggregation, agreement, exports, judgments, projects, raw_labels
from .assignment import ProjectClosed, assignment_for, next_assignment, presented_captions
from .models import Project
from .views import PAGES


class ProjectSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    label_set = serializers.SlugRelatedField(slug_field="name", read_only=True)
    systems = serializers.SerializerMethodField(help_text="The systems judged that are not human.")
    human_systems = serializers.SerializerMethodField(help_text="Human caption sets judged (only when named).")

    class Meta:
        model = Project
        fields = [
            "name",
            "dataset",
            "kind",
            "status",
            "description",
            "annotators_per_video",
            "shuffle_systems",
            "question",
            "scale_min",
            "scale_max",
            "rationale",
            "label_set",
            "systems",
            "human_systems",
            "created_at",
            "closed_at",
        ]

    def get_systems(self, project) -> list[str]:
        return [s.name for s in project.systems.all() if not s.is_human]

    def get_human_systems(self, project) -> list[str]:
        return [s.name for s in project.systems.all() if s.is_human]


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    dataset = serializers.CharField(max_length=100)
    kind = serializers.ChoiceField(choices=Project.Kind.values, default=Project.Kind.FACTUALITY)
    systems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="System names; default: every system that is not human (human "
        "caption sets are judged only when named).",
    )
    videos = serializers.ListField(child=serializers.CharField(), required=False)
    annotators_per_video = serializers.IntegerField(default=3, min_value=1, max_value=50)
    shuffle_systems = serializers.BooleanField(default=True)
    instructions = serializers.CharField(required=False, allow_blank=True, default="")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    preset = serializers.CharField(required=False, allow_blank=True, default="")
    question = serializers.CharField(required=False, allow_blank=True, default="")
    scale = serializers.ListField(child=serializers.ListField(min_length=2, max_length=2), required=False)
    rationale = serializers.ChoiceField(choices=Project.Rationale.choices, default=Project.Rationale.OFF)
    annotators = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class ProjectUpdateSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Project.Status.values, required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    instructions = serializers.CharField(required=False)
    annotators_per_video = serializers.IntegerField(required=False, min_value=1, max_value=50)
    question = serializers.CharField(required=False, allow_blank=True)
    rationale = serializers.ChoiceField(choices=Project.Rationale.choices, required=False)
    anchors = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="Rating projects: {scale value: anchor label}."
    )


class ProjectListView(APIView):
    @extend_schema(responses=ProjectSerializer(many=True))
    def get(self, request):
        return Response(
            ProjectSerializer(
                Project.objects.select_related("dataset", "label_set").prefetch_related("systems"), many=True
            ).data
        )

    @extend_schema(request=ProjectCreateSerializer, responses={201: ProjectSerializer})
    def post(self, request):
        return create_and_invite(
            request,
            ProjectCreateSerializer,
            Dataset,
            create=lambda dataset, values: projects.create_project(
                projects.ProjectSpec(dataset=dataset, usernames=[], **values), created_by=request.user
            ),
            invite=projects.invite_to_project,
            serialize=lambda project: ProjectSerializer(project).data,
        )


class ProjectDetailView(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, name):
        project = get_object_or_404(Project.objects.select_related("dataset", "label_set"), name=name)
        return Response(with_progress(ProjectSerializer(project).data, projects.progress(project)))

    @extend_schema(request=ProjectUpdateSerializer, responses=ProjectSerializer)
    def patch(self, request, name):
        """Change what may change after creation (status, description, instructions, overlap; rating: question,
        rationale, anchor labels)."""
        project = get_object_or_404(Project.objects.select_related("dataset", "label_set"), name=name)
        data = ProjectUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        if "anchors" in values:
            try:
                values["anchors"] = {int(k): v for k, v in values["anchors"].items()}
            except ValueError:
                return Response({"anchors": "keys must be scale values"}, status=400)
        return apply_changes(
            project,
            values,
            update=lambda **changes: projects.update_project(project, **changes),
            set_status=projects.set_status,
            body=lambda: ProjectSerializer(project).data,
        )


class InviteView(workflow_api.InviteView):
    def unit(self, name):
        return get_object_or_404(Project, name=name)

    def invite(self, project, username):
        return projects.invite_to_project(project, username)


class ReissueView(APIView):
    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, name, username):
        """A new invitation link for an invited account that never activated (the lost link stops working);
        400 when the account is active or not invited to the project."""
        project = get_object_or_404(Project, name=name)
        try:
            path = projects.reissue_invitation(project, username)
        except ValidationError as exc:
            return Response(validation_errors(exc), status=400)
        return Response({"username": username, "url": request.build_absolute_uri(path)})


class AggregateView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("ties", enum=list(aggregation.TIES))], request=None, responses=OpenApiTypes.OBJECT
    )
    def post(self, request, name):
        project = get_object_or_404(Project, name=name, kind=Project.Kind.FACTUALITY)
        ties = request.data.get("ties") or request.query_params.get("ties") or "error"
        try:
            run = aggregation.write_label_set(
                project, aggregation.aggregate_project(project, ties=ties), created_by=request.user
            )
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=400)
        except aggregation.LabelSetNameTaken as exc:
            return Response({"detail": str(exc)}, status=409)
        return Response(
            {
                "label_set": run.label_set.name,
                "ties": run.ties,
                "captions": run.captions,
                "sentences": run.sentences,
                "spans": run.spans,
                "errors_without_spans": run.errors_without_spans,
            }
        )


class AgreementView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("word_units", enum=["tokens", "words"]),
            OpenApiParameter("ties", enum=list(aggregation.TIES)),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, name):
        project = get_object_or_404(Project, name=name)
        parameters = {}
        if not project.is_rating:
            parameters = {
                "word_units": request.query_params.get("word_units", "tokens"),
                "ties": request.query_params.get("ties", "error"),
            }
        try:
            report = agreement.project_report(project, **parameters)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=400)
        return Response(agreement.jsonable(report))


class LabelsView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(parameters=[OpenApiParameter("anonymise", bool)], responses={200: bytes})
    def get(self, request, name):
        project = get_object_or_404(Project, name=name)
        anonymise = anonymise_requested(request.query_params)
        return attachment(
            raw_labels.export_lines(project, anonymise=anonymise), exports.raw_filename(project), "application/x-ndjson"
        )

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "dataset": {"type": "string"},
                    "own_export": {
                        "type": "boolean",
                        "description": "The file is this project's own export with real ids: an id that is one of "
                        "its annotators is that annotator (without it such an id is refused).",
                    },
                },
            }
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request, name):
        upload = request.FILES.get("file")
        project = Project.objects.filter(name=name).first()
        dataset_name = request.data.get("dataset") or (project.dataset.name if project else None)
        if upload is None or not dataset_name:
            return Response({"detail": "send the file (and the dataset, for a new project)"}, status=400)
        dataset = get_object_or_404(Dataset, name=dataset_name)
        # a refused file or one with problems: 400, nothing imported (annotation_site.api_errors)
        project, counts = raw_labels.import_lines(
            uploads.upload_text(upload),
            project_name=name,
            dataset=dataset,
            filename=upload.name,
            own_export=str(request.data.get("own_export", "")).lower() in ("true", "1", "on"),
        )
        return Response({"project": project.name, **counts}, status=201)


# --- annotator endpoints ----------------------------------------------------------------------------------


class NextVideoView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, name):
        project = get_object_or_404(Project, name=name)
        try:
            # (not created here: a refused request changes nothing; an account without one is in no project)
            found = next_assignment(project, annotator_for_user(request.user, create=False))
        except ProjectClosed as exc:
            return Response({"detail": str(exc)}, status=409)
        except PermissionDenied as exc:
            return Response({"detail": str(exc)}, status=403)
        if found is None:
            return Response({"assignment": None, "detail": "no video left for you"}, status=200)
        return Response({"assignment": found.pk, "url": reverse("factuality-annotate", args=[found.pk])})


class _AssignmentView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [SafeJSONParser]

    def assignment(self, request, pk):
        found = assignment_for(annotator_for_user(request.user, create=False), pk)
        if found is None:
            raise NotFound("no such assignment")
        return found


class _TokenAssignment:
    """The draft / submit endpoints of a crowd annotator's signed link (no account: the token is the
    credential, so no session and no CSRF check)."""

    permission_classes = [AllowAny]
    authentication_classes = []

    def assignment(self, request, token):
        from .crowd_links import assignment_from_token

        found = assignment_from_token(token)
        if found is None:
            raise NotFound("no such assignment")
        return found


def _submit(found, data, **fields):
    return judgments.submit(
        found, presented_captions(found), data.get("answer"), watched_seconds=data.get("watched_seconds"), **fields
    )


ANSWERS = workflow_api.AnswerService(
    save_draft=judgments.save_draft, submit=_submit, closed=ProjectClosed, stale=judgments.StaleDraft
)


class DraftView(_AssignmentView, workflow_api.DraftView):
    answers = ANSWERS


class SubmitView(_AssignmentView, workflow_api.SubmitView):
    answers = ANSWERS

    def next_page(self, request, assignment):
        # what the page's next form (Start) would do: the same hand-out, the same page
        return PAGES.next_page(request, assignment.project, assignment.annotator)


class TokenDraftView(_TokenAssignment, DraftView):
    @workflow_api.draft_schema
    def put(self, request, token):
        return DraftView.put(self, request, token)


class TokenSubmitView(_TokenAssignment, SubmitView):
    next_page = None  # a crowd link names one assignment: its page goes to the crowd's end page, no hand-out

    @workflow_api.submit_schema
    def post(self, request, token):
        return SubmitView.post(self, request, token)
