"""Every operation of the OpenAPI schema, fed with inputs schemathesis generates from it, as staff and as a crowd
participant: no request may end in a server error (issue #11, "Prove it" 3).

The schema is the one drf-spectacular serves at /api/schema/. Path parameters are filled with the world's real
objects and signed tokens (``tests/security/world.py``) so that the generated bodies and queries reach the code
behind the permission checks; everything else (bodies, queries, form fields, headers) is generated, valid and
invalid alike. Requests go through Django's test client, so they run inside the test's database transaction.
"""

import json
import os
import re
from urllib.parse import urlencode

import pytest
import schemathesis
from django.db import transaction
from django.test import Client
from django.urls import resolve
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("CAPTIONEVAL_FUZZ_EXAMPLES", "12"))


def api_schema():
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    document = json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    return schemathesis.openapi.from_dict(document)


def route_of(path_template):
    """(url name, parameter names) of a schema path such as ``/api/da/assignments/{token}/``."""
    params = re.findall(r"{(\w+)}", path_template)
    sample = re.sub(r"{(\w+)}", lambda m: "1" if m.group(1) in ("pk", "id") else "x", path_template)
    return resolve(sample).url_name, params


def request_of(case, world, *, participant_token=None):
    """The Django test client call of a generated case, with the world's values in the path and the persona's
    credentials instead of whatever the generator put in Authorization or cookies."""
    name, params = route_of(case.operation.path)
    # drf-spectacular names a router's primary key "id" where the URL pattern says "pk"
    real = {
        param: value
        for param, value in zip(params, world.kwargs(name, ["pk" if p == "id" else p for p in params]).values())
    }
    if participant_token and "pk" in real and name.startswith("api-tasks-"):
        real["pk"] = world.ids["task_item"]  # the participant's own item, not the logged-in annotator's
    path = case.operation.path
    for param in params:
        path = path.replace("{" + param + "}", str(real[param]))
    kwargs = case.as_transport_kwargs(base_url="http://testserver")
    query = urlencode(kwargs.get("params") or {}, doseq=True)
    if query:
        path = f"{path}?{query}"
    headers = {
        k: v
        for k, v in (kwargs.get("headers") or {}).items()
        if k.lower() not in ("authorization", "cookie", "content-type", "content-length", "host")
    }
    if participant_token:
        headers["X-Participant-Token"] = participant_token
    method = kwargs["method"].lower()
    if kwargs.get("json") is not None or "json" in kwargs:
        return (
            method,
            path,
            {"data": json.dumps(kwargs["json"]), "content_type": "application/json", "headers": headers},
        )
    if kwargs.get("files"):
        fields = {}
        for field, (_, value, *_extra) in kwargs["files"]:
            fields[field or "field"] = value
        return method, path, {"data": fields, "headers": headers, "multipart": True}
    if kwargs.get("data") is not None:
        data = kwargs["data"]
        if isinstance(data, dict):
            return (
                method,
                path,
                {
                    "data": urlencode(data, doseq=True),
                    "content_type": "application/x-www-form-urlencoded",
                    "headers": headers,
                },
            )
        return method, path, {"data": data, "content_type": "application/octet-stream", "headers": headers}
    return method, path, {"headers": headers}


def send(client, method, path, spec):
    headers = spec.get("headers", {})
    if spec.get("multipart"):
        if method != "post":
            return client.generic(method.upper(), path, headers=headers)
        return client.post(path, data=spec["data"], headers=headers)
    if "data" in spec:
        return client.generic(
            method.upper(), path, data=spec["data"], content_type=spec["content_type"], headers=headers
        )
    return client.generic(method.upper(), path, headers=headers)


def fuzz(schema, world, client, *, participant_token=None, only=None, statuses=None):
    """Run every operation (or those ``only`` accepts); the list of server errors found. ``statuses`` (a dict)
    collects {operation: set of status codes} to show that the requests got past the permission checks."""
    errors = []
    statuses = statuses if statuses is not None else {}

    def exercise(operation, name):
        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            method, path, spec = request_of(case, world, participant_token=participant_token)
            response = send(client, method, path, spec)
            statuses.setdefault(f"{operation.method.upper()} {operation.path}", set()).add(response.status_code)
            if response.status_code >= 500:
                errors.append(
                    f"{method.upper()} {operation.path} ({name}) -> {response.status_code}: "
                    f"{str(spec.get('data', ''))[:200]!r}"
                )

        try:
            run()
        except Unsatisfiable:
            errors.append(f"{operation.method.upper()} {operation.path}: schemathesis could not generate a case")

    for result in schema.get_all_operations():
        operation = result.ok()
        name, _ = route_of(operation.path)
        if only is None or only(name):
            exercise(operation, name)
    return errors


def test_no_generated_request_makes_a_staff_endpoint_fail(settings):
    without_rate_limits(settings)
    world = World()
    client = Client(raise_request_exception=False)
    client.force_login(world.users["staff"])
    statuses = {}
    errors = fuzz(api_schema(), world, client, statuses=statuses)
    assert not errors, "\n".join(sorted(set(errors)))
    # the generated requests did real work: most operations answered a success to some of them
    succeeded = [op for op, codes in statuses.items() if any(200 <= c < 300 for c in codes)]
    assert len(statuses) > 50 and len(succeeded) > len(statuses) / 2, statuses


PARTICIPANT_ROUTES = (
    "api-da-assignment",
    "api-da-judgments",
    "api-factuality-token-draft",
    "api-factuality-token-submit",
    "api-tasks-draft",
    "api-tasks-submit",
    "api-tasks-next",
)


def test_no_generated_request_makes_a_participant_endpoint_fail(settings):
    """A crowd participant holds signed tokens only: the endpoints a participant's pages call, with the world's
    real tokens, and a task participant's token in X-Participant-Token."""
    without_rate_limits(settings)
    world = World()
    client = Client(raise_request_exception=False)
    statuses = {}
    errors = fuzz(
        api_schema(),
        world,
        client,
        participant_token=world.ids["task_token"],
        only=lambda name: name in PARTICIPANT_ROUTES,
        statuses=statuses,
    )
    assert not errors, "\n".join(sorted(set(errors)))
    assert len(statuses) == 7, statuses  # DA assignment and judgments, factuality draft and submit, task next,
    # draft and submit
    assert any(200 <= c < 300 for codes in statuses.values() for c in codes), statuses


# JSON bodies of every kind but an object: a schema that says "object" leads schemathesis to send objects only,
# while a client (or an attacker) may send anything; DRF hands a view a list or a bare value as request.data.
NOT_OBJECTS = ["[]", "[1, 2]", '"text"', "7", "null", "true", '[{"a": 1}]']


def test_every_write_operation_answers_a_body_that_is_not_an_object(settings):
    without_rate_limits(settings)
    world = World()
    staff = Client(raise_request_exception=False)
    staff.force_login(world.users["staff"])
    participant = Client(raise_request_exception=False)
    errors, tried = [], 0
    for result in api_schema().get_all_operations():
        operation = result.ok()
        if operation.method.upper() not in ("POST", "PUT", "PATCH"):
            continue
        name, params = route_of(operation.path)
        kwargs = world.kwargs(name, ["pk" if p == "id" else p for p in params])
        path = operation.path
        for param, value in zip(params, kwargs.values()):
            path = path.replace("{" + param + "}", str(value))
        client, headers = staff, {}
        if name in PARTICIPANT_ROUTES:
            client = participant
            headers = {"X-Participant-Token": world.ids["task_token"]} if name.startswith("api-tasks-") else {}
        for body in NOT_OBJECTS:
            with transaction.atomic():
                response = client.generic(
                    operation.method.upper(), path, data=body, content_type="application/json", headers=headers
                )
                transaction.set_rollback(True)
            tried += 1
            if response.status_code >= 500:
                errors.append(f"{operation.method.upper()} {path} ({name}) with {body} -> {response.status_code}")
    assert tried > 100
    assert not errors, "\n".join(errors)
