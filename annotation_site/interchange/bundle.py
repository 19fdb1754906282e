"""The in-memory form of a dataset between a file format and the database.

Readers turn files into a DatasetBundle (validating everything, raising FormatError with every problem
located), services write a bundle to the database in one transaction, and exporters build a bundle from the
database for the writers. Formats never touch the ORM; services never parse files.
"""

from dataclasses import dataclass, field

from annotation_site.problems import FormatError, Problem, ProblemList  # noqa: F401 (the readers' error types)

# The longest value each bundle field may hold: the database column's length (tests/hardening/test_uploads.py
# checks they match the models). Readers refuse longer values with file / line / field, before anything is
# written (a 100,000-character id would otherwise reach the database and fail there, or worse, be truncated).
FIELD_LIMITS = {"video_id": 200, "system": 100, "reference_set": 100, "url": 1000}


def too_long(field_name, value):
    """A message when ``value`` is longer than ``field_name``'s column allows, else None."""
    limit = FIELD_LIMITS.get(field_name)
    if limit is not None and isinstance(value, str) and len(value) > limit:
        return f"{field_name} has {len(value)} characters; at most {limit} are allowed"
    return None


ID_FIELDS = ("video_id", "system", "reference_set")


def id_problem(field_name, value):
    """A message when an id or name (``ID_FIELDS``) is empty, blank or has spaces at its start or end, else None.
    Every other importer (task items, metric scores, DA judgments) strips the ids it reads to match them, so a
    dataset id ``"v1 "`` was a second video beside ``"v1"`` that nothing else could name, and an empty one could
    not be exported and imported again."""
    if not value.strip():
        return f"{field_name} must not be empty or blank"
    if value != value.strip():
        return f"{field_name} {value[:60]!r} has spaces at its start or end"
    return None


def check_lengths(bundle, file, problems):
    """Every id and name of a bundle within its column's length (for formats whose readers cannot say the line)."""
    seen = set()
    for field_name, values in (
        ("video_id", [v.video_id for v in bundle.videos]),
        ("system", [name for name, _ in bundle.systems]),
        ("reference_set", [r.reference_set for r in bundle.references]),
        ("url", [v.url for v in bundle.videos]),
    ):
        for value in values:
            message = too_long(field_name, value)
            if message and (field_name, value) not in seen:
                seen.add((field_name, value))
                problems.add(file, message + f" ({value[:40]!r}...)", where=field_name)


@dataclass
class SentenceData:
    text: str
    tokens: list
    start: float | None = None
    end: float | None = None
    error: bool | None = None  # None: the sentence is not labelled
    spans: list = field(default_factory=list)  # [(start, end)] token ranges, end exclusive


@dataclass
class CaptionData:
    video_id: str
    system: str
    sentences: list
    paragraph_score: int | None = None
    prompt: str = ""  # the prompt that produced the caption, if any

    @property
    def labelled(self):
        return self.paragraph_score is not None or any(s.error is not None for s in self.sentences)


@dataclass
class VideoData:
    video_id: str
    url: str = ""
    duration: float | None = None


@dataclass
class ReferenceData:
    video_id: str
    reference_set: str
    text: str


@dataclass
class DatasetBundle:
    videos: list = field(default_factory=list)  # VideoData, in dataset order
    systems: list = field(default_factory=list)  # (name, is_human), in order of first appearance
    captions: list = field(default_factory=list)  # CaptionData, in file order
    references: list = field(default_factory=list)  # ReferenceData
    warnings: list = field(default_factory=list)  # things worth telling the user that are not errors

    @property
    def has_labels(self):
        return any(caption.labelled for caption in self.captions)

    def counts(self):
        return {
            "videos": len(self.videos),
            "systems": len(self.systems),
            "captions": len(self.captions),
            "sentences": sum(len(c.sentences) for c in self.captions),
            "references": len(self.references),
        }
