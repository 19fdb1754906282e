"""Importing DA judgments collected elsewhere (``manage.py da_import_judgments --campaign NAME FILE.csv``).

One row per judgment, header ``worker_id,hit_id,item_id,system,video_id,item_type,control_of,score``:

- ``item_type`` is ``system``, ``original``, ``degraded`` or ``repeat``; ``control_of`` names the ``item_id`` (in
  the same HIT) a control item pairs with: a degraded copy its original, an original its degraded copy, a repeat
  the system item it repeats; empty for system items. An original may leave it empty (the natural export of
  tools that only link the degraded copy): it is resolved from the one degraded copy of the HIT that names it,
  and refused when no degraded copy or more than one names it.
- Items are identified by ``(hit_id, item_id)``; every row of one item must agree on its system, video, type and
  ``control_of``. ``score`` is an integer from 0 to 100. A worker rates an item once.
- Originals and degraded copies belong to the human caption set: their ``system`` names it (empty: ``human``),
  one name for the whole file. It is created as a human system when missing and becomes the campaign's human
  system.

The whole file is validated first; any problem (reported with file, line and field) means nothing is written.
Then everything is written in one transaction with bulk inserts: a missing campaign is created with a dataset
of the same name (an existing dataset of that name is used), and missing systems, videos, captions (empty: the
text was shown elsewhere), HITs, items, workers and assignments are created; into a dataset holding a corpus
nothing is created empty (``judgments_corpus.check_corpus``: its systems, videos and captions, or a reference set as the human
captions). An existing campaign is extended:
HITs and items are matched by the ids its judgments download writes (``stored_keys``: a HIT's or item's external
id, else the HIT's number and the item's 1-based position, so a planned campaign's own download matches its HITs
and items), a matched item must agree with the file, a judgment that is already stored is a problem, and
judgments not stored yet are added to the matched items. Finally the QC of the campaign's workers is computed and
stored.

Worker ids in a reserved namespace (``account:`` for site accounts, ``prolific:``, ``mturk:``, ... for crowd
participants) are refused, except with ``own_download`` (``--own-download``: staff bringing back this platform's
own download), where such a row goes to that existing worker and is refused when there is none
(``workers.own_workers``); no worker is ever created in a reserved namespace by an import.
"""

import io
import shlex
from collections import defaultdict
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from annotation_site import identities, uploads
from annotation_site.corpus.models import Caption, Dataset, System, Video, check_unit_name
from annotation_site.problems import FormatError, ProblemList
from annotation_site.strict_numbers import column_range, integer_score

from . import campaigns, judgments_corpus, services, workers
from .models import HIT, Assignment, Campaign, Item, ItemType, Judgment, Worker

HEADER = ("worker_id", "hit_id", "item_id", "system", "video_id", "item_type", "control_of", "score")
OWN_DOWNLOAD_HELP = (
    "The file is this platform's own judgments download: a row of a site account (account:NAME) or of a crowd "
    "participant (prolific:ID, mturk:ID, ...) goes back to that existing worker. Without it such rows are refused: "
    "a file from elsewhere could name anyone."
)
MAX_ITEMS_PER_HIT = min(column_range(Item, "position")[1], column_range(HIT, "n_items")[1])
DEFAULT_HUMAN = "human"
WRITE_ATTEMPTS = 3  # checks and writes of one import, when another import overtook it (_import)
PARTNER_TYPE = {"degraded": "original", "original": "degraded", "repeat": "system"}
_BATCH = 5000


@dataclass
class Row:
    line: int
    worker: str
    hit: str
    item: str
    system: str
    video: str
    item_type: str
    control_of: str
    score: int


def _score(text):
    try:
        return integer_score(text, 0, 100)
    except ValueError:
        return None


def read_rows(stream, filename, problems, *, own_download=False):
    """Rows of a CSV text stream, checked field by field (problems go to ``problems``). ``own_download``: ids
    in a reserved namespace (``account:NAME``, ``prolific:ID``, ...) are let through, to be resolved to existing
    workers (``validate``); otherwise they
    are refused like every id from outside."""
    reader = problems.csv_reader(stream, filename)
    header = next(reader, None)
    if header is None:
        problems.add(filename, "the file is empty; expected the header " + ",".join(HEADER), line=1)
        return []
    header = [name.strip() for name in header]
    missing = [name for name in HEADER if name not in header]
    unknown = [name or f"an empty name (column {i})" for i, name in enumerate(header, 1) if name not in HEADER]
    if missing or unknown or len(set(header)) != len(header):
        problems.add(
            filename,
            f"the header must be {','.join(HEADER)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(unknown)}" if unknown else ""),
            line=1,
        )
        return []
    index = {name: header.index(name) for name in HEADER}
    rows = []
    for line, fields in problems.csv_records(reader, len(header), filename):
        # (cells our own export neutralised against spreadsheet formulas, '=x, come back as written: csv_reader)
        value = {name: fields[i].strip() for name, i in index.items()}
        bad = False
        try:  # NFKC, no invisible characters; never a site account's identity (empty / long: the length check)
            if value["worker_id"]:
                value["worker_id"] = identities.normalise(value["worker_id"], what="worker_id", max_length=10**6)
            prefix = identities.reserved_prefix(value["worker_id"])
            if prefix and not own_download:
                whose = "site accounts" if prefix == identities.ACCOUNT_PREFIX else "crowd participants"
                raise identities.IdentityError(
                    f"worker_id {value['worker_id']!r} begins with {prefix!r}, which the platform reserves for "
                    f"{whose} (a judgments download of this platform is brought back with --own-download: such "
                    "rows then go to that existing worker)"
                )
        except identities.IdentityError as exc:
            problems.add(filename, str(exc), line=line, where="field 'worker_id'")
            bad = True
        for name, limit in (("worker_id", 200), ("hit_id", 200), ("item_id", 200), ("video_id", 200)):
            if not value[name] or len(value[name]) > limit:
                problems.add(filename, f"{name} must be 1 to {limit} characters", line=line, where=f"field '{name}'")
                bad = True
        if value["item_type"] not in ItemType.values:
            problems.add(
                filename,
                f"item_type must be one of {'|'.join(ItemType.values)}, not {value['item_type']!r}",
                line=line,
                where="field 'item_type'",
            )
            bad = True
        elif value["item_type"] == "system" and value["control_of"]:
            problems.add(
                filename,
                "a system item controls nothing: leave control_of empty",
                line=line,
                where="field 'control_of'",
            )
            bad = True
        elif value["item_type"] not in ("system", "original") and not value["control_of"]:
            problems.add(
                filename,
                f"a {value['item_type']} item must name the item it pairs with",
                line=line,
                where="field 'control_of'",
            )
            bad = True
        if value["item_type"] in ("system", "repeat") and not value["system"]:
            problems.add(filename, f"a {value['item_type']} item needs its system", line=line, where="field 'system'")
            bad = True
        if len(value["system"]) > 100:
            problems.add(filename, "system names have at most 100 characters", line=line, where="field 'system'")
            bad = True
        score = _score(value["score"])
        if score is None:
            problems.add(
                filename,
                f"score must be an integer from 0 to 100, not {value['score']!r}",
                line=line,
                where="field 'score'",
            )
            bad = True
        if not bad:
            system = value["system"] or (DEFAULT_HUMAN if value["item_type"] in ("original", "degraded") else "")
            rows.append(
                Row(
                    line,
                    value["worker_id"],
                    value["hit_id"],
                    value["item_id"],
                    system,
                    value["video_id"],
                    value["item_type"],
                    value["control_of"],
                    score,
                )
            )
    return rows


def check_rows(rows, filename, problems):
    """Cross-row rules; returns (items: (hit, item) -> first Row, human system name or None)."""
    items, seen = {}, {}
    for row in rows:
        key = (row.hit, row.item)
        first = items.setdefault(key, row)
        for field, attribute in (
            ("system", "system"),
            ("video_id", "video"),
            ("item_type", "item_type"),
            ("control_of", "control_of"),
        ):
            if getattr(row, attribute) != getattr(first, attribute):
                problems.add(
                    filename,
                    f"item {row.item!r} of HIT {row.hit!r} has {field} "
                    f"{getattr(first, attribute)!r} on line {first.line}, not {getattr(row, attribute)!r}",
                    line=row.line,
                    where=f"field '{field}'",
                )
        judged = (row.worker, row.hit, row.item)
        if judged in seen:
            problems.add(
                filename,
                f"worker {row.worker!r} rated item {row.item!r} of HIT {row.hit!r} already on line {seen[judged]}",
                line=row.line,
                where="field 'item_id'",
            )
        else:
            seen[judged] = row.line
    for key, degraded in _resolve_originals(items, filename, problems).items():
        items[key].control_of = degraded
    for (hit, _), row in items.items():
        if row.item_type == "system" or (row.item_type == "original" and not row.control_of):
            continue
        partner = items.get((hit, row.control_of))
        where = "field 'control_of'"
        if partner is None:
            problems.add(
                filename,
                f"control_of names item {row.control_of!r}, which is not in HIT {hit!r}",
                line=row.line,
                where=where,
            )
        elif partner.item_type != PARTNER_TYPE[row.item_type]:
            problems.add(
                filename,
                f"a {row.item_type} item pairs with a {PARTNER_TYPE[row.item_type]} item; item "
                f"{row.control_of!r} is a {partner.item_type} item",
                line=row.line,
                where=where,
            )
        elif partner.video != row.video:
            problems.add(
                filename,
                f"item {row.control_of!r} is of video {partner.video!r}, not {row.video!r}",
                line=row.line,
                where=where,
            )
        elif row.item_type == "repeat" and partner.system != row.system:
            problems.add(
                filename,
                f"a repeat shows the same system as item {row.control_of!r} ({partner.system!r})",
                line=row.line,
                where="field 'system'",
            )
        elif row.item_type == "original" and partner.control_of != row.item:
            problems.add(
                filename,
                f"item {row.control_of!r} pairs with {partner.control_of!r}, not with this item",
                line=row.line,
                where=where,
            )
    humans = sorted({row.system for row in items.values() if row.item_type in ("original", "degraded")})
    if len(humans) > 1:
        problems.add(
            filename,
            f"originals and degraded copies come from one human caption set, found {', '.join(map(repr, humans))}",
            where="field 'system'",
        )
    return items, (humans[0] if humans else None)


def _resolve_originals(items, filename, problems):
    """Originals with an empty ``control_of`` get the one degraded copy of their HIT that names them (on every
    row of the item); none, or more than one, is a problem."""
    naming = defaultdict(list)
    for (hit, _item), row in items.items():
        if row.item_type == "degraded":
            naming[(hit, row.control_of)].append(row)
    resolved = {}
    for (hit, item), row in items.items():
        if row.item_type != "original" or row.control_of:
            continue
        degraded = naming.get((hit, item), [])
        if len(degraded) == 1:
            resolved[(hit, item)] = degraded[0].item
        elif not degraded:
            problems.add(
                filename,
                f"original {item!r} of HIT {hit!r} has no control_of and no degraded item of the "
                "HIT names it: give control_of, or add its degraded copy",
                line=row.line,
                where="field 'control_of'",
            )
        else:
            problems.add(
                filename,
                f"original {item!r} of HIT {hit!r} has no control_of and several degraded items "
                f"name it ({', '.join(repr(d.item) for d in degraded)}): give control_of",
                line=row.line,
                where="field 'control_of'",
            )
    return resolved


@dataclass
class StoredItem:
    pk: int
    item_type: str
    system: str
    video: str
    control_of: str  # the key of the item it pairs with, "" for none


@dataclass
class Stored:
    """An existing campaign's HITs and items under the ids its judgments download writes (``views.
    campaign_judgments_csv``): a HIT's external id, else its number; an item's external id, else its 1-based
    position in its HIT. A key that names two HITs (two items of a HIT) is ``ambiguous`` and matches nothing."""

    hits: dict  # HIT key -> pk
    items: dict  # (HIT key, item key) -> StoredItem
    ambiguous: dict  # HIT key or (HIT key, item key) -> descriptions of what it names
    next_position: dict  # HIT pk -> first free position
    judged: set  # (worker external id, item pk)

    @classmethod
    def empty(cls):
        return cls({}, {}, {}, {}, set())


def hit_key(external_id, number):
    """The id a HIT has in files: its external id, else its number (what the judgments download writes)."""
    return external_id or str(number)


def item_key(external_id, position):
    """The id an item has in files: its external id, else its 1-based position in its HIT."""
    return external_id or str(position + 1)


def stored_keys(campaign):
    """``Stored`` of ``campaign`` (three queries)."""
    stored = Stored.empty()
    by_key, key_of_hit = defaultdict(list), {}
    for pk, external_id, number in HIT.objects.filter(campaign=campaign).values_list("pk", "external_id", "number"):
        key = key_of_hit[pk] = hit_key(external_id, number)
        by_key[key].append(
            (pk, f"HIT {number} " + (f"(by its id {external_id!r})" if external_id else "(by its number)"))
        )
    rows = list(
        Item.objects.filter(hit__campaign=campaign).values_list(
            "pk",
            "hit_id",
            "external_id",
            "position",
            "item_type",
            "caption__system__name",
            "caption__video__external_id",
            "control_of_id",
        )
    )
    key_of_item = {pk: item_key(external_id, position) for pk, _, external_id, position, *_ in rows}
    items_by_key = defaultdict(list)
    for pk, hit, external_id, position, item_type, system, video, control_of in rows:
        key = (key_of_hit[hit], key_of_item[pk])
        partner = key_of_item.get(control_of, "") if control_of else ""
        description = f"the item at position {position + 1}" + (f" (by its id {external_id!r})" if external_id else "")
        items_by_key[key].append((StoredItem(pk, item_type, system, video, partner), description))
        stored.next_position[hit] = max(stored.next_position.get(hit, 0), position + 1)
    for key, found in by_key.items():
        if len(found) == 1:
            stored.hits[key] = found[0][0]
        else:
            stored.ambiguous[key] = [description for _, description in sorted(found)]
    for key, found in items_by_key.items():
        if len(found) == 1:
            stored.items[key] = found[0][0]
        else:
            stored.ambiguous[key] = [description for _, description in found]
    stored.judged = set(
        Judgment.objects.filter(assignment__hit__campaign=campaign).values_list(
            "assignment__worker__external_id", "item_id"
        )
    )
    return stored


def _check_existing(campaign, stored, items, rows, filename, problems):
    """Against an existing campaign: the file's HITs and items are matched by ``stored_keys`` (so the campaign's
    own download matches its HITs and items, with or without ids); a key naming two of them is a problem; matched
    items must agree (type, system, video, partner); stored judgments must not be repeated."""
    named = set()
    for key, row in sorted(items.items(), key=lambda entry: entry[1].line):
        for wanted, field, what in (
            (row.hit, "hit_id", f"HIT {row.hit!r}"),
            (key, "item_id", f"item {row.item!r} of HIT {row.hit!r}"),
        ):
            if wanted in stored.ambiguous and wanted not in named:
                named.add(wanted)
                problems.add(
                    filename,
                    f"{what} names two {'HITs' if field == 'hit_id' else 'items'} of campaign {campaign.name}, "
                    f"{' and '.join(stored.ambiguous[wanted])}, so its rows cannot be matched",
                    line=row.line,
                    where=f"field '{field}'",
                )
        found = None if row.hit in stored.ambiguous else stored.items.get(key)
        if found is None:
            continue
        if (found.item_type, found.system, found.video) != (row.item_type, row.system, row.video):
            problems.add(
                filename,
                f"item {row.item!r} of HIT {row.hit!r} is stored as {found.item_type} of {found.system!r} "
                f"on video {found.video!r}",
                line=row.line,
                where="field 'item_id'",
            )
        elif row.control_of and found.control_of and row.control_of != found.control_of:
            problems.add(
                filename,
                f"item {row.item!r} of HIT {row.hit!r} is stored paired with item {found.control_of!r}, not "
                f"{row.control_of!r}",
                line=row.line,
                where="field 'control_of'",
            )
    for row in rows:
        found = None if row.hit in stored.ambiguous else stored.items.get((row.hit, row.item))
        if found is not None and (row.worker, found.pk) in stored.judged:
            problems.add(
                filename,
                f"worker {row.worker!r}'s judgment of item {row.item!r} of HIT {row.hit!r} is stored already",
                line=row.line,
                where="field 'item_id'",
            )


def _check_own_workers(rows, filename, problems):
    """Rows of site accounts and crowd participants (``account:NAME``, ``prolific:ID``, ...: let through by
    ``own_download``): resolved to that existing worker (``workers.own_workers``), every other such row a
    problem. Returns id -> pk."""
    names = {row.worker for row in rows if identities.reserved_prefix(row.worker)}
    if not names:
        return {}
    found, refused = workers.own_workers(names)
    for row in rows:
        if row.worker in refused:
            problems.add(
                filename, f"worker_id {row.worker!r} {refused[row.worker]}", line=row.line, where="field 'worker_id'"
            )
    return found


@dataclass
class Checked:
    rows: list
    items: dict  # (hit, item) -> first Row
    human: str | None
    campaign: Campaign | None
    stored: Stored
    own_workers: dict  # reserved id ('account:NAME', 'prolific:ID', ...) -> worker pk
    from_references: str = ""  # the reference set to make the human system of (``judgments_corpus``), or ""


def validate(stream, filename, campaign_name, *, own_download=False):
    """Read and check everything; returns ``Checked`` or raises FormatError."""
    problems = ProblemList()
    try:
        check_unit_name(campaign_name)
    except ValidationError as exc:
        problems.add(filename, f"invalid campaign name {campaign_name!r}: {exc.messages[0]}")
        problems.raise_if_any()
    rows = read_rows(stream, filename, problems, own_download=own_download)
    if not rows and not problems:
        problems.add(filename, "the file has no judgments", line=2)
    items, human = check_rows(rows, filename, problems)
    own = _check_own_workers(rows, filename, problems) if own_download else {}
    campaign = Campaign.objects.select_related("dataset", "human_system").filter(name=campaign_name).first()
    stored = stored_keys(campaign) if campaign is not None else Stored.empty()
    if campaign is not None:
        if human and campaign.human_system_id and campaign.human_system.name != human:
            problems.add(
                filename,
                f"campaign {campaign_name}'s human caption set is {campaign.human_system.name!r}, not {human!r}",
                where="field 'system'",
            )
        _check_existing(campaign, stored, items, rows, filename, problems)
    dataset = judgments_corpus.dataset_of(campaign, campaign_name)
    judgments_corpus.check_human_set(dataset, human, rows, filename, problems)
    from_references = judgments_corpus.check_corpus(dataset, human, rows, filename, problems)
    _check_hit_sizes(stored, items, filename, problems)
    problems.raise_if_any()
    return Checked(rows, items, human, campaign, stored, own, from_references)


def _check_hit_sizes(stored, items, filename, problems):
    """A HIT holds at most MAX_ITEMS_PER_HIT items, those already stored included: the first item of the file
    beyond that is a problem (on PostgreSQL it failed the import's transaction with a database error)."""
    count = {}
    for (hit, item), row in sorted(items.items(), key=lambda entry: entry[1].line):
        if (hit, item) in stored.items:
            continue
        if hit not in count:
            count[hit] = stored.next_position.get(stored.hits.get(hit), 0)
        count[hit] += 1
        if count[hit] == MAX_ITEMS_PER_HIT + 1:
            problems.add(
                filename,
                f"HIT {hit!r} would hold more than {MAX_ITEMS_PER_HIT} items with item {item!r}: split it into "
                "several HITs",
                line=row.line,
                where="field 'hit_id'",
            )


def import_judgments(campaign_name, source, filename=None, *, own_download=False):
    """Import a judgments CSV (a path, or a text stream with ``filename``) into campaign ``campaign_name``.

    ``own_download``: rows of reserved ids (``account:NAME``, ``prolific:ID``, ...: this platform's own download of
    a campaign rated by site accounts or crowd participants) go to that existing worker, and are refused when there
    is none; without it they are refused like every id from outside. Only for staff restoring their own export
    (the command's ``--own-download``): a file from elsewhere could name anyone."""
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        filename = filename or str(source)
        try:
            text = uploads.path_text(source)  # size, UTF-8 (the line named) and NUL checked first
        except uploads.UploadRefused as exc:
            raise FormatError([str(exc)]) from None
        return _import(campaign_name, io.StringIO(text, newline=""), filename, own_download)
    if isinstance(source, io.TextIOBase) or hasattr(source, "read"):
        return _import(campaign_name, source, filename or "judgments.csv", own_download)
    raise TypeError("source must be a path or a text stream")


def import_upload(campaign_name, upload, *, own_download=False):
    """``import_judgments`` for an uploaded file (the import page and the API: one code path): its size, UTF-8 and
    NUL characters are checked before anything is read (``uploads.UploadRefused``). Imported within the request,
    so the size is also held to ``CAPTIONEVAL_MAX_DA_UPLOAD_BYTES``, which keeps the work inside the web server's
    timeout (``benchmarks/da_import.py``)."""
    try:
        uploads.check_size(upload.name, upload.size, "CAPTIONEVAL_MAX_DA_UPLOAD_BYTES")
    except uploads.UploadRefused as exc:  # imported within the request: say where a larger file goes
        raise uploads.UploadRefused(
            upload.name,
            f"{exc.reason}: a larger file is imported with the command, which has no time limit "
            f"(python manage.py da_import_judgments --campaign {shlex.quote(campaign_name)} FILE)",
        ) from None
    text = uploads.upload_text(upload)
    return import_judgments(campaign_name, io.StringIO(text, newline=""), upload.name, own_download=own_download)


def summary_text(campaign_name, summary):
    """What an import did, in one sentence (the command's output and the page's message)."""

    def counted(n, noun):
        return f"{n} {noun}{'' if n == 1 else 's'}"

    return (
        f"Imported {counted(summary['judgments'], 'judgment')} into campaign {campaign_name!r}: "
        f"{counted(summary['hits'], 'HIT')}, {counted(summary['items'], 'new item')}, "
        f"{counted(summary['workers'], 'worker')}; {summary['passed']} of {counted(summary['qc_workers'], 'worker')} "
        f"{'passes' if summary['qc_workers'] == 1 else 'pass'} quality control"
    )


def _get_or_create_rows(model, existing, wanted, make):
    """``existing``: key -> pk; create ``make(key)`` for the wanted keys that are missing; returns key -> pk."""
    missing = [key for key in wanted if key not in existing]
    created = model.objects.bulk_create([make(key) for key in missing], batch_size=_BATCH)
    return {**existing, **{key: row.pk for key, row in zip(missing, created)}}


def _import(campaign_name, stream, filename, own_download):
    """Check the file, then write it. The checks are made before the transaction (reading a large file holds no
    lock), so another import into the campaign can write between them and the writes: a unique key (the campaign's
    name, a HIT's number, a worker's id, a judgment) then clashes and the transaction is rolled back whole. The file
    is then checked again against what is stored now, and written when it still can be (two files adding different
    HITs: both are imported), or refused with its problems (the same file twice: "stored already", line by line).
    A clash that persists is a fault, not a race, and is raised."""
    text = stream.read()
    attempt = 1
    while True:
        checked = validate(io.StringIO(text, newline=""), filename, campaign_name, own_download=own_download)
        try:
            return _write(campaign_name, checked, filename)
        except IntegrityError:
            if attempt == WRITE_ATTEMPTS:
                raise
            attempt += 1


def _write(campaign_name, checked, filename):
    """Write a checked file in one transaction; returns the summary."""
    rows, items, human, campaign, stored = checked.rows, checked.items, checked.human, checked.campaign, checked.stored
    now = timezone.now()
    with transaction.atomic():
        if campaign is None:
            dataset, _ = Dataset.objects.get_or_create(
                name=campaign_name,
                defaults={
                    "description": f"Created by importing DA judgments from {filename}.",
                    "source_format": "da-csv",
                },
            )
        else:
            dataset = campaign.dataset
        if checked.from_references:  # the human captions are a reference set of the dataset: with their text
            campaigns.human_system_from_references(dataset, checked.from_references)
        names = {row.system for row in items.values()}
        systems = dict(System.objects.filter(dataset=dataset, name__in=names).values_list("name", "pk"))
        last = System.objects.filter(dataset=dataset).aggregate(m=Max("position"))["m"] or 0
        systems = _get_or_create_rows(
            System,
            systems,
            sorted(names),
            lambda name: System(dataset=dataset, name=name, is_human=name == human, position=last + 1),
        )
        video_names = sorted({row.video for row in items.values()})
        videos = dict(
            Video.objects.filter(dataset=dataset, external_id__in=video_names).values_list("external_id", "pk")
        )
        last = Video.objects.filter(dataset=dataset).aggregate(m=Max("position"))["m"] or 0
        positions = iter(range(last + 1, last + 1 + len(video_names)))
        videos = _get_or_create_rows(
            Video,
            videos,
            video_names,
            lambda name: Video(
                dataset=dataset, external_id=name, position=next(positions), status=Video.Status.EXTERNAL
            ),
        )
        pairs = sorted({(videos[row.video], systems[row.system]) for row in items.values()})
        captions = {
            (v, s): pk
            for pk, v, s in Caption.objects.filter(video__dataset=dataset).values_list("pk", "video_id", "system_id")
        }
        captions = _get_or_create_rows(Caption, captions, pairs, lambda key: Caption(video_id=key[0], system_id=key[1]))

        if campaign is None:
            per_hit = defaultdict(int)
            for hit, _ in items:
                per_hit[hit] += 1
            campaign = Campaign.objects.create(
                name=campaign_name,
                dataset=dataset,
                source=Campaign.Source.IMPORTED,
                human_system_id=systems.get(human),
                hit_size=max(per_hit.values()),
                description=f"Judgments imported from {filename}.",
            )
        elif human and not campaign.human_system_id:
            Campaign.objects.filter(pk=campaign.pk).update(human_system_id=systems[human])
        campaign.systems.add(
            *{systems[row.system] for row in items.values() if row.item_type == "system" and row.system != human}
        )

        # the file's HITs and items as validate matched them (stored_keys): a new HIT or item gets the file's id,
        # which no stored one has as its key, so keys stay unique and the download writes them back unchanged
        hit_names = list(dict.fromkeys(hit for hit, _ in items))
        hits = {name: stored.hits[name] for name in hit_names if name in stored.hits}
        number = HIT.objects.filter(campaign=campaign).aggregate(m=Max("number"))["m"] or 0
        numbers = iter(range(number + 1, number + 1 + len(hit_names)))
        hits = _get_or_create_rows(
            HIT, hits, hit_names, lambda name: HIT(campaign=campaign, number=next(numbers), external_id=name)
        )
        next_position = {name: stored.next_position.get(pk, 0) for name, pk in hits.items()}
        item_pks = {key: stored.items[key].pk for key in items if key in stored.items}

        def make(key, control_of_id=None):
            row = items[key]
            position = next_position[row.hit]
            next_position[row.hit] += 1
            return Item(
                hit_id=hits[row.hit],
                position=position,
                item_type=row.item_type,
                external_id=row.item,
                caption_id=captions[(videos[row.video], systems[row.system])],
                control_of_id=control_of_id,
            )

        new = [key for key in items if key not in item_pks]
        firsts = [key for key in new if items[key].item_type in ("system", "original")]
        item_pks.update(
            zip(firsts, (i.pk for i in Item.objects.bulk_create([make(k) for k in firsts], batch_size=_BATCH)))
        )
        seconds = [key for key in new if items[key].item_type in ("degraded", "repeat")]
        item_pks.update(
            zip(
                seconds,
                (
                    i.pk
                    for i in Item.objects.bulk_create(
                        [make(k, item_pks[(k[0], items[k].control_of)]) for k in seconds], batch_size=_BATCH
                    )
                ),
            )
        )
        degraded = Item.objects.filter(control_of=OuterRef("pk"), item_type=ItemType.DEGRADED).values("pk")[:1]
        Item.objects.filter(hit__campaign=campaign, item_type=ItemType.ORIGINAL, control_of__isnull=True).update(
            control_of=Subquery(degraded)
        )
        grown = {items[key].hit for key in new}
        for hit_name in grown:  # one update per HIT given items (imports are not on a page's hot path)
            HIT.objects.filter(pk=hits[hit_name]).update(n_items=next_position[hit_name])

        # rows of accounts and participants go to their own worker (validate found it); nothing is created under a
        # reserved prefix
        worker_names = sorted({row.worker for row in rows} - checked.own_workers.keys())
        worker_pks = dict(
            Worker.objects.filter(external_id__in=worker_names)
            .exclude(kind=Worker.Kind.ACCOUNT)
            .values_list("external_id", "pk")
        )
        worker_pks = _get_or_create_rows(
            Worker, worker_pks, worker_names, lambda name: Worker(external_id=name, source="import")
        )
        worker_pks.update(checked.own_workers)
        wanted = sorted({(worker_pks[row.worker], hits[row.hit]) for row in rows})
        assignments = {
            (w, h): pk
            for pk, w, h in Assignment.objects.filter(hit__campaign=campaign).values_list("pk", "worker_id", "hit_id")
        }
        assignments = _get_or_create_rows(
            Assignment, assignments, wanted, lambda key: Assignment(worker_id=key[0], hit_id=key[1], completed_at=now)
        )
        Judgment.objects.bulk_create(
            [
                Judgment(
                    assignment_id=assignments[(worker_pks[row.worker], hits[row.hit])],
                    item_id=item_pks[(row.hit, row.item)],
                    score=row.score,
                    finished_at=None,
                )
                for row in rows
            ],
            batch_size=_BATCH,
        )
        campaign.refresh_from_db()
        qc = services.store_qc(campaign)
    return {
        "campaign": campaign,
        "judgments": len(rows),
        "items": len(new),
        "hits": len(hit_names),
        "workers": len(worker_pks),
        "passed": int(qc["passed"].sum()),
        "qc_workers": len(qc),
    }
