"""Located problems of an input file and the error that carries them: shared by every importer (datasets,
factuality raw labels, DA judgments, metric scores, judgment-task items), so it sits below every app.

A reader collects a ``Problem`` for everything wrong (file, line, field, message) in a ``ProblemList`` and raises
``FormatError`` with all of them at the end; nothing is written while one exists.
"""

import csv
import io
from dataclasses import dataclass

from annotation_site import spreadsheet_csv


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

    def csv_reader(self, source, file):
        """A ``csv.reader`` of ``source`` (text, read with universal newlines: a lone carriage return ends a line,
        as some spreadsheets write it; or a text stream) that never raises ``csv.Error``: a record the csv module
        cannot read (a carriage return inside a field of a stream not opened with ``newline=""``, a field over the
        module's size limit) is a problem of its line here, and reading stops there (what follows would be
        misread). So is a record holding a NUL character, which PostgreSQL's text cannot hold (a lookup by such
        a value was a 500 there): files read through ``uploads`` never hold one, text from elsewhere may.

        Every field comes back as the platform wrote it: the formula guard of every CSV the platform writes
        (``spreadsheet_csv``) puts a single quote before a cell beginning with ``= + - @``, a tab, a carriage
        return or a quote (the YouCook2 video id ``-AwyG1JcMp8`` is downloaded as ``'-AwyG1JcMp8``), and this
        reader takes it off (``spreadsheet_csv.restore``), so a file made from the platform's own downloads
        imports (metric scores and pairs, DA judgments: every importer reading CSV through here)."""
        stream = io.StringIO(source, newline="") if isinstance(source, str) else source
        return _CheckedCsvReader(csv.reader(stream), file, self)

    def csv_records(self, reader, width, file):
        """``(line, fields)`` of each record a ``csv.reader`` gives after its header, ``line`` where the record
        ends (quoted fields may span lines): blank records are skipped, and a record with another number of
        fields than ``width`` is a problem of its line, skipped."""
        for fields in reader:
            line = reader.line_num
            if not any(field.strip() for field in fields):
                continue
            if len(fields) != width:
                self.add(file, f"expected {width} fields, found {len(fields)}", line=line)
                continue
            yield line, fields


class _CheckedCsvReader:
    """``ProblemList.csv_reader``: iterates like the ``csv.reader`` it wraps and has its ``line_num``."""

    def __init__(self, reader, file, problems):
        self.reader, self.file, self.problems = reader, file, problems

    def __iter__(self):
        return self

    def __next__(self):
        try:
            fields = next(self.reader)
        except csv.Error as exc:
            self.problems.add(self.file, f"not a readable CSV record ({exc})", line=self.reader.line_num)
            raise StopIteration from None
        nul = next((i for i, value in enumerate(fields) if "\x00" in value), None)
        if nul is not None:
            self.problems.add(
                self.file, f"a NUL character (field {nul + 1}); NUL is not allowed in text", line=self.reader.line_num
            )
            raise StopIteration
        return [spreadsheet_csv.restore(value) for value in fields]

    @property
    def line_num(self):
        return self.reader.line_num
