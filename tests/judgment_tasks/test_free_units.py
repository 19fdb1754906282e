"""The items with room of a task have an index of their own (annotation_site/workflow/capacity.py): each item
carries a copy of the task's annotators per item, set on import and following every change of it, and the
hand-out's reads go through that index, so that they read a few rows however large the task is. "Item 7 of
N" counts at most ``ASSIGNABLE_COUNTED`` open items and then says "N+"."""

import pytest
from django.contrib import admin
from django.urls import reverse

from annotation_site.judgment_tasks import assignment as assigning
from annotation_site.judgment_tasks import imports, services
from annotation_site.judgment_tasks.admin import TaskAdmin
from annotation_site.judgment_tasks.assignment import next_assignment
from annotation_site.judgment_tasks.models import Item, Task
from annotation_site.workflow.slots import ASSIGNABLE_COUNTED
from tests.judgment_tasks.conftest import lines, question_quality_items
from tests.query_plans import assert_reads_bounded

pytestmark = pytest.mark.django_db


def many_items(n):
    """``n`` items of the fifa-question-quality preset over the 40 videos of the ``videos`` fixture."""
    return [dict(item, item_id=f"q{i}", video_id=f"c{i % 40 + 1}") for i, item in enumerate(question_quality_items(n))]


def copies(task):
    return set(Item.objects.filter(task=task).values_list("capacity", flat=True))


def test_each_item_copies_the_task_capacity_and_follows_every_change(make_task):
    task = make_task("copies", "fifa-question-quality", question_quality_items(3), per_item=2)
    assert copies(task) == {2}
    services.update_task(task, annotators_per_item=5)
    assert copies(task) == {5}
    task.annotators_per_item = 4  # staff editing the task in Django's admin
    TaskAdmin(Task, admin.site).save_model(None, task, None, True)
    assert copies(task) == {4}


def test_copies_follow_the_overlap_a_save_writes_even_an_older_one(make_task):
    """A request that read the task before another changed its overlap writes the older value back with its
    save (every field): the copies follow what was saved, not only an overlap given to update_task."""
    task = make_task("stale", "fifa-question-quality", question_quality_items(2), per_item=3)
    stale = Task.objects.get(pk=task.pk)
    services.update_task(task, annotators_per_item=1)
    assert copies(task) == {1}
    services.update_task(stale, title="A new title")  # saves annotators_per_item=3 as it read it
    assert Task.objects.get(pk=task.pk).annotators_per_item == 3
    assert copies(task) == {3}


def test_imported_items_copy_the_overlap_of_the_task_as_it_is_now(make_task):
    """The task object an import was handed may predate a change of the overlap (a long upload); the new items
    copy the overlap read under the task's lock, as it is when they are written."""
    task = make_task("late", "fifa-question-quality", question_quality_items(1), per_item=2)
    stale = Task.objects.get(pk=task.pk)
    services.update_task(task, annotators_per_item=4)
    imports.import_items(stale, lines(*many_items(3)[1:]), filename="more.jsonl")
    assert copies(task) == {4}


def test_raising_the_capacity_hands_out_items_that_were_full(make_task, annotator_accounts):
    a, b, c = annotator_accounts(3)
    task = make_task("raise", "fifa-question-quality", question_quality_items(2), members=[a, b, c], per_item=1)
    assert next_assignment(task, a) and next_assignment(task, b)
    assert next_assignment(task, c) is None  # both items full
    services.update_task(task, annotators_per_item=2)
    found = next_assignment(task, c)
    assert found is not None and found.item.key == "q0"  # the first item in import order with room again


def test_item_n_of_many_stops_counting(make_task, annotator_accounts, client):
    [a] = annotator_accounts(1)
    task = make_task("many", "fifa-question-quality", many_items(ASSIGNABLE_COUNTED + 5), members=[a], per_item=1)
    found = next_assignment(task, a)
    # theirs, and 100 of the 104 others counted
    assert assigning.position_of(found) == (1, ASSIGNABLE_COUNTED + 1, True)
    assert assigning.position_of(found, limit=20) == (1, 20, False)  # a participant's quota: exact
    assert assigning.assignable_count(task, a) == ASSIGNABLE_COUNTED
    client.force_login(a.user)
    page = client.get(reverse("tasks-annotate", args=[found.pk])).content.decode()
    assert f"Item 1 of {ASSIGNABLE_COUNTED + 1}+" in page
    work = client.get(reverse("tasks-work", args=[task.name])).content.decode()
    assert f"{ASSIGNABLE_COUNTED}+ more available to you" in work


def test_handing_out_and_counting_read_a_bounded_number_of_items(make_task, annotator_accounts):
    """3,000 items, the first 1,500 full: on PostgreSQL the next free item is found by reading a few entries of
    the index of items with room, and the page's count stops at ASSIGNABLE_COUNTED (before, both read every
    item of the task: a sequential scan and a sort). SQLite (the embedded default) plans without statistics
    here and sorts the items with room it finds through an index of its own choice: the check there is only
    that no plan scans the whole table."""
    [a] = annotator_accounts(1)
    task = make_task("big", "fifa-question-quality", many_items(3000), members=[a], per_item=1)
    Item.objects.filter(task=task, position__lt=1500).update(assigned=1)
    found = next_assignment(task, a)
    assert found.item.position == 1500
    queries = assigning._QUERIES
    reads = {
        "pick": queries._pick.build(scope_id=task.pk, annotator_id=a.pk, capacity=1),
        "position": queries._position.build(pk=found.pk),
        "open to them": assigning.open_to(task, a),
    }
    bounds = {"pick": 5, "position": ASSIGNABLE_COUNTED + 5, "open to them": ASSIGNABLE_COUNTED + 5}
    assert_reads_bounded(reads, "judgment_tasks_item", bounds)
