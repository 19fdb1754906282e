"""Every paginated list of the API caps ``?limit=`` (annotation_site/api_pagination.py): a limit beyond what
the database's LIMIT takes was a 500 on PostgreSQL on every list endpoint (issue #11: no 5xx for any input), and
an unbounded one reads a whole table into one answer."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation_site.api_pagination import MAX_LIMIT

from .test_permission_matrix import routes
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db


def body(response):
    return response.json() if response.get("Content-Type", "").startswith("application/json") else None


def paginated_lists(world, api):
    """The API's GET endpoints that answer a page (``count``, ``next``, ``results``), found from the resolver."""
    found = []
    for name, _, params in routes():
        path = reverse(name, kwargs=world.kwargs(name, params))
        if path.startswith("/api/"):
            answer = api.get(path)
            data = body(answer) if answer.status_code == 200 else None
            if isinstance(data, dict) and {"count", "next", "results"} <= set(data):
                found.append(path)
    return found


def test_every_list_caps_its_limit(settings):
    without_rate_limits(settings)
    world = World()
    api = APIClient()
    api.force_authenticate(world.users["staff"])
    lists = paginated_lists(world, api)
    assert {"/api/datasets/", "/api/da/campaigns/", "/api/jobs/"} <= set(lists), lists
    failures = []
    for path in lists:
        for limit in ("99999999999999999999", str(2**63), str(MAX_LIMIT + 1)):
            response = api.get(path, {"limit": limit})
            data = body(response)
            if response.status_code != 200 or data is None:
                failures.append(f"{path}?limit={limit}: {response.status_code}")
            elif data["next"] is not None and f"limit={MAX_LIMIT}" not in data["next"]:
                failures.append(f"{path}?limit={limit}: next link {data['next']!r}")
    assert not failures, "\n".join(failures)


def test_a_limit_beyond_the_largest_page_gives_the_largest_page(db, staff_user):
    from annotation_site.jobs.models import Job

    Job.objects.bulk_create([Job(kind="qc", created_by=staff_user) for _ in range(3)])
    api = APIClient()
    api.force_authenticate(staff_user)
    page = api.get("/api/jobs/", {"limit": "99999999999999999999"}).json()
    assert page["count"] == 3 and len(page["results"]) == 3
    assert api.get("/api/jobs/", {"limit": "2"}).json()["next"].endswith("limit=2&offset=2")
