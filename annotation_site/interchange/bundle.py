"""The in-memory form of a dataset between a file format and the database.

Readers turn files into a DatasetBundle (validating everything, raising FormatError with every problem
located), services write a bundle to the database in one transaction, and exporters build a bundle from the
database for the writers. Formats never touch the ORM; services never parse files.
"""
from dataclasses import dataclass, field


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


@dataclass
class Problem:
    """One thing wrong with an input file, located as precisely as the format allows."""

    file: str
    message: str
    line: int | None = None
    where: str = ""  # key path or field, e.g. "'v_x' > 'COOT' > sentences[2]"

    def __str__(self):
        place = self.file
        if self.line is not None:
            place += f", line {self.line}"
        if self.where:
            place += f", {self.where}"
        return f"{place}: {self.message}"


class FormatError(Exception):
    """The input is not valid; ``problems`` lists every problem found (nothing has been written)."""

    MAX_SHOWN = 50

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__(self.describe())

    def describe(self):
        shown = [str(p) for p in self.problems[: self.MAX_SHOWN]]
        more = len(self.problems) - len(shown)
        if more > 0:
            shown.append(f"... and {more} more problems")
        count = len(self.problems)
        return f"{count} problem{'s' if count != 1 else ''} found, nothing was imported:\n" + "\n".join(shown)


class ProblemList(list):
    """Collects problems while a reader goes on checking the rest of the input."""

    def add(self, file, message, *, line=None, where=""):
        self.append(Problem(file=file, message=message, line=line, where=where))

    def raise_if_any(self):
        if self:
            raise FormatError(self)
