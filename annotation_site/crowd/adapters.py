"""How a protocol plugs into crowd work.

The crowd app knows nothing of campaigns, HITs or judgments: each protocol (Direct Assessment, factuality /
rating projects, configurable tasks) registers one ``ProtocolAdapter`` under a short name, usually in its
``AppConfig.ready``::

    from annotation_site.crowd import adapters
    adapters.register(MyAdapter())

A Study then points at a target by ``(protocol, object_id)``. The adapter answers the crowd app's questions
about that target in the crowd app's own vocabulary (the dataclasses below): its units of work ("HITs"), handing
one to a participant (taking a slot), releasing it, whether it is complete, and each assignment's QC outcome.
Worker ids: a participant reaches the protocol as ``Participant.worker_key`` (``prolific:5f3c...``); the
adapter creates its own worker / annotator with that external id.
"""

from dataclasses import dataclass, field
from datetime import datetime


class QCStatus:
    PASSED = "passed"
    FAILED = "failed"
    INSUFFICIENT_DATA = "insufficient_data"
    IN_PROGRESS = "in_progress"
    ALL = (PASSED, FAILED, INSUFFICIENT_DATA, IN_PROGRESS)


@dataclass(frozen=True)
class Target:
    protocol: str
    object_id: int
    name: str


@dataclass(frozen=True)
class Imported:
    """What a protocol's ``import_results`` did: ``keys`` maps each AssignmentId to its work key; ``warnings``
    are ``(line, field, message)`` of rows imported all the same that deserve a word (a unit taken above its
    capacity), reported with file, line and field beside the import's counts."""

    keys: dict
    warnings: list = field(default_factory=list)


@dataclass(frozen=True)
class QCOutcome:
    """A worker's quality control as the payment policies need it (the record a ledger row copies)."""

    status: str
    test: str = ""
    p_value: float | None = None
    n_pairs: int | None = None
    threshold: float | None = None
    detail: str = ""

    def __post_init__(self):
        if self.status not in QCStatus.ALL:
            raise ValueError(f"unknown QC status {self.status!r}")

    def as_dict(self):
        return {
            "test": self.test or None,
            "p_value": self.p_value,
            "n_pairs": self.n_pairs,
            "threshold": self.threshold,
            "status": self.status,
        }


@dataclass(frozen=True)
class Work:
    """A protocol assignment: one worker on one unit (HIT / video)."""

    key: str
    unit_key: str
    unit_label: str
    url: str
    completed: bool
    last_activity: datetime | None = None


@dataclass(frozen=True)
class AssignmentRecord:
    """One assignment of a target, for payments: who, which HIT, done or not, and the worker's QC."""

    key: str
    worker_id: str
    hit_id: str
    completed: bool
    qc: QCOutcome
    released: bool = False


@dataclass(frozen=True)
class Unit:
    key: str
    label: str
    capacity: int


@dataclass
class Description:
    """What a study on this target is: defaults for the platform's study form."""

    title: str
    description: str
    units: list = field(default_factory=list)
    estimated_minutes: int = 10
    scale: dict = field(default_factory=lambda: {"kind": "slider", "min": 0, "max": 100})
    statement: str = ""


class AdapterError(Exception):
    """The protocol refused (no such target, the work is not this participant's, ...)."""


class ProtocolAdapter:
    """Interface; every method gets the Target (resolved by ``target``)."""

    protocol = ""

    def target(self, name):
        """The Target called ``name`` or None."""
        raise NotImplementedError

    def target_by_id(self, object_id):
        raise NotImplementedError

    def describe(self, target):
        """A Description (title, units with their capacity, estimated time, the rating scale)."""
        raise NotImplementedError

    def capacity(self, target):
        """Slots in all (every unit's capacity); adapters may answer it in one query."""
        return sum(unit.capacity for unit in self.describe(target).units)

    def units_for_qc(self, target):
        """The fewest units one participant must complete for the protocol's quality control to give them a
        verdict (passed or failed): a study that lets a participant do fewer can only leave them
        ``insufficient_data``. 1 for protocols without hidden quality control."""
        return 1

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        """Take a slot: the worker's unfinished Work if any, else a new one (on ``unit_key`` when given, as
        MTurk fixes the HIT); None when nothing is left for this worker. ``finish_url`` is where the work page
        sends the participant when the unit is complete."""
        raise NotImplementedError

    def work(self, target, work_key):
        """The Work ``work_key`` (its completion and last activity), or None."""
        raise NotImplementedError

    def page(self, request, target, work, *, finish_url=""):
        """The work's page as the answer to the participant's Start (a POST), or None when the protocol only
        has the page's address (then Start redirects to ``work.url``). Answering it saves the participant's
        browser a request on arrival; the page should replace the browser's address with ``work.url``, so that
        a reload is a GET of that page (see docs/crowd.md, "Start answers the first page")."""
        return None

    def release(self, target, work_key):
        """Give an unfinished Work's slot back (it no longer counts towards its unit). True if released."""
        raise NotImplementedError

    def assignments(self, target):
        """Every AssignmentRecord of the target, completed or not; released ones (returned, idle, rejected and
        replaced) with ``released=True``."""
        raise NotImplementedError

    def preview(self, target, unit_key):
        """What a preview of the unit shows, as ``{"statement", "items": [{"text", "video_url"}]}``."""
        raise NotImplementedError

    def answer_spec(self, target):
        """How an MTurk results row carries this protocol's answers: ``(answer_fields, validate)`` where
        ``validate(answers) -> [(field, message)]`` checks one row (used while the whole file is validated)."""
        raise NotImplementedError

    def check_results(self, target, rows):
        """Problems of result rows that do not fit the target (unknown HIT, item, ...), as ``(line, field,
        message)``; nothing is written. Reported with the file's own problems, all at once."""
        return []

    def import_results(self, target, rows, worker_keys):
        """Store the answers of validated MTurk result rows (``mturk_formats.ResultRow``; ``worker_keys`` maps
        each row's WorkerId to the worker id to use), keyed by AssignmentId: a row already imported changes
        nothing. Called only when the file and ``check_results`` found no problem; runs inside the caller's
        transaction. Returns an ``Imported``: ``{AssignmentId: work key}`` and the warnings of rows imported all
        the same (``(line, field, message)``: a unit taken above its capacity)."""
        raise NotImplementedError


_registry = {}


def register(adapter):
    if not adapter.protocol:
        raise ValueError("an adapter needs a protocol name")
    _registry[adapter.protocol] = adapter
    return adapter


def unregister(protocol):
    _registry.pop(protocol, None)


def get(protocol):
    try:
        return _registry[protocol]
    except KeyError:
        known = ", ".join(sorted(_registry)) or "none"
        raise AdapterError(f"no protocol adapter {protocol!r} is registered (known: {known})") from None


def registered():
    return dict(_registry)


def resolve(protocol, name):
    """(adapter, Target) for ``protocol`` and a target name; AdapterError when unknown."""
    adapter = get(protocol)
    target = adapter.target(name)
    if target is None:
        raise AdapterError(f"no {protocol} target named {name!r}")
    return adapter, target


def find_target(name):
    """Look ``name`` up in every registered protocol: (adapter, Target); AdapterError when none or several."""
    found = [(a, a.target(name)) for a in _registry.values()]
    found = [(a, t) for a, t in found if t is not None]
    if not found:
        raise AdapterError(f"no campaign or project named {name!r}")
    if len(found) > 1:
        raise AdapterError(
            f"{name!r} names a target in several protocols ({', '.join(a.protocol for a, _ in found)}): "
            "give the protocol"
        )
    return found[0]


def study_target_unchecked(study):
    """(adapter, Target) from the study's own reference, without asking the protocol whether the target still
    exists: for the participants' hot paths, where the adapter's own queries find that out (no unit, no work)."""
    return get(study.protocol), Target(study.protocol, study.object_id, study.target_name)


def study_target(study):
    adapter = get(study.protocol)
    target = adapter.target_by_id(study.object_id)
    if target is None:
        raise AdapterError(f"the {study.protocol} target of study {study.name} no longer exists")
    return adapter, target
