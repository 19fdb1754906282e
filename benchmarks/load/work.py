"""The work of a load run, made through the platform's own services (not timed): a generated dataset, a Direct
Assessment campaign with one signed link per participant (the researcher's "assign workers" action), a
factuality project whose annotators are site accounts already logged in (a session each: the login itself is
not part of the load), and a configurable judgment task whose participants arrive by signed crowd links.

Everything is named after the run (``load-<run id>``), so runs can share a database; ``verify`` checks and
``remove`` deletes exactly what a run made.
"""

import json
from dataclasses import dataclass

DA_HIT_SIZE = 20


@dataclass
class Plan:
    participants: int = 200
    mix: tuple = (("da", 2), ("factuality", 1), ("task", 1))
    hit_size: int = DA_HIT_SIZE
    videos_each: int = 5  # factuality videos per participant
    items_each: int = 10  # task items per participant
    task_preset: str = "fifa-faithfulness"
    task_definition: dict | None = None  # a definition instead of the preset

    def counts(self):
        order = [name for name, weight in self.mix for _ in range(weight)]
        out = {name: 0 for name in ("da", "factuality", "task")}
        for i in range(self.participants):
            out[order[i % len(order)]] += 1
        return out


def _field_value(entry, caption_text, index):
    name = entry["name"]
    if name == "score":
        return str(1 + index % 5)
    return caption_text if index % 2 == 0 or entry.get("optional") is not True else ""


def make_work(run, plan):
    """Create the run's campaign, project and task with enough work; return the participants (JSON-able dicts:
    protocol, what to open, credentials) and the ids ``verify`` needs."""
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from annotation_site.annotators.services import invite
    from annotation_site.corpus.models import Caption
    from annotation_site.factuality import projects
    from annotation_site.judgment_tasks import imports, participants
    from annotation_site.judgment_tasks import services as task_services
    from assessment import services as da
    from assessment import workers as da_workers
    from assessment.models import HIT
    from benchmarks.da_common import generate_dataset, one_worker_campaign

    counts = plan.counts()
    name = f"load-{run}"
    n_hits = counts["da"] + 2
    # videos the planner needs per HIT (measured: 15 / 4 for HITs of 20 items; a quarter of the items for larger)
    per_hit = 15 / 4 if plan.hit_size <= DA_HIT_SIZE else plan.hit_size / 4
    n_videos = max(
        int(n_hits * per_hit) + 10,
        counts["factuality"] * plan.videos_each + 10,
        (counts["task"] * plan.items_each) // 3 + 10,
    )
    dataset, systems = generate_dataset(name, n_videos=n_videos, n_systems=4, seed=11)
    out = {"run": run, "name": name, "participants": []}

    if counts["da"]:
        campaign = one_worker_campaign(name, dataset, systems, hit_size=plan.hit_size)
        out["campaign"] = campaign.pk
        hits = list(HIT.objects.filter(campaign=campaign).order_by("number"))
        if len(hits) < counts["da"]:
            raise RuntimeError(f"the campaign has {len(hits)} HITs for {counts['da']} DA participants")
        for i in range(counts["da"]):
            worker = da_workers.worker_by_external_id(f"{name}-da{i:04d}", source="link")
            assignment = da.create_assignment(hits[i], worker)
            out["participants"].append(
                {"protocol": "da", "key": f"da{i:04d}", "url": f"/da/a/{da.assignment_token(assignment)}/"}
            )

    if counts["factuality"]:
        usernames = [f"{name}-f{i:04d}" for i in range(counts["factuality"])]
        project = projects.create_project(
            projects.ProjectSpec(
                name=name,
                dataset=dataset,
                systems=[s for s in systems[:3]],
                annotators_per_video=1,
                shuffle_systems=True,
            )
        )
        out["project"] = project.pk
        for i, username in enumerate(usernames):
            annotator = projects.add_member(project, invite(username)[0])
            user = annotator.user
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            # the backend that loads users (django-axes' backend, listed first, only checks lockouts)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            out["participants"].append(
                {
                    "protocol": "factuality",
                    "key": f"f{i:04d}",
                    "session": session.session_key,
                    "session_cookie": settings.SESSION_COOKIE_NAME,
                    "start": f"/factuality/projects/{name}/start/",
                    "limit": plan.videos_each,
                }
            )

    if counts["task"]:
        task = task_services.create_task(
            name=name,
            dataset=dataset,
            preset=plan.task_preset if not plan.task_definition else "",
            definition=plan.task_definition,
            annotators_per_item=1,
        )
        out["task"] = task.pk
        definition = task.definition
        rng = np.random.default_rng(3)
        n_items = counts["task"] * plan.items_each + 10
        captions = list(
            Caption.objects.filter(video__dataset=dataset, system__in=systems[:3])
            .select_related("video", "system")
            .order_by("video__position", "system__position")[:n_items]
        )
        lines = []
        for index, caption in enumerate(captions):
            text = " ".join(rng.choice(["a", "man", "rides", "the", "red", "bike", "in", "park"], 8))
            item = {"video_id": caption.video.external_id, "system": caption.system.name}
            for entry in definition["fields"]:
                item[entry["name"]] = _field_value(entry, text, index)
            for entry in definition["lists"]:
                item[entry["name"]] = [f"{entry['name']} {k}" for k in range(3)]
            lines.append(json.dumps(item))
        imports.import_items(task, "\n".join(lines) + "\n", filename=f"{name}.jsonl")
        for i in range(counts["task"]):
            annotator = participants.admit(task, provider="load", external_id=f"{name}-t{i:04d}")
            token = participants.token_for(task, annotator, limit=plan.items_each)
            out["participants"].append(
                {"protocol": "task", "key": f"t{i:04d}", "token": token, "url": f"/tasks/p/{token}/"}
            )
    # interleave the protocols so that every moment of the run mixes them
    by = {}
    for p in out["participants"]:
        by.setdefault(p["protocol"], []).append(p)
    order = [name for name, weight in plan.mix for _ in range(weight)]
    mixed, cursor = [], {k: 0 for k in by}
    while len(mixed) < len(out["participants"]):
        for protocol in order:
            if protocol in by and cursor[protocol] < len(by[protocol]):
                mixed.append(by[protocol][cursor[protocol]])
                cursor[protocol] += 1
    out["participants"] = mixed
    out["planned_submissions"] = (
        counts["da"] * plan.hit_size + counts["factuality"] * plan.videos_each + counts["task"] * plan.items_each
    )
    return out


def remove(made):
    """Delete what ``make_work`` made for this run (cascades to judgments, submissions, assignments)."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    from annotation_site.annotators.models import Annotator
    from annotation_site.corpus.models import Dataset
    from annotation_site.factuality.models import Project
    from annotation_site.judgment_tasks.models import Task
    from assessment.models import Campaign, Worker

    name = made["name"]
    Session.objects.filter(session_key__in=[p["session"] for p in made["participants"] if "session" in p]).delete()
    Task.objects.filter(name=name).delete()
    Project.objects.filter(name=name).delete()
    Campaign.objects.filter(name__in=[name, f"{name}-qc"]).delete()  # (-qc: the QC fault's, jobs.py)
    Worker.objects.filter(external_id__startswith=f"{name}-").delete()
    Annotator.objects.filter(provider="load", external_id__startswith=f"{name}-").delete()
    get_user_model().objects.filter(username__startswith=f"{name}-").delete()
    Dataset.objects.filter(name=name).delete()
