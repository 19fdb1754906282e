"""Quality control in Celery after each completed HIT: eagerly on the embedded default, by a real worker
consuming from the broker when CELERY_BROKER_URL is set. Tasks take primary keys and are safe to run twice."""

import threading
import uuid

import pytest
from celery.signals import task_prerun
from scipy import stats

from annotation_site.jobs.models import Job
from assessment import services, tasks, workers
from assessment.models import Item, QCResult
from assessment.services import start_qc_job
from tests.conftest import wait_until

from .conftest import make_dataset, small_campaign

pytestmark = pytest.mark.integration
DILIGENT = {"original": 90, "degraded": 15}


def complete_hit(assignment, scores=DILIGENT):
    items = list(Item.objects.filter(hit=assignment.hit).order_by("position"))
    given = []
    for n, item in enumerate(items):
        score = scores.get(item.item_type, 40 + n)
        given.append((item.item_type, score))
        services.submit(assignment, item_id=item.pk, score=score, client_uuid=uuid.uuid4(), played=True)
    return given


@pytest.fixture
def record_qc_tasks():
    ran = []

    def record(sender=None, args=(), **kwargs):
        if sender.name == "assessment.tasks.compute_worker_qc":
            ran.append((tuple(args), threading.get_ident()))

    task_prerun.connect(record, weak=False)
    yield ran
    task_prerun.disconnect(record)


def qc_campaign(name):
    """A campaign (and dataset) ``name`` whose HITs of 40 items hold the 6 pairs its QC needs."""
    return small_campaign(
        make_dataset(name, n_videos=20),
        name,
        hit_size=40,
        pairs_per_hit=6,
        repeats_per_hit=2,
        min_control_distance=10,
        qc_min_pairs=6,
    )


@pytest.mark.django_db(transaction=True)
def test_qc_is_computed_after_a_completed_hit(celery_worker, record_qc_tasks, settings):
    campaign = qc_campaign("celery-qc")
    worker = workers.worker_by_external_id("careful")
    assignment = services.assign(campaign, worker)
    half = list(Item.objects.filter(hit=assignment.hit).order_by("position"))[:20]
    for item in half:  # half a HIT: no QC yet
        services.submit(assignment, item_id=item.pk, score=50, client_uuid=uuid.uuid4(), played=True)
    assert not QCResult.objects.exists()
    for item in list(Item.objects.filter(hit=assignment.hit).order_by("position"))[20:]:
        services.submit(
            assignment, item_id=item.pk, score=DILIGENT.get(item.item_type, 50), client_uuid=uuid.uuid4(), played=True
        )
    result = wait_until(
        lambda: QCResult.objects.filter(campaign=campaign, worker=worker).first(),
        timeout=60,
        what="the worker's QC result",
    )
    assert (result.test, result.threshold, result.min_pairs, result.n_pairs) == ("wilcoxon", 0.05, 6, 6)
    scores = {j.item_id: j.score for j in assignment.judgments.all()}
    originals = Item.objects.filter(hit=assignment.hit, item_type="original").order_by("pk")
    x = [scores[i.pk] for i in originals]
    y = [scores[i.control_of_id] for i in originals]  # each original's degraded copy
    assert result.p_value == pytest.approx(stats.wilcoxon(x, y, alternative="greater").pvalue)
    assert result.passed == (result.p_value < 0.05)
    runs = [thread for args, thread in record_qc_tasks if args == (campaign.pk, worker.pk)]
    assert len(runs) == 1
    if celery_worker is None:
        assert settings.CELERY_TASK_ALWAYS_EAGER and runs[0] == threading.get_ident()
    else:
        assert runs[0] != threading.get_ident()


@pytest.mark.django_db(transaction=True)
def test_the_qc_task_is_safe_to_run_twice(celery_worker):
    campaign = qc_campaign("twice")
    worker = workers.worker_by_external_id("diligent")
    complete_hit(services.assign(campaign, worker))
    first = wait_until(lambda: QCResult.objects.filter(campaign=campaign, worker=worker).first(), what="QC")
    assert first.passed and first.p_value == pytest.approx(1 / 64)  # 6 positive differences: exact 1/2^6
    tasks.compute_worker_qc.delay(campaign.pk, worker.pk)
    tasks.compute_worker_qc(campaign.pk, worker.pk)
    wait_until(
        lambda: QCResult.objects.get(campaign=campaign, worker=worker).computed_at > first.computed_at,
        what="the second run",
    )
    assert QCResult.objects.filter(campaign=campaign).count() == 1
    again = QCResult.objects.get(campaign=campaign, worker=worker)
    assert (again.p_value, again.passed, again.n_pairs) == (first.p_value, first.passed, first.n_pairs)
    assert tasks.compute_worker_qc(10**9, worker.pk) is None  # a campaign deleted meanwhile


@pytest.mark.django_db(transaction=True)
def test_campaign_qc_runs_as_a_job(celery_worker):
    campaign = qc_campaign("qc-job")
    complete_hit(services.assign(campaign, workers.worker_by_external_id("good")))
    complete_hit(services.assign(campaign, workers.worker_by_external_id("same")), {"original": 50, "degraded": 50})
    QCResult.objects.all().delete()
    job = start_qc_job(campaign)
    job = wait_until(lambda: Job.objects.filter(pk=job.pk, status=Job.Status.SUCCEEDED).first(), what="the QC job")
    assert job.result == {"workers": 2, "passed": 1}
    assert dict(QCResult.objects.values_list("worker__external_id", "passed")) == {"good": True, "same": False}
