"""The videos with room of a factuality project have an index of their own (annotation_site/workflow/
capacity.py): each project video carries a copy of the project's annotators per video, set when the project is
made and following every change of it, and the hand-out reads through that index, so that it reads a few rows
however large the project is."""

import pytest
from django.contrib import admin

from annotation_site.corpus.models import Video
from annotation_site.factuality import assignment as assigning
from annotation_site.factuality import projects
from annotation_site.factuality.admin import ProjectAdmin
from annotation_site.factuality.models import Project, ProjectVideo
from annotation_site.workflow.slots import ASSIGNABLE_COUNTED
from tests.query_plans import assert_reads_bounded

pytestmark = pytest.mark.django_db


def copies(project):
    return set(ProjectVideo.objects.filter(project=project).values_list("capacity", flat=True))


def test_each_video_copies_the_project_capacity_and_follows_every_change(make_project):
    project = make_project(annotators_per_video=2)
    assert copies(project) == {2}
    projects.update_project(project, annotators_per_video=5)
    assert copies(project) == {5}
    projects.update_project(project, instructions="Look closely.")  # other settings leave the copies alone
    assert copies(project) == {5}


def test_copies_follow_an_overlap_changed_in_the_admin(make_project, annotator_accounts):
    a, b = annotator_accounts(2)
    project = make_project(annotators=[a, b], annotators_per_video=1, videos=["v1"])
    assert assigning.next_assignment(project, a) is not None
    assert assigning.next_assignment(project, b) is None  # its one video is full
    project.annotators_per_video = 2  # staff raising the overlap in Django's admin
    ProjectAdmin(Project, admin.site).save_model(None, project, None, True)
    assert copies(project) == {2}
    assert assigning.next_assignment(project, b) is not None


def test_copies_follow_the_overlap_a_save_writes_even_an_older_one(make_project):
    project = make_project(annotators_per_video=3)
    stale = Project.objects.get(pk=project.pk)
    projects.update_project(project, annotators_per_video=1)
    projects.update_project(stale, description="Read before the change.")  # saves 3 as it read it
    assert Project.objects.get(pk=project.pk).annotators_per_video == 3
    assert copies(project) == {3}


def test_raising_the_capacity_hands_out_videos_that_were_full(make_project, annotator_accounts):
    a, b, c, d = annotator_accounts(4)
    project = make_project(annotators=[a, b, c, d], annotators_per_video=1)
    assert all(assigning.next_assignment(project, who) for who in (a, b, c))  # v1, v2, v3
    assert assigning.next_assignment(project, d) is None
    projects.update_project(project, annotators_per_video=2)
    found = assigning.next_assignment(project, d)
    assert found is not None and found.project_video.position == 0


def test_handing_out_and_counting_videos_read_a_bounded_number_of_rows(make_project, annotator_accounts):
    """3,000 more videos in a project, the first 1,500 full: on PostgreSQL the next free video is found by
    reading a few entries of the index of videos with room, and "Video 7 of N" and the work page's count read at
    most ASSIGNABLE_COUNTED (before: every video of the project, then a sort), whether the statement is planned
    for its values or generically, as a prepared statement may be. On SQLite the plans search an index, never
    scan every video."""
    [a] = annotator_accounts(1)
    project = make_project(annotators=[a], annotators_per_video=1)
    dataset = project.dataset
    videos = Video.objects.bulk_create(Video(dataset=dataset, external_id=f"bulk{i}") for i in range(3000))
    ProjectVideo.objects.bulk_create(
        ProjectVideo(project=project, video=v, position=10 + i, capacity=1) for i, v in enumerate(videos)
    )
    ProjectVideo.objects.filter(project=project, position__lt=1510).update(assigned=1)
    queries = assigning._QUERIES
    found = assigning.next_assignment(project, a)
    assert found.project_video.position == 1510
    reads = {
        "pick": queries._pick.build(scope_id=project.pk, annotator_id=a.pk, capacity=1),
        "position": queries._position.build(pk=found.pk),
        "open to them": assigning.open_to(project, a),
    }
    bounds = {"pick": 5, "position": ASSIGNABLE_COUNTED + 5, "open to them": ASSIGNABLE_COUNTED + 5}
    assert_reads_bounded(reads, "factuality_projectvideo", bounds)
