"""A small but complete world for the security tests: the demo dataset with its factuality project and DA
campaign, a judgment task, a crowd study, a metric report, accounts for each persona, and the value of every URL
parameter of every route (real objects, real signed tokens)."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation_site.annotators.services import annotator_for_user
from annotation_site.demo import services as demo
from annotation_site.interchange.services import import_bundle

# --- the world --------------------------------------------------------------------------------------------


class World:
    """Every object a route can name, and the value of each URL parameter."""

    def __init__(self):
        from annotation_site.crowd import admission
        from annotation_site.crowd import links as crowd_links
        from annotation_site.crowd.studies import create_study, publish
        from annotation_site.factuality import aggregation
        from annotation_site.factuality import assignment as fact_assignment
        from annotation_site.factuality import crowd_links as fact_links
        from annotation_site.factuality.models import Project
        from annotation_site.factuality.projects import add_member, update_project
        from annotation_site.jobs.models import Job
        from annotation_site.judgment_tasks import assignment as task_assignment
        from annotation_site.judgment_tasks import imports, participants
        from annotation_site.judgment_tasks import services as tasks
        from assessment import services as da
        from assessment.models import Assignment, Campaign
        from metrics_eval import analysis, reports
        from metrics_eval.services import caption_keys, store_scores

        users = get_user_model().objects
        self.dataset = import_bundle(
            demo.build_bundle(demo.demo_videos(2)),
            name=demo.DEMO_NAME,
            source_format="demo",
            label_set_name=demo.LABEL_SET,
        ).dataset
        for step in demo.demo_steps():
            step.run(self.dataset, None)
        self.users = {
            "annotator": users.create_user("perm-annotator", password="pw-annotator-1"),
            "other_annotator": users.create_user("perm-other", password="pw-other-1"),
            "account": users.create_user("perm-account", password="pw-account-1"),
            "staff": users.create_user("perm-staff", password="pw-staff-1", is_staff=True, is_superuser=True),
        }
        annotator = annotator_for_user(self.users["annotator"])
        annotator_for_user(self.users["other_annotator"])

        self.project = Project.objects.get(name="demo-factuality")
        aggregation.write_label_set(self.project, aggregation.aggregate_project(self.project))  # for its exports
        update_project(self.project, annotators_per_video=10)  # room for more than the simulated annotators
        add_member(self.project, annotator)
        own = fact_assignment.next_assignment(self.project, annotator)
        crowd_annotator = annotator_for_user(users.create_user("perm-crowd"))
        add_member(self.project, crowd_annotator)
        crowd_assignment = fact_assignment.next_assignment(self.project, crowd_annotator)

        self.task = tasks.create_task(
            name="perm-task", dataset=self.dataset, preset="fifa-faithfulness", annotators_per_item=3
        )
        self.video = self.dataset.videos.order_by("pk").first()
        imports.import_items(
            self.task, f'{{"video_id": "{self.video.external_id}", "text": "a caption"}}\n', filename="items.jsonl"
        )
        tasks.add_member(self.task, annotator)
        own_item = task_assignment.next_assignment(self.task, annotator)
        task_participant = participants.admit(self.task, provider="link", external_id="perm-participant")
        task_item = task_assignment.next_assignment(self.task, task_participant)

        self.campaign = Campaign.objects.get(name="demo-da")
        da_assignment = Assignment.objects.filter(hit__campaign=self.campaign).order_by("pk").first()

        study = create_study("da", self.campaign.name, name="perm-study", provider="link")
        publish(study)
        [(_, link_token)] = admission.create_participant_links(
            study, ["perm-link"], expires_at=timezone.now() + timedelta(days=1)
        )
        participation = admission.admit(
            study, {}, participant=admission.participant_for_link(admission.link_for_token(link_token))
        )

        keys = caption_keys(self.dataset)
        store_scores(self.dataset, "toy", {pk: float(i) for i, pk in enumerate(keys.values())}, source="imported")
        report, _ = reports.factuality_report(self.dataset, params=analysis.Parameters(resamples=50))
        job = Job.objects.create(kind="perm-check")

        self.ids = {
            "own_fact": own.pk,
            "fact_token": fact_links.assignment_token(crowd_assignment),
            "own_task": own_item.pk,
            "task_token": participants.token_for(self.task, task_participant),
            "task_item": task_item.pk,
            "da_token": da.assignment_token(da_assignment),
            "da_entry": da.campaign_entry_token(self.campaign),
            "crowd_entry": crowd_links.entry_token(study),
            "crowd_link": link_token,
            "participation": crowd_links.participation_token(participation),
            "report": report.pk,
            "job": job.pk,
            "participant": participation.participant_id,
            "video": self.video.pk,
        }

    def mturk_study(self, name, protocol="da", work=None):
        """A published MTurk study of ``work`` (a campaign, project or task of ``protocol``; default: the world's
        DA campaign). The world's own study is a link study."""
        from annotation_site.crowd.models import Study

        work = work or self.campaign
        return Study.objects.create(
            name=name,
            provider="mturk",
            protocol=protocol,
            object_id=work.pk,
            target_name=work.name,
            status=Study.Status.PUBLISHED,
        )

    def kwargs(self, name, params):
        """The URL parameters of a route, with real objects behind them."""
        return {param: self.value(name, param) for param in params}

    def value(self, name, param):
        if param == "name":
            return self.owner_name(name)
        if param == "token":
            return TOKENS.get(name) and self.ids[TOKENS[name]] or "not-a-token"
        if param == "pk":
            return self.ids[PKS[name]] if name in PKS else 1
        if name.startswith("admin:"):
            return {"app_label": "corpus", "object_id": "1", "content_type_id": "1"}.get(param, "1")
        return {
            "external_id": self.video.external_id,
            "username": "perm-other",
            "chart": CHARTS.get(name),
            "figure": "correlations",
            "protocol": "da",
            "target": self.campaign.name,
            "action": "publish",
            "uidb64": "MQ",
            "fmt": FORMATS.get(name, "svg"),
            "what": WHAT.get(name, "items"),
            "metric": "toy",
        }[param]

    def owner_name(self, name):
        """What a route's ``name`` parameter names: the project, campaign, task, study, report or dataset."""
        bare = name.removeprefix("api-")
        if bare.startswith("factuality-"):
            return self.project.name
        if bare.startswith("da-") or name == "metrics-campaign":
            return self.campaign.name
        if bare.startswith("tasks-"):
            return self.task.name
        if bare.startswith("crowd-"):
            return "perm-study"
        if name == "crowd-ledger-csv":
            return "perm-study"
        return self.dataset.name


# Which of the world's tokens and ids each route takes.
TOKENS = {
    "factuality-annotate-token": "fact_token",
    "factuality-annotate-token-instructions": "fact_token",
    "api-factuality-token-draft": "fact_token",
    "api-factuality-token-submit": "fact_token",
    "da-rate-token": "da_token",
    "api-da-assignment": "da_token",
    "api-da-judgments": "da_token",
    "da-join": "da_entry",
    "tasks-participant": "task_token",
    "tasks-participant-next": "task_token",
    "tasks-participant-done": "task_token",
    "tasks-participant-item": "task_token",
    "crowd-entry": "crowd_entry",
    "crowd-participant-link": "crowd_link",
    "crowd-participant": "participation",
    "crowd-consent": "participation",
    "crowd-practice": "participation",
    "crowd-start": "participation",
    "crowd-finish": "participation",
}
PKS = {
    "factuality-annotate": "own_fact",
    "api-factuality-draft": "own_fact",
    "api-factuality-submit": "own_fact",
    "tasks-annotate": "own_task",
    "api-tasks-draft": "own_task",
    "api-tasks-submit": "own_task",
    "tasks-participant-item": "task_item",
    "metrics-report": "report",
    "metrics-report-csv": "report",
    "metrics-report-json": "report",
    "metrics-report-figure": "report",
    "metrics-report-api-detail": "report",
    "job-detail": "job",
    "crowd-worker": "participant",
    "video-detail": "video",
}
FORMATS = {"dataset-export": "factvc", "tasks-chart": "svg", "metrics-report-figure": "svg"}
WHAT = {"tasks-import": "items", "tasks-download": "answers.jsonl"}
CHARTS = {"factuality-chart": "scores", "tasks-chart": "agreement"}
# What a route needs besides its path to do its work for someone it admits (the same for every persona).
QUERIES = {"api-da-replication": "?a=demo-da&b=demo-da"}
POSTS = {"crowd-study-action": {"action": "pause"}, "api-crowd-verify-code": {"study": "perm-study", "code": "x"}}
# Routes whose object the world does not have (an in-doubt payment batch): staff get 404 like for any other.
ABSENT = {"api-crowd-resolve"}


def without_rate_limits(settings):
    """Raise every rate limit out of reach: these tests send hundreds of requests from one address on purpose
    (the limits themselves are tested in tests/hardening/test_throttling.py)."""
    from annotation_site.throttling import DEFAULT_LIMITS

    settings.AXES_ENABLED = False
    for scope, kind in DEFAULT_LIMITS:
        setattr(settings, f"CAPTIONEVAL_THROTTLE_{scope.upper()}_{kind.upper()}", "1000000/60")
