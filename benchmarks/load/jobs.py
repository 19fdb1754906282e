"""Celery jobs killed in their middle (``run.py --fault celery-kill:KIND@SECONDS``): a campaign's quality
control, a metric computation and a payment batch, each started through the platform's own services while the
participants work; the Celery worker is SIGKILLed once the job is visibly under way (its Job row says running,
or the payment platform has received a first call), a new worker is started after the broker's visibility
timeout, and ``check`` then requires every job done exactly once in effect:

- QC (of a campaign of simulated workers made before the run, beside the one the participants rate: its
  judgments are final, so a recomputation afterwards must agree): the job succeeded and the campaign holds
  exactly one QC row per worker, equal to a recomputation;
- metrics: the job succeeded and each metric has exactly one score per caption it scored (the unique constraint
  and the stored count equal to what the finishing run scored: nothing left over from the killed run);
- payments (against the fake Prolific server of tests/crowd, on loopback, answering each POST after a pause):
  every ledger row confirmed, every approved submission approved once and every bonus paid once on the
  platform's own log, nothing paid twice.
"""

import time
from decimal import Decimal

KINDS = ("qc", "metrics", "payments")
FINISHED = ("succeeded", "failed")  # Job.Status values
RUNNING_TIMEOUT = 120
QC_CROWD = 800  # simulated workers of the QC fault's campaign, one HIT each (400 made a job of 0.2-0.4 s)


def visibility_timeout():
    from django.conf import settings

    return settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]


class FaultJobs:
    def __init__(self, made):
        self.made = made
        self.fake = None
        self.started = {}  # kind -> what check needs
        self.log = []

    # --- the fake payment platform (started before the stack: its address is in the stack's environment) ---

    def start_fake_platform(self):
        from tests.crowd.fake_prolific import TOKEN, FakeProlific

        self.fake = FakeProlific().start()
        return {"PROLIFIC_API_URL": self.fake.url, "PROLIFIC_API_TOKEN": TOKEN, "PROLIFIC_TIMEOUT": "5"}

    def stop(self):
        if self.fake is not None:
            self.fake.stop()

    def remove(self):
        """Delete what the faults made beside ``work.make_work``'s rows (the QC campaign goes with them): the
        payment study with its ledger (kept from deletion otherwise: money records), the participants it made and
        the jobs."""
        from annotation_site.crowd.models import Dispatch, LedgerEntry, LedgerLock, Participant, Study
        from annotation_site.jobs.models import Job

        payments = self.started.get("payments")
        if payments:
            LedgerEntry.objects.filter(study_id=payments["study"]).delete()
            Dispatch.objects.filter(study_id=payments["study"]).delete()
            Study.objects.filter(pk=payments["study"]).delete()
            Participant.objects.filter(pk__in=payments["participants"]).delete()
            protocol, object_id = payments["target"]
            LedgerLock.objects.filter(protocol=protocol, object_id=object_id).delete()
        Job.objects.filter(pk__in=[self.job_id(kind) for kind in KINDS if kind in self.started]).delete()

    # --- starting each job ------------------------------------------------------------------------------------

    def start(self, kind):
        return getattr(self, f"start_{kind}")()

    def prepare(self, kinds):
        """Before the participants start: the QC fault's campaign (``prepare_qc``) when it is planned."""
        if "qc" in kinds:
            self.prepare_qc()

    def prepare_qc(self):
        """A campaign of its own for the QC fault, beside the one the participants rate. The participants'
        campaign's QC keeps moving while they work and for a while after: each finished HIT queues a QC task for
        its worker, which may still wait behind the metric job when ``check`` recomputes (the old set-up fails
        that way with participants who think 0.6 s; a CI run on a busy machine failed in this test); and that
        campaign is too small for its QC to be caught in the middle (on a quick machine the job ended before the
        kill). This one holds ``QC_CROWD`` simulated workers' HITs, all
        finished before the run: the job takes a while, and a recomputation afterwards must agree."""
        from assessment import simulation
        from assessment.campaigns import create_campaign
        from assessment.models import Campaign

        rated = Campaign.objects.select_related("dataset", "human_system").get(pk=self.made["campaign"])
        systems = list(rated.systems.all())
        campaign = create_campaign(
            name=f"{self.made['name']}-qc",
            dataset=rated.dataset,
            systems=systems,
            human_system=rated.human_system,
            qc_min_pairs=3,
            seed=9,
        )
        quality = {s.name: 40 + 10 * i for i, s in enumerate(systems)} | {rated.human_system.name: 80.0}
        crowd = {"diligent": QC_CROWD * 4 // 5, "random": QC_CROWD - QC_CROWD * 4 // 5}
        simulation.simulate_campaign(campaign, crowd, quality, seed=5, prefix=f"{self.made['name']}-qcsim")
        self.started["qc campaign"] = campaign.pk

    def start_qc(self):
        from annotation_site.jobs.models import Job
        from assessment.models import Campaign
        from assessment.services import start_qc_job

        job = start_qc_job(Campaign.objects.get(pk=self.started["qc campaign"]))
        self.started["qc"] = job.pk
        return lambda: Job.objects.get(pk=job.pk).status == Job.Status.RUNNING

    def start_metrics(self):
        from annotation_site.corpus.models import Caption, Reference, Video
        from annotation_site.jobs.models import Job
        from metrics_eval import services

        dataset_videos = Video.objects.filter(dataset__name=self.made["name"])
        if not Reference.objects.filter(video__in=dataset_videos).exists():
            # the human system's captions become the references of a reference set
            human = Caption.objects.filter(video__in=dataset_videos, system__is_human=True).prefetch_related(
                "sentences"
            )
            Reference.objects.bulk_create(
                [
                    Reference(
                        video_id=c.video_id, reference_set="gt_load", text=" ".join(s.text for s in c.sentences.all())
                    )
                    for c in human
                ]
            )
        from annotation_site.corpus.models import Dataset

        job = services.start_compute_job(Dataset.objects.get(name=self.made["name"]), ["bleu4", "cider"])
        self.started["metrics"] = job.pk
        return lambda: Job.objects.get(pk=job.pk).status == Job.Status.RUNNING

    def start_payments(self):
        from annotation_site.crowd import adapters, payments
        from annotation_site.crowd.models import Participant, Participation, Policy, Study
        from annotation_site.crowd.providers import provider_for
        from annotation_site.crowd.tasks import apply_payments
        from annotation_site.jobs import services as jobs
        from assessment.models import Assignment

        if self.fake is None:
            raise RuntimeError("the payment fault needs the fake platform started before the stack")
        deadline = time.monotonic() + 60
        while True:  # HITs finished by the participants so far
            done = list(
                Assignment.objects.filter(
                    hit__campaign_id=self.made["campaign"], completed_at__isnull=False
                ).values_list("pk", "hit_id")
            )
            if len(done) >= 5 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if not done:
            raise RuntimeError("no DA participant finished a HIT: nothing to pay")
        target = adapters.get("da").target(self.made["name"])
        external = self.fake.add_study(total_available_places=len(done))
        study = Study.objects.create(
            name=f"{self.made['name']}-pay",
            provider="prolific",
            protocol="da",
            object_id=target.object_id,
            target_name=target.name,
            external_id=external,
            completion_code="C1234567",
            status=Study.Status.PUBLISHED,
            reward=Decimal("1.50"),
            places=len(done),
            policy=Policy.APPROVE_ALL,
            bonus_scope="per-hit",
            bonus_amount=Decimal("0.25"),
        )
        namespace = provider_for(study).namespace()
        made_participants = []
        for index, (assignment, hit) in enumerate(done):
            platform_id = f"5f{index:022x}"
            submission = self.fake.add_submission(external, platform_id, status="AWAITING REVIEW")
            participant, created = Participant.objects.get_or_create(namespace=namespace, platform_id=platform_id)
            if created:
                made_participants.append(participant.pk)
            Participation.objects.create(
                study=study,
                participant=participant,
                external_submission_id=submission,
                work_key=str(assignment),
                unit_key=str(hit),
                status=Participation.Status.COMPLETED,
            )
        decisions = payments.preview(
            adapters.get("da"),
            target,
            policy=study.policy,
            bonus_scope=study.bonus_scope,
            bonus_amount=study.bonus_amount,
        )
        payments.record(target, decisions, policy=study.policy)
        self.fake.fail("POST", r".", kind="slow", times=100_000, delay=0.3)  # each call takes a while
        job = jobs.create_job("crowd-payments", scope=f"study:{study.pk}", total=1, message="waiting for a worker")
        apply_payments.delay(study.pk, str(job.pk))
        self.started["payments"] = {
            "study": study.pk,
            "job": job.pk,
            "submissions": len(done),
            "participants": made_participants,
            "target": (target.protocol, target.object_id),
        }
        return lambda: any(c.method == "POST" for c in self.fake.calls)

    # --- the fault ----------------------------------------------------------------------------------------------

    def kill_during(self, the_stack, kind):
        if not the_stack.has_worker:
            raise RuntimeError("celery-kill needs a Celery worker (set CELERY_BROKER_URL)")
        under_way = self.start(kind)
        deadline = time.monotonic() + RUNNING_TIMEOUT
        while not under_way():
            if time.monotonic() > deadline:
                return f"{kind}: the job never showed as running within {RUNNING_TIMEOUT} s: NOT injected"
            time.sleep(0.02)
        killed = the_stack.kill_worker()
        state = self.snapshot(kind)
        midway = self.job_status(kind) not in FINISHED  # (the job may have ended between the look and the kill)
        if midway:
            self.started.setdefault("killed", []).append(kind)
        wait = visibility_timeout() + 1
        time.sleep(wait)
        the_stack.start_worker()
        return (
            f"{kind}: Celery worker {killed} killed "
            f"{'while the job was running' if midway else 'after the job had ended: NOT in the middle'} ({state}); "
            f"new worker started after {wait:g} s (the broker's visibility timeout)"
        )

    def job_id(self, kind):
        return self.started[kind]["job"] if kind == "payments" else self.started[kind]

    def job_status(self, kind):
        from annotation_site.jobs.models import Job

        return Job.objects.get(pk=self.job_id(kind)).status

    def snapshot(self, kind):
        from annotation_site.jobs.models import Job

        job = Job.objects.get(pk=self.job_id(kind))
        if kind == "payments":
            posts = [c for c in self.fake.calls if c.method == "POST"]
            return f"job {job.status}, {len(posts)} payment-platform POSTs so far"
        return f"job {job.status}, {job.done}/{job.total or '?'} steps"

    # --- afterwards -----------------------------------------------------------------------------------------------

    def check(self, timeout=300):
        from annotation_site.jobs.models import Job

        report, ok = {}, True
        deadline = time.monotonic() + timeout
        for kind in KINDS:
            if kind not in self.started:
                continue
            while self.job_status(kind) not in FINISHED and time.monotonic() < deadline:
                time.sleep(0.5)
            job = Job.objects.get(pk=self.job_id(kind))
            entry = {"job": job.status, "killed in the middle": kind in self.started.get("killed", [])}
            entry.update(getattr(self, f"check_{kind}")())
            entry["ok"] = job.status == Job.Status.SUCCEEDED and entry["killed in the middle"] and not entry["problems"]
            ok &= entry["ok"]
            report[kind] = entry
        return ok, report

    def check_qc(self):
        from assessment import services
        from assessment.models import Assignment, Campaign, QCResult

        campaign = Campaign.objects.get(pk=self.started["qc campaign"])
        rows = list(QCResult.objects.filter(campaign=campaign).values_list("worker_id", "n_pairs", "status"))
        workers = set(Assignment.objects.filter(hit__campaign=campaign).values_list("worker_id", flat=True))
        problems = []
        if len(rows) != len({w for w, _, _ in rows}):
            problems.append("a worker has two QC rows")
        stored = {w: (n, s) for w, n, s in rows}
        fresh = services.store_qc(campaign)  # the same computation again: must change nothing
        again = {int(r.worker): (int(r.n_pairs), r.status) for r in fresh.itertuples()}
        if set(stored) != workers:
            problems.append(f"QC rows for {len(stored)} workers, {len(workers)} workers have assignments")
        changed = [w for w in stored if again.get(w) != stored[w]]
        if changed:
            problems.append(f"{len(changed)} workers' stored QC differs from a recomputation (worker {changed[0]})")
        return {"workers": len(workers), "qc_rows": len(rows), "problems": problems}

    def check_metrics(self):
        from django.db.models import Count

        from annotation_site.jobs.models import Job
        from metrics_eval.models import MetricScore

        job = Job.objects.get(pk=self.started["metrics"])
        scored = (job.result or {}).get("scored", {})  # what the delivery that finished computed
        per_metric = dict(
            MetricScore.objects.filter(metric__dataset__name=self.made["name"])
            .values_list("metric__name")
            .annotate(n=Count("id"))
        )
        problems = [
            f"{name}: {per_metric.get(name, 0)} scores stored, the job scored {n}"
            for name, n in scored.items()
            if per_metric.get(name, 0) != n or not n
        ]
        if set(per_metric) != {"bleu4", "cider"} or set(scored) != {"bleu4", "cider"}:
            problems.append(f"metrics stored: {sorted(per_metric)}, scored: {sorted(scored)}")
        return {"captions": (job.result or {}).get("captions"), "scores": per_metric, "problems": problems}

    def check_payments(self):
        from annotation_site.crowd.models import LedgerEntry

        info = self.started["payments"]
        rows = list(LedgerEntry.objects.filter(study_id=info["study"]).values_list("kind", "state", "submission_id"))
        problems = []
        unsettled = [r for r in rows if r[1] != LedgerEntry.State.CONFIRMED]
        if unsettled:
            problems.append(f"{len(unsettled)} ledger rows not confirmed ({unsettled[0][1]})")
        approvals = {}
        for call in self.fake.calls:
            if (
                call.method == "POST"
                and call.path.endswith("/transition/")
                and call.status == 200
                and (call.body or {}).get("action") == "APPROVE"
            ):
                sid = call.path.split("/")[-3]
                approvals[sid] = approvals.get(sid, 0) + 1
        bulk = [c for c in self.fake.calls if c.path.endswith("/bulk-approve/") and c.status == 200]
        for call in bulk:
            for sid in (call.body or {}).get("submission_ids", []):
                approvals[sid] = approvals.get(sid, 0) + 1
        twice = {s: n for s, n in approvals.items() if n > 1}
        if twice:
            problems.append(f"{len(twice)} submissions approved more than once")
        paid = self.fake.paid()
        paid_twice = {s: cents for s, cents in paid.items() if len(cents) > 1}
        if paid_twice:
            problems.append(f"{len(paid_twice)} submissions paid a bonus more than once: {paid_twice}")
        submissions = [s for s, v in self.fake.submissions.items()]
        not_approved = [s for s in submissions if self.fake.submissions[s]["status"] != "APPROVED"]
        if not_approved:
            problems.append(f"{len(not_approved)} submissions not approved on the platform")
        not_paid = [s for s in submissions if len(paid.get(s, [])) != 1]
        if not_paid:
            problems.append(f"{len(not_paid)} submissions without exactly one bonus")
        if self.fake.shape_errors:
            problems.append(f"requests the platform would refuse: {self.fake.shape_errors[:3]}")
        return {
            "submissions": len(submissions),
            "ledger_rows": len(rows),
            "platform_posts": sum(1 for c in self.fake.calls if c.method == "POST"),
            "bonuses_paid": sum(len(v) for v in paid.values()),
            "problems": problems,
        }
