"""Human caption sets in factuality projects (issue #9, item 1): they are judged only when the researcher names
them; the form lists them apart, marked "human"; the API and the command default to the systems that are not
human. (Planning a DA campaign turns a reference set into such a system; the next project must not show it to
annotators as one more anonymous paragraph.)"""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation_site.corpus.models import System
from annotation_site.factuality import projects
from annotation_site.factuality.models import Project
from assessment import campaigns

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_human(small_dataset):
    """The small dataset with a human system, made the way a DA campaign makes one from a reference set."""
    from annotation_site.corpus.models import Reference

    for video in small_dataset.videos.all():
        Reference.objects.create(video=video, reference_set="gt_small", text=f"a person does things in {video} .")
    campaigns.human_system_from_references(small_dataset, "gt_small")
    return small_dataset


def names(project):
    return sorted(project.systems.values_list("name", flat=True))


def test_the_service_leaves_human_systems_out_unless_named(with_human):
    project = projects.create_project(projects.ProjectSpec(name="default", dataset=with_human))
    assert names(project) == ["Alpha", "Beta", "Gamma"]
    named = projects.create_project(
        projects.ProjectSpec(name="named", dataset=with_human, systems=["Alpha", "gt_small"])
    )
    assert names(named) == ["Alpha", "gt_small"]


def test_the_form_lists_human_systems_apart_unticked(staff_client, with_human):
    page = staff_client.get(reverse("factuality-project-create") + "?dataset=small").content.decode()
    systems = page[page.index('id="systems"') : page.index("</ul>", page.index('id="systems"'))]
    humans = page[page.index('id="human-systems"') : page.index("</ul>", page.index('id="human-systems"'))]
    assert "gt_small" not in systems and "Alpha" in systems
    assert "gt_small (human)" in humans and '<span class="badge">human</span>' in humans and "checked" not in humans
    response = staff_client.post(
        reverse("factuality-project-create"),
        {
            "dataset": "small",
            "name": "from-form",
            "kind": "factuality",
            "annotators_per_video": 3,
            "shuffle_systems": "on",
            "rationale": "off",
            "preset": "vatex-eval",
        },
    )
    assert response.status_code == 302
    assert names(Project.objects.get(name="from-form")) == ["Alpha", "Beta", "Gamma"]
    human = System.objects.get(name="gt_small")
    staff_client.post(
        reverse("factuality-project-create"),
        {
            "dataset": "small",
            "name": "ticked",
            "kind": "factuality",
            "annotators_per_video": 3,
            "human_systems": [human.pk],
            "rationale": "off",
            "preset": "vatex-eval",
        },
    )
    assert names(Project.objects.get(name="ticked")) == ["Alpha", "Beta", "Gamma", "gt_small"]


def test_the_api_and_the_command_default_to_systems_that_are_not_human(staff_client, with_human):
    response = staff_client.post(
        reverse("api-factuality-projects"),
        json.dumps({"name": "api", "dataset": "small"}),
        content_type="application/json",
    )
    assert response.status_code == 201
    assert response.json()["systems"] == ["Alpha", "Beta", "Gamma"] and response.json()["human_systems"] == []
    response = staff_client.post(
        reverse("api-factuality-projects"),
        json.dumps({"name": "api-named", "dataset": "small", "systems": ["Beta", "gt_small"]}),
        content_type="application/json",
    )
    assert response.json()["systems"] == ["Beta"] and response.json()["human_systems"] == ["gt_small"]
    out = io.StringIO()
    call_command("factuality_project", "create", "--name", "cli", "--dataset", "small", stdout=out)
    assert names(Project.objects.get(name="cli")) == ["Alpha", "Beta", "Gamma"]
    assert "Human caption sets not included (name them with --systems to judge them): gt_small" in out.getvalue()
