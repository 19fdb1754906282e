"""annotation_site.prepared_queries: a query compiled once per connection gives what its queryset gives (model
fields through the backend's converters, select_related objects, annotations, order, limit) for any values, and
is compiled once; the submission's reads use it (assessment.services)."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Subquery
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation_site.prepared_queries import Prepared, sent_sql
from assessment import services, workers
from assessment.models import Assignment, Item, Judgment

from .conftest import make_dataset, small_campaign


def fields(obj, *paths):
    out = {}
    for path in paths:
        value = obj
        for part in path.split("."):
            value = getattr(value, part)
        out[path] = value
    return out


def items_queryset(assignment_id, hit_id):
    judged = Judgment.objects.filter(assignment_id=assignment_id)
    return (
        Item.objects.filter(hit_id=hit_id)
        .exclude(pk__in=judged.values("item_id"))
        .select_related("caption__video")
        .order_by("position")
        .annotate(last=Subquery(judged.order_by("-finished_at").values("finished_at")[:1]))[:3]
    )


ITEMS = Prepared(items_queryset, assignment_id=-77_000_001, hit_id=-77_000_002)
PATHS = (
    "pk",
    "position",
    "item_type",
    "text",
    "hit_id",
    "caption.pk",
    "caption.video.external_id",
    "caption.video.duration",
    "caption.video.file",
    "last",
)


@pytest.mark.django_db
def test_prepared_query_gives_what_the_queryset_gives_for_any_values():
    campaign = small_campaign(make_dataset("prepared", n_videos=12), "prepared")
    assignments = [services.assign(campaign, workers.worker_by_external_id(f"w{i}")) for i in range(2)]
    now = timezone.now()
    for index, item in enumerate(Item.objects.filter(hit=assignments[0].hit).order_by("position")[:4]):
        Judgment.objects.create(
            assignment=assignments[0],
            item=item,
            score=50,
            client_uuid=uuid.uuid4(),
            finished_at=now + timedelta(seconds=index),
        )
    for assignment in assignments + assignments:  # each twice: the second run reuses the compiled SQL
        expected = list(items_queryset(assignment.pk, assignment.hit_id))
        got = ITEMS.run(assignment_id=assignment.pk, hit_id=assignment.hit_id)
        assert [fields(o, *PATHS) for o in got] == [fields(o, *PATHS) for o in expected]
        assert len(got) == 3
    # converters ran (SQLite gives datetimes as text without them), the annotation is the last judgment's time
    assert ITEMS.run(assignment_id=assignments[0].pk, hit_id=assignments[0].hit_id)[0].last == now + timedelta(
        seconds=3
    )
    assert ITEMS.run(assignment_id=assignments[1].pk, hit_id=assignments[1].hit_id)[0].last is None
    assert ITEMS.run(assignment_id=assignments[0].pk, hit_id=-1) == []


@pytest.mark.django_db
def test_prepared_query_is_compiled_once_per_connection(monkeypatch):
    campaign = small_campaign(make_dataset("prepared-once", n_videos=12), "prepared-once")
    assignment = services.assign(campaign, workers.worker_by_external_id("w"))
    calls = []
    query = Prepared(lambda pk: calls.append(pk) or Assignment.objects.filter(pk=pk)[:1], pk=-77_000_003)
    for _ in range(3):
        with CaptureQueriesContext(connection) as captured:
            assert query.run(pk=assignment.pk)[0].pk == assignment.pk
        assert len(captured.captured_queries) == 1
    assert calls == [-77_000_003]


def test_a_sentinel_missing_from_the_sql_is_refused(db):
    query = Prepared(lambda pk, other: Assignment.objects.filter(pk=pk), pk=-77_000_004, other=-77_000_005)
    with pytest.raises(ValueError, match="other"):
        query.run(pk=1, other=2)
    with pytest.raises(ValueError, match="distinct"):
        Prepared(lambda a, b: None, a=-1, b=-1)
    with pytest.raises(ValueError, match="whole numbers, strings or UUIDs"):
        Prepared(lambda key: None, key=timezone.now())
    with pytest.raises(TypeError, match="whole number"):
        Prepared(lambda pk: Assignment.objects.filter(pk=pk), pk=-77_000_006).run(pk="1")


def test_a_uuid_value_finds_what_the_queryset_finds(db):
    """UUIDs go into the parameters as the backend compiled them (a UUID on PostgreSQL, 32 hex digits on
    SQLite): the compiled query answers what the queryset answers, for the sentinel's and other values."""
    campaign = small_campaign(make_dataset("prepared-uuid", n_videos=12), "prepared-uuid")
    assignment = services.assign(campaign, workers.worker_by_external_id("wu"))
    items = list(services.unjudged_items(assignment, 3))
    keys = [uuid.uuid4() for _ in items]
    for item, key in zip(items, keys):
        Judgment.objects.create(assignment=assignment, item=item, score=50, client_uuid=key)
    query = Prepared(
        lambda key, assignment_id: Judgment.objects.filter(client_uuid=key, assignment_id=assignment_id),
        key=uuid.UUID("00000000-0000-4000-8000-000077000007"),
        assignment_id=-77_000_008,
    )
    for key in [*keys, uuid.uuid4()]:
        expected = list(Judgment.objects.filter(client_uuid=key, assignment_id=assignment.pk))
        assert query.run(key=key, assignment_id=assignment.pk) == expected
    assert len(query.run(key=keys[1], assignment_id=assignment.pk)) == 1
    with pytest.raises(TypeError, match="UUID"):
        query.run(key=str(keys[0]), assignment_id=assignment.pk)


@pytest.mark.django_db
def test_assignment_from_token_reads_the_assignment_with_hit_campaign_and_worker_in_one_query():
    campaign = small_campaign(make_dataset("prepared-token", n_videos=12), "prepared-token")
    assignment = services.assign(campaign, workers.worker_by_external_id("w"))
    token = services.assignment_token(assignment)
    with CaptureQueriesContext(connection) as captured:
        found = services.assignment_from_token(token)
        assert (found.pk, found.hit.number, found.hit.campaign.name, found.worker.external_id) == (
            assignment.pk,
            assignment.hit.number,
            "prepared-token",
            "w",
        )
        assert found.created_at == assignment.created_at
    assert len(captured.captured_queries) == 1
    assert services.assignment_from_token(token[:-2] + "xx") is None


@pytest.mark.django_db
def test_string_values_in_exact_lookups_give_what_the_queryset_gives():
    from assessment.models import Worker

    for external_id in ("w-one", "w-two", "wö ' \" %"):  # quotes and spaces: rows as an import may hold them
        Worker.objects.create(external_id=external_id, kind=Worker.Kind.EXTERNAL, source="test")
    query = Prepared(
        lambda external_id: Worker.objects.filter(external_id=external_id).order_by("pk"),
        external_id="prepared-sentinel:test-worker",
    )
    for external_id in ("w-one", "w-two", "wö ' \" %", "nobody", "W-ONE"):
        expected = [w.pk for w in Worker.objects.filter(external_id=external_id).order_by("pk")]
        assert [w.pk for w in query.run(external_id=external_id)] == expected
    with pytest.raises(TypeError, match="string"):
        query.run(external_id=1)
    with pytest.raises(TypeError, match="whole number"):
        Prepared(lambda pk: Worker.objects.filter(pk=pk), pk=-77_000_007).run(pk="1")


def _server_prepared(name):
    """The statement PostgreSQL holds under ``name`` in this session (None: not prepared)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name = %s", [name])
        row = cursor.fetchone()
    return row[0] if row else None


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_query_is_prepared_once_per_session_and_executed_by_name():
    """PostgreSQL: the compiled SQL is prepared on the server once per session and then only executed by name
    (no parse and plan per statement); a new session (after a reconnect) prepares it again. Elsewhere the SQL is
    sent as it is."""
    campaign = small_campaign(make_dataset("prepared-server", n_videos=12), "prepared-server")
    assignment = services.assign(campaign, workers.worker_by_external_id("ws"))
    query = Prepared(lambda pk: Assignment.objects.filter(pk=pk).order_by()[:1], pk=-77_000_009)
    for _ in range(2):  # two sessions
        for _ in range(3):
            with CaptureQueriesContext(connection) as captured:
                assert query.run(pk=assignment.pk)[0].pk == assignment.pk
            [statement] = [q["sql"] for q in captured.captured_queries]
            assert 'FROM "assessment_assignment"' in sent_sql(statement)
            if connection.vendor == "postgresql":
                assert statement == f"EXECUTE {query.name}({assignment.pk})"
                assert 'FROM "assessment_assignment"' in _server_prepared(query.name)
                assert "$1" in sent_sql(statement)
            else:
                assert statement.startswith("SELECT") and sent_sql(statement) == statement
        assert query.run(pk=assignment.pk + 1000) == []
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_query_the_server_cannot_prepare_runs_as_plain_sql_and_its_transaction_goes_on():
    """A value whose type PostgreSQL cannot infer from the SQL (here ``value IS NULL``) makes the
    PREPARE fail ("could not determine data type of parameter $1"): the query runs as plain SQL, and inside a transaction the refusal (in a savepoint) leaves the
    transaction usable: what it wrote before is committed."""
    from django.db import transaction
    from django.db.models import BooleanField
    from django.db.models.expressions import RawSQL

    from assessment.models import Worker

    query = Prepared(
        lambda label, pk: Worker.objects.annotate(
            unset=RawSQL("%s IS NULL", [label], output_field=BooleanField())
        ).filter(pk=pk),
        label="prepared-sentinel:label",
        pk=-77_000_010,
    )
    with transaction.atomic():
        worker = workers.worker_by_external_id("in-a-transaction")
        [found] = query.run(label="one", pk=worker.pk)
        Worker.objects.filter(pk=worker.pk).update(external_id="written-after")
    assert found.unset is False and found.pk == worker.pk
    assert Worker.objects.get(pk=worker.pk).external_id == "written-after"
    with CaptureQueriesContext(connection) as captured:
        assert query.run(label="two", pk=worker.pk)[0].pk == worker.pk  # outside a transaction too
    [statement] = [q["sql"] for q in captured.captured_queries]
    assert statement.startswith("SELECT")  # not prepared, on any backend
    if connection.vendor == "postgresql":
        assert _server_prepared(query.name) is None


@pytest.mark.django_db
def test_server_side_preparing_can_be_switched_off(settings):
    """DATABASE_PREPARED_STATEMENTS=false (a connection pooler in transaction mode): the SQL is sent as it is."""
    settings.CAPTIONEVAL_PREPARED_STATEMENTS = False
    campaign = small_campaign(make_dataset("prepared-off", n_videos=12), "prepared-off")
    assignment = services.assign(campaign, workers.worker_by_external_id("wo"))
    query = Prepared(lambda pk: Assignment.objects.filter(pk=pk).order_by()[:1], pk=-77_000_011)
    with CaptureQueriesContext(connection) as captured:
        assert query.run(pk=assignment.pk)[0].pk == assignment.pk
    [statement] = [q["sql"] for q in captured.captured_queries]
    assert statement.startswith("SELECT")
    if connection.vendor == "postgresql":
        assert _server_prepared(query.name) is None
