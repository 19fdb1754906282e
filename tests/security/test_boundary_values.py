"""Boundary values on every JSON write endpoint of the API (issue #11, "Prove it" 3: every form and JSON endpoint
refuses hostile input with a clear message; no 5xx).

schemathesis (``test_api_fuzz.py``) generates bodies from the schema, but a generated body rarely passes an
endpoint's own checks (names that exist, answers that fit the page), and its numbers and strings rarely reach a
column's bounds: it did not find the 500s that a ``limit``, a workers-per-HIT or a title one character too long
caused on PostgreSQL (SQLite stores them). Here each write operation starts from a body that succeeds (written
below for the world of ``world.py``), and every value in it, at any depth, is replaced in turn by the values just
past the bounds of the database's columns:

- every integer range the database backend declares (``connection.ops.integer_field_ranges``), one past each end;
- every ``max_length`` of a text column of the project's models, one character longer;
- numbers no float or decimal column holds, and numeric text such as ``"1e20"``.

Each request runs in its own rolled-back transaction, so one cannot hide another. None may answer 5xx.
Operations are found from the schema: a new JSON write endpoint fails the test until it has a base body here (or
is listed as taking uploads only, which ``test_importers_fuzz.py`` covers).
"""

import json
import random
import time
import uuid

import pytest
from django.apps import apps
from django.db import connection, models, transaction
from django.test import Client
from django.urls import reverse

from annotation_site.demo import services as demo
from annotation_site.interchange.services import import_bundle
from annotation_site.judgment_tasks.presets import PRESETS
from assessment.models import Campaign
from benchmarks.load.client import factuality_answer, json_script, task_answer

from .test_api_fuzz import PARTICIPANT_ROUTES, api_schema, route_of
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

# Write operations whose body is a file upload (multipart), covered by the importers' property tests, and the one
# whose object the world does not have (an in-doubt payment batch: 404 for any body).
UPLOADS = {
    "api-dataset-import",
    "api-da-campaign-judgments",
    "api-factuality-labels",
    "api-metrics-import",
    "api-metrics-pairs",
    "api-tasks-items",
    "api-tasks-model-answers",
}
ABSENT = {"api-crowd-resolve"}
# Write operations that read nothing from their body (their path says it all).
BODILESS = {"api-factuality-reissue"}


def text_lengths():
    """One more than every text column's length in the project's models."""
    return sorted(
        {
            field.max_length + 1
            for model in apps.get_models()
            for field in model._meta.get_fields()
            if isinstance(field, models.CharField) and field.max_length
        }
    )


def integer_bounds():
    """One past each end of every integer range the database backend declares, and far beyond all of them."""
    values = {10**20, -(10**20)}
    for low, high in connection.ops.integer_field_ranges.values():
        values |= {low - 1, high + 1}
    return sorted(values)


def replacements(value, lengths, integers):
    """What replaces one value of a body: bounds of the kind of column such a value goes to, and a few of other
    kinds (a number where text is expected and the reverse)."""
    numbers = [*integers, 1e308, -1e308, 0.5]
    texts = ["x" * n for n in lengths] + ["1e20", "99999999999999999999.99", "-1"]
    if isinstance(value, bool):
        return [*integers, "x" * max(lengths)]
    if isinstance(value, (int, float)):
        return numbers + ["9" * 400]
    if isinstance(value, str):
        return texts + [2**63, -1]
    return []


# JSON values of every kind: each value of a body, containers included, is also replaced by those of other kinds
# (a list where a number was, an object where text was, null anywhere).
KINDS = [None, True, 7, "x", {}, [], [None]]


def other_kinds(value):
    return [new for new in KINDS if type(new) is not type(value)]


def shown(value):
    if isinstance(value, str) and len(value) > 30:
        return f"{value[:3]!r}... ({len(value)} characters)"
    return repr(value)


def nodes(value, path=()):
    """(path, value) of every value in a JSON document at any depth, lists and objects included (not the root)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in children:
        yield (*path, key), item
        yield from nodes(item, (*path, key))


def leaves(value, path=()):
    """(path, value) of every value in a JSON document that is not a list or an object."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def replaced(document, path, new):
    """A copy of ``document`` with the value at ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        return {key: replaced(item, rest, new) if key == head else item for key, item in document.items()}
    return [replaced(item, rest, new) if index == head else item for index, item in enumerate(document)]


def page_config(client, path):
    page = client.get(path)
    assert page.status_code == 200, path
    return json_script(page.content.decode(), "annotation-config")


def submission(answer):
    return {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer,
        "confirm": True,
        "time_spent": 30.5,
        "video_played": True,
        "next": True,
    }


def base_bodies(world, clients):
    """{route name: (persona, a body the operation accepts)} for the world's objects, or a list of (persona, body,
    path parameters) for an operation whose path chooses what the body means."""
    staff, annotator, participant = clients["staff"], clients["annotator"], clients["participant"]
    answers = random.Random(11)  # drawn as the load client draws them; every sentence marked wrong (spans tried too)
    dataset, campaign = world.dataset.name, world.campaign.name
    # Direct Assessment: a HIT of its own for a new worker (the demo's HITs are all done)
    Campaign.objects.filter(pk=world.campaign.pk).update(workers_per_hit=50)
    handed = staff.post(
        reverse("api-da-campaign-assignments", args=[campaign]), {"worker_id": "w-bounds"}, "application/json"
    )
    world.ids["da_token"] = handed.json()["token"]
    item = participant.get(reverse("api-da-assignment", args=[world.ids["da_token"]])).json()["item"]["id"]
    # a dataset large enough for a DA campaign's quality control
    import_bundle(demo.build_bundle(demo.demo_videos(12)), name="bounds", source_format="demo", label_set_name="l")
    staff.post(
        reverse("api-factuality-invite", args=[world.project.name]), {"usernames": ["perm-other"]}, "application/json"
    )
    own_fact = page_config(annotator, reverse("factuality-annotate", args=[world.ids["own_fact"]]))
    crowd_fact = page_config(participant, reverse("factuality-annotate-token", args=[world.ids["fact_token"]]))
    own_task = page_config(annotator, reverse("tasks-annotate", args=[world.ids["own_task"]]))
    return {
        "api-crowd-verify-code": ("staff", {"study": "perm-study", "code": "x", "participant_id": "p"}),
        "api-crowd-payments": (
            "staff",
            {"campaign": campaign, "policy": "approve-all", "bonus_scope": "per-hit", "bonus_amount": "0.50"},
        ),
        "api-crowd-studies": (
            "staff",
            {
                "target": campaign,
                "name": "b-study",
                "provider": "link",
                "reward": "1.50",
                "currency": "GBP",
                "estimated_minutes": 10,
                "places": 5,
                "hits_per_participant": 1,
                "title": "t",
                "description": "d",
                "idle_minutes": 30,
                "consent_text": "c",
                "instructions": "i",
                "completion_code": "C0DE",
                "bonus_amount": "0.25",
            },
        ),
        "api-crowd-study-action": [
            ("staff", {}, {"action": "publish"}),
            ("staff", {"add": 5}, {"action": "places"}),
            ("staff", {"days": 7, "max_hits": 2, "participant_ids": ["p-bounds", 17]}, {"action": "links"}),
            ("staff", {"participant_ids": ["p-bounds"], "reason": "spam"}, {"action": "block"}),
        ],
        "api-da-judgments": (
            "participant",
            {
                "item": item,
                "score": 50,
                "client_uuid": str(uuid.uuid4()),
                "elapsed_ms": 1000,
                "played": True,
                "watched_seconds": 3.5,
            },
        ),
        "api-da-campaign-list": (
            "staff",
            {
                "name": "b-camp",
                "dataset": "bounds",
                "reference_set": demo.REFERENCE_SET,
                "description": "d",
                "hit_size": 20,
                "pairs_per_hit": 2,
                "repeats_per_hit": 1,
                "min_control_distance": 2,
                "workers_per_hit": 1,
                "seed": 1,
                "qc_test": "paired_t",
                "qc_threshold": 0.05,
                "qc_min_pairs": 2,
            },
        ),
        "api-da-campaign-assignments": ("staff", {"worker_id": "w-1"}),
        "api-da-campaign-qc": ("staff", {}),
        "api-factuality-submit": ("annotator", submission(factuality_answer(own_fact, answers, wrong_share=1))),
        "api-factuality-draft": ("annotator", {"answer": factuality_answer(own_fact, answers, wrong_share=1)}),
        "api-factuality-token-submit": (
            "participant",
            submission(factuality_answer(crowd_fact, answers, wrong_share=1)),
        ),
        "api-factuality-token-draft": (
            "participant",
            {"answer": factuality_answer(crowd_fact, answers, wrong_share=1)},
        ),
        "api-factuality-projects": (
            "staff",
            {"name": "b-proj", "dataset": dataset, "annotators_per_video": 3, "instructions": "i", "description": "d"},
        ),
        "api-factuality-project": (
            "staff",
            {"description": "d", "instructions": "i", "annotators_per_video": 3, "question": "q"},
        ),
        "api-factuality-invite": ("staff", {"usernames": ["perm-account"]}),
        "api-factuality-aggregate": ("staff", {"ties": "error"}),
        "api-factuality-next": ("annotator", {}),
        # a preset, and definitions written out with every kind of question and option of the presets
        "api-tasks": [
            (
                "staff",
                {
                    "name": "b-task",
                    "dataset": dataset,
                    "preset": "fifa-faithfulness",
                    "annotators_per_item": 3,
                    "title": "t",
                    "description": "d",
                    "instructions": "i",
                },
                {},
            )
        ]
        + [
            ("staff", {"name": "b-task", "dataset": dataset, "definition": PRESETS[preset]["definition"]}, {})
            for preset in ("fifa-question-quality", "fifa-conversion", "vc-inspector")
        ],
        "api-tasks-detail": (
            "staff",
            {"title": "t", "description": "d", "instructions": "i", "annotators_per_item": 3},
        ),
        "api-tasks-submit": ("annotator", submission(task_answer(own_task["questions"], answers))),
        "api-tasks-draft": ("annotator", {"answer": task_answer(own_task["questions"], answers)}),
        "api-tasks-invite": ("staff", {"usernames": ["perm-other"]}),
        "api-tasks-next": ("annotator", {}),
        "api-tasks-participants": (
            "staff",
            {"provider": "panel", "external_id": "e-1", "limit": 5, "finish_url": "https://example.org/done"},
        ),
        "video-list": (
            "staff",
            {"dataset": dataset, "external_id": "v-new", "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"},
        ),
        "api-metrics-compute": ("staff", {"metrics": ["bleu1"], "reference_sets": [demo.REFERENCE_SET]}),
        "api-metrics-correlate": (
            "staff",
            {"human": "factuality", "metrics": ["toy"], "resamples": 10, "seed": 1, "confidence": 0.95, "alpha": 0.05},
        ),
    }


def test_no_value_past_a_column_bound_makes_a_json_endpoint_fail(settings):
    without_rate_limits(settings)
    world = World()
    clients = {persona: Client(raise_request_exception=False) for persona in ("staff", "annotator", "participant")}
    users = {"staff": world.users["staff"], "annotator": world.users["annotator"], "participant": None}
    clients["staff"].force_login(users["staff"])
    clients["annotator"].force_login(users["annotator"])
    bodies = base_bodies(world, clients)
    lengths, integers = text_lengths(), integer_bounds()
    errors, refused_bases, missing, tried = [], [], [], 0
    for result in api_schema().get_all_operations():
        operation = result.ok()
        method = operation.method.upper()
        if method not in ("POST", "PUT", "PATCH"):
            continue
        name, params = route_of(operation.path)
        if name in UPLOADS or name in ABSENT or name in BODILESS:
            continue
        if name not in bodies:
            missing.append(f"{method} {operation.path} ({name})")
            continue
        cases = bodies[name] if isinstance(bodies[name], list) else [(*bodies[name], {})]
        for persona, body, overrides in cases:
            values = {**world.kwargs(name, ["pk" if p == "id" else p for p in params]), **overrides}
            path = operation.path
            for param, value in zip(params, values.values()):
                path = path.replace("{" + param + "}", str(value))

            def send(document, client=clients[persona], user=users[persona], method=method, path=path):
                with transaction.atomic():
                    if user is not None:  # inside: a rolled-back request cannot leave the client logged out
                        client.force_login(user)
                    response = client.generic(method, path, data=json.dumps(document), content_type="application/json")
                    transaction.set_rollback(True)
                return response

            answer = send(body)
            if not 200 <= answer.status_code < 300:
                refused_bases.append(f"{method} {path} ({name}) -> {answer.status_code}: {answer.content[:300]!r}")
                continue
            changes = [(leaf, new) for leaf, value in leaves(body) for new in replacements(value, lengths, integers)]
            changes += [(node, new) for node, value in nodes(body) for new in other_kinds(value)]
            for where, new in changes:
                tried += 1
                answer = send(replaced(body, where, new))
                if answer.status_code >= 500:
                    errors.append(f"{method} {path} ({name}) {'.'.join(map(str, where))} = {shown(new)}")
    assert not missing, "write operations without a base body here:\n" + "\n".join(missing)
    assert not refused_bases, "base bodies the operation refused:\n" + "\n".join(refused_bases)
    assert not errors, f"{len(errors)} of {tried} requests answered 5xx:\n" + "\n".join(errors)
    assert tried > 2500, tried
    assert set(PARTICIPANT_ROUTES) - set(bodies) == {"api-da-assignment"}  # a GET only


def test_no_value_of_a_signed_webhook_makes_it_fail(client, settings):
    """The Prolific webhook reads JSON that is not in the API schema: each value of a signed status change (one
    that reaches a participation) is replaced as above, by values past a column's bounds and by values of every
    other kind; each request in its own rolled-back transaction. No 5xx."""
    from annotation_site.crowd.models import Participant, Participation
    from annotation_site.crowd.webhooks import signature

    secret = settings.PROLIFIC_WEBHOOK_SECRET = "bounds-hook-secret"
    client.raise_request_exception = False
    world = World()
    study = world.mturk_study("bounds-prolific")
    study.provider, study.external_id = "prolific", "bounds-study"
    study.save(update_fields=["provider", "external_id"])
    participant = Participant.objects.create(namespace="prolific", platform_id="5f" + "a" * 22)
    Participation.objects.create(study=study, participant=participant, external_submission_id="bounds-submission")
    event = {
        "event_id": "bounds-event",
        "event_type": "submission.status.change",
        "resource_id": "bounds-submission",
        "status": "RETURNED",
        "study_id": "bounds-study",
    }
    lengths, integers = text_lengths(), integer_bounds()

    def send(document):
        body = json.dumps(document)
        timestamp = str(int(time.time()))
        with transaction.atomic():
            response = client.post(
                reverse("crowd-webhook-prolific"),
                data=body,
                content_type="application/json",
                HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature(secret, timestamp, body.encode()),
                HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
            )
            transaction.set_rollback(True)
        return response

    assert send(event).json() == {"created": True, "outcome": "released"}  # the event reaches the participation
    changes = [(leaf, new) for leaf, value in leaves(event) for new in replacements(value, lengths, integers)]
    changes += [(node, new) for node, value in nodes(event) for new in other_kinds(value)]
    errors = [
        f"{where[0]} = {shown(new)}" for where, new in changes if send(replaced(event, where, new)).status_code >= 500
    ]
    assert len(changes) > 100, len(changes)
    assert not errors, f"{len(errors)} of {len(changes)} webhooks answered 5xx:\n" + "\n".join(errors)
