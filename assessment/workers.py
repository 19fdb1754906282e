"""Who a Direct Assessment worker is: the one Worker record of a site account, of an id named from outside, or
of a crowd participant, in namespaces that never meet (``annotation_site.identities``; docs/reliability.md,
"Identity"). Every Worker is made or found here; ``services`` assigns and rates them."""

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation_site import identities

from .models import Worker


def worker_for_user(user):
    """The Worker of a site account, always bound to it: found by the user, never by a name (an id that merely
    looks like ``account:NAME`` is never adopted); created on first use as ``account:NAME``, or
    ``account:NAME#PK`` when that id is taken (a renamed account's old name)."""
    worker = Worker.objects.filter(user=user).first()
    if worker is not None:
        return worker
    name = f"{identities.ACCOUNT_PREFIX}{user.get_username()}"
    for external_id in (name, f"{name}#{user.pk}"):
        try:
            with transaction.atomic():
                return Worker.objects.create(
                    external_id=external_id, kind=Worker.Kind.ACCOUNT, user=user, source="account"
                )
        except IntegrityError:
            worker = Worker.objects.filter(user=user).first()  # a concurrent first use of the same account
            if worker is not None:
                return worker
    raise ValueError(f"no free worker id for account {user.get_username()!r}")


def worker_by_external_id(external_id, source="link"):
    """The Worker of an id named from outside (a link, a command, the API): normalised (NFKC, no invisible
    characters), made of the characters of a named id (``identities.named_id``: no spaces), outside the
    reserved namespaces, never an account's or a crowd participant's worker."""
    try:
        external_id = identities.named_id(external_id or "")
    except identities.IdentityError as exc:
        raise ValueError(str(exc)) from None
    worker, _ = Worker.objects.get_or_create(
        external_id=external_id, defaults={"source": source, "kind": Worker.Kind.EXTERNAL}
    )
    if worker.kind != Worker.Kind.EXTERNAL:
        raise ValueError(f"the worker id {external_id!r} belongs to a {worker.get_kind_display()}")
    return worker


def participant_worker(worker_key, source="crowd"):
    """The Worker of a crowd participant (``worker_key`` = ``NAMESPACE:ID`` from the crowd app)."""
    worker, _ = Worker.objects.get_or_create(
        external_id=worker_key, defaults={"source": source, "kind": Worker.Kind.PARTICIPANT}
    )
    if worker.kind != Worker.Kind.PARTICIPANT:
        raise ValueError(f"the worker key {worker_key!r} belongs to a {worker.get_kind_display()}")
    return worker


def insert_participant_worker(external_id, source):
    """The id of a participant Worker created now for ``external_id``, or None when it exists already (one
    statement on PostgreSQL and SQLite alike; the unique ``external_id`` decides, so concurrent arrivals create it
    once)."""
    table, quote = Worker._meta.db_table, connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(table)} ({quote('external_id')}, {quote('source')}, {quote('kind')}, "
            f"{quote('created_at')}) VALUES (%s, %s, %s, %s) ON CONFLICT ({quote('external_id')}) DO NOTHING "
            f"RETURNING {quote('id')}",
            [external_id, source, Worker.Kind.PARTICIPANT, connection.ops.adapt_datetimefield_value(timezone.now())],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def own_workers(external_ids):
    """For restoring a judgments download (``da_import_judgments --own-download``): the workers named by the ids
    this platform gave them, exactly as stored and as the download writes them: ``account:NAME`` for a site
    account, ``prolific:ID`` / ``mturk:ID`` / ... for a crowd participant (``identities.RESERVED_PREFIXES``).
    Returns ``({id: worker pk}, {id: why not})``. An id is found only as the worker of that kind: a site account
    that exists (bound to its user), or a crowd participant the platform admitted; never an external worker
    holding a look-alike id (made before the identity rule), never a deleted account's worker, never by a user
    name; and none is made from a file (a name in a file would choose whose record it becomes). One query;
    creates nothing."""
    found, refused = {}, {}
    rows = {
        external_id: (pk, kind, user_id)
        for external_id, pk, kind, user_id in Worker.objects.filter(external_id__in=set(external_ids)).values_list(
            "external_id", "pk", "kind", "user_id"
        )
    }
    for external_id in external_ids:
        account = identities.reserved_prefix(external_id) == identities.ACCOUNT_PREFIX
        whose = "site account" if account else "crowd participant"
        wanted = Worker.Kind.ACCOUNT if account else Worker.Kind.PARTICIPANT
        if external_id not in rows:
            refused[external_id] = (
                f"names no {whose}'s worker on this platform: judgments are brought back only to "
                f"{'an account that exists' if account else 'a participant the platform admitted'} and has rated here"
            )
            continue
        pk, kind, user_id = rows[external_id]
        if kind != wanted:
            refused[external_id] = (
                f"is not a {whose}'s worker ({Worker.Kind(kind).label}): the platform never attaches judgments to a "
                f"look-alike of {'an account' if account else 'a participant'}"
            )
        elif account and user_id is None:
            refused[external_id] = "belongs to a deleted site account: its judgments cannot be brought back to it"
        else:
            found[external_id] = pk
    return found, refused
