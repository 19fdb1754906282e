"""Fixtures of the crowd tests: the fake Prolific server (real HTTP on loopback), a toy protocol adapter (the
crowd app is tested on its own; the DA and factuality adapters have their own tests) and helpers to lay out a
study with participants who did their HITs."""

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation_site.crowd import adapters, links
from annotation_site.crowd.adapters import AssignmentRecord, QCOutcome, QCStatus, Target, Work
from annotation_site.crowd.models import Participant, Participation, Study

from .fake_prolific import TOKEN, FakeProlific


@pytest.fixture
def fake_prolific(settings):
    fake = FakeProlific().start()
    settings.PROLIFIC_API_URL = fake.url
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_TIMEOUT = 2.0
    settings.PROLIFIC_BACKOFF = 0.01
    yield fake
    fake.stop()


@dataclass
class ToyTarget:
    name: str
    object_id: int
    units: list  # [(unit key, capacity)]
    records: dict = field(default_factory=dict)  # work key -> AssignmentRecord
    completed: set = field(default_factory=set)
    released: set = field(default_factory=set)
    qc: dict = field(default_factory=dict)  # worker key -> QCOutcome


class ToyAdapter(adapters.ProtocolAdapter):
    """A protocol in memory: units with a capacity, one Work per worker and unit."""

    protocol = "toy"

    def __init__(self):
        self.targets = {}
        self.next_key = 1

    def add(self, name, units):
        target = ToyTarget(name, len(self.targets) + 1, list(units))
        self.targets[name] = target
        return Target("toy", target.object_id, name)

    def _t(self, target):
        return self.targets[target.name]

    def target(self, name):
        t = self.targets.get(name)
        return Target("toy", t.object_id, name) if t else None

    def target_by_id(self, object_id):
        return next(
            (Target("toy", t.object_id, t.name) for t in self.targets.values() if t.object_id == object_id), None
        )

    def describe(self, target):
        t = self._t(target)
        return adapters.Description(
            title=f"Rate captions ({t.name})",
            description="Rate video captions.",
            units=[adapters.Unit(k, f"HIT {k}", c) for k, c in t.units],
        )

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        t = self._t(target)
        live = [r for k, r in t.records.items() if k not in t.released]
        mine = [r for r in live if r.worker_id == worker_key and r.key not in t.completed]
        if mine:
            return self.work(target, mine[0].key)
        done_units = {r.hit_id for r in live if r.worker_id == worker_key}
        for key, capacity in t.units:
            if unit_key is not None and key != unit_key:
                continue
            taken = sum(1 for r in live if r.hit_id == key)
            if taken < capacity and key not in done_units:
                work_key = str(self.next_key)
                self.next_key += 1
                t.records[work_key] = AssignmentRecord(
                    work_key, worker_key, key, False, QCOutcome(QCStatus.IN_PROGRESS)
                )
                return self.work(target, work_key)
        return None

    def work(self, target, work_key):
        t = self._t(target)
        r = t.records.get(work_key)
        if r is None:
            return None
        return Work(work_key, r.hit_id, f"HIT {r.hit_id}", f"/toy/{work_key}/", work_key in t.completed)

    def complete(self, target, work_key):
        self._t(target).completed.add(work_key)

    def release(self, target, work_key):
        t = self._t(target)
        if work_key in t.released:
            return False
        t.released.add(work_key)
        return True

    def assignments(self, target):
        t = self._t(target)
        out = []
        for key, r in t.records.items():
            completed = key in t.completed
            qc = t.qc.get(r.worker_id, QCOutcome(QCStatus.IN_PROGRESS))
            out.append(AssignmentRecord(key, r.worker_id, r.hit_id, completed, qc, released=key in t.released))
        return out

    def answer_spec(self, target):
        def validate(answers):
            value = answers.get("score", "")
            return [] if value.isdigit() and 0 <= int(value) <= 100 else [("score", f"{value!r} is not 0-100")]

        return ["score"], validate

    def check_results(self, target, rows):
        units = {k for k, _ in self._t(target).units}
        return [
            (r.line, "Input.hit_id", f"unknown HIT {r.inputs.get('hit_id')!r}")
            for r in rows
            if r.inputs.get("hit_id") not in units
        ]

    def import_results(self, target, rows, worker_keys):
        t = self._t(target)
        out = {}
        for r in rows:
            key = f"mt-{r.assignment_id}"
            if key not in t.records:
                t.records[key] = AssignmentRecord(
                    key, worker_keys[r.worker_id], r.inputs["hit_id"], True, QCOutcome(QCStatus.IN_PROGRESS)
                )
                t.completed.add(key)
                self.imported = getattr(self, "imported", 0) + 1
            out[r.assignment_id] = key
        return adapters.Imported(out)

    def preview(self, target, unit_key):
        return {
            "statement": "The text adequately describes what took place in the video.",
            "items": [{"text": f"a caption of unit {unit_key}", "video_url": ""}],
        }


@pytest.fixture
def toy():
    adapter = ToyAdapter()
    adapters.register(adapter)
    yield adapter
    adapters.unregister("toy")


PASSED = QCOutcome(QCStatus.PASSED, "wilcoxon", 0.001, 12, 0.05)
FAILED = QCOutcome(QCStatus.FAILED, "wilcoxon", 0.4, 12, 0.05)
SHORT = QCOutcome(QCStatus.INSUFFICIENT_DATA, "wilcoxon", None, 3, 0.05, "3 pairs, 10 needed")


def prolific_study(fake, target, name="pilot", **fields):
    from annotation_site.crowd import adapters as registry

    places = sum(u.capacity for u in registry.get(target.protocol).describe(target).units)
    external = fake.add_study(total_available_places=places)
    fields.setdefault("places", places)
    defaults = dict(
        provider="prolific",
        protocol=target.protocol,
        object_id=target.object_id,
        target_name=target.name,
        external_id=external,
        completion_code="C1234567",
        status=Study.Status.PUBLISHED,
        reward=Decimal("1.50"),
    )
    defaults.update(fields)
    return Study.objects.create(name=name, **defaults)


def worked(toy, target, study, fake, platform_id, *, qc=None, complete=True, status="AWAITING REVIEW"):
    """A participant who took a HIT of the study through Prolific (a submission on the fake server)."""
    submission = fake.add_submission(study.external_id, platform_id, status=status) if fake else ""
    from annotation_site.crowd.providers import provider_for

    namespace = provider_for(study).namespace()
    participant, _ = Participant.objects.get_or_create(namespace=namespace, platform_id=platform_id)
    work = toy.assign(target, participant.worker_key)
    assert work is not None
    if complete:
        toy.complete(target, work.key)
    if qc is not None:
        toy.targets[target.name].qc[participant.worker_key] = qc
    participation = Participation.objects.create(
        study=study,
        participant=participant,
        external_submission_id=submission,
        work_key=work.key,
        unit_key=work.unit_key,
        unit_label=work.unit_label,
        status=Participation.Status.COMPLETED if complete else Participation.Status.WORKING,
    )
    return participation


def study_of(protocol, work, name, provider="link", **fields):
    """A published study of ``work`` (a DA campaign, a factuality project or a judgment task: its pk and name)
    under ``protocol``; ``fields`` add to or override that."""
    defaults = dict(
        provider=provider,
        protocol=protocol,
        object_id=work.pk,
        target_name=work.name,
        status=Study.Status.PUBLISHED,
    )
    defaults.update(fields)
    return Study.objects.create(name=name, **defaults)


def link_study(protocol, work, name, **fields):
    """A published signed-link study of ``work`` whose entry link carries the participant's id as ``pid``."""
    return study_of(protocol, work, name, provider="link", id_parameter="pid", **fields)


def start_by_link(client, study, params):
    """A participant opens the study's entry link with ``params`` and presses Start: (the participation's token,
    the Start response)."""
    page = client.get(reverse("crowd-entry", args=[links.entry_token(study)]), params)
    token = re.search(r"/crowd/w/([^/]+)/start/", page.content.decode()).group(1)
    return token, client.post(reverse("crowd-start", args=[token]))


def payments_dry_run(target_name, policy="approve-passing"):
    """The document ``crowd_payments --dry-run --format json`` prints for the target named ``target_name``."""
    out = StringIO()
    call_command(
        "crowd_payments",
        "--campaign",
        target_name,
        "--policy",
        policy,
        "--dry-run",
        "--format",
        "json",
        stdout=out,
        stderr=StringIO(),
    )
    return json.loads(out.getvalue())


@pytest.fixture
def toy_campaign(toy):
    """Toy campaign camp-7 with a published link study camp-7-panel (bonus 0.40 per passing HIT) and four
    participants: passed, failed, too short to test, still working."""
    target = toy.add("camp-7", [(str(i), 1) for i in range(1, 6)])
    study = Study.objects.create(
        name="camp-7-panel",
        provider="link",
        protocol="toy",
        object_id=target.object_id,
        target_name="camp-7",
        status="published",
        bonus_scope="per-passing-hit",
        bonus_amount=Decimal("0.40"),
    )
    worked(toy, target, study, None, "w-pass", qc=PASSED)
    worked(toy, target, study, None, "w-fail", qc=FAILED)
    worked(toy, target, study, None, "w-short", qc=SHORT)
    worked(toy, target, study, None, "w-busy", qc=PASSED, complete=False)
    return target, study
