"""Every CSV the platform writes goes through this module (issue #11, "Spreadsheet formulas").

CSV files are opened in spreadsheets, and a cell whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is read as a formula there (OWASP, "CSV Injection"): a worker id, a system or video name, a
caption or a rejection reason supplied by a crowd worker or an import could run a formula on the researcher's
machine. Following OWASP's advice, such a cell is written with a single quote in front (``'=1+1``), which every
spreadsheet shows as text; the csv module quotes cells holding separators, quotes or line breaks.

Decisions:

- **Numbers stay numbers.** ``int``, ``float`` and ``Decimal`` values are never changed (``-0.25`` is a
  negative number, not a formula), and neither are strings that are a plain decimal number in ASCII digits
  (``-3``, ``+1.5``, ``-2e-3``): spreadsheets read them as numbers. ``-1+2``, ``-inf`` or ``-A1`` are not plain
  numbers and are neutralised.
- **Reversible.** A cell that already begins with a single quote gets one more (``'x`` is written ``''x``), so
  :func:`restore` gives back exactly what was written. Every CSV importer reads through
  ``problems.ProblemList.csv_reader``, which calls it on every cell (metric scores and pairs, DA judgments), and
  the MTurk results importer on the ``Input.*`` cells MTurk copies from our batch input: a file made from the
  platform's own downloads (``'-AwyG1JcMp8``, a YouCook2 video id) imports, and exports round-trip byte for byte.
- Header cells go through the same function (they are constants today; nothing breaks if one ever is not).

Use :func:`writer` / :class:`DictWriter` instead of ``csv.writer`` / ``csv.DictWriter``, :func:`frame_to_csv`
instead of ``DataFrame.to_csv`` and :func:`stream` for streamed responses. A test
(``tests/hardening/test_csv_formulas.py``) fails when code outside this module writes CSV directly.
"""

import csv
import io
import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def neutralise(value):
    """The cell as it is safe to write: text that a spreadsheet would run gets a leading single quote."""
    if not isinstance(value, str):
        return value  # numbers (int, float, Decimal, numpy scalars), None and booleans are data, never formulas
    if value[:1] == QUOTE:
        return QUOTE + value
    if value[:1] in FORMULA_STARTS and not _PLAIN_NUMBER.match(value):
        return QUOTE + value
    return value


def restore(value):
    """The inverse of :func:`neutralise` for a cell read back from one of our files."""
    if isinstance(value, str) and value[:1] == QUOTE and (value[1:2] == QUOTE or value[1:2] in FORMULA_STARTS):
        return value[1:]
    return value


def neutralise_row(values):
    return [neutralise(v) for v in values]


class _Writer:
    def __init__(self, out, **options):
        options.setdefault("lineterminator", "\n")
        self._writer = csv.writer(out, **options)

    def writerow(self, values):
        return self._writer.writerow(neutralise_row(values))

    def writerows(self, rows):
        for values in rows:
            self.writerow(values)


def writer(out, **options):
    """``csv.writer`` whose every cell is neutralised (lines end with ``\\n`` unless told otherwise)."""
    return _Writer(out, **options)


class DictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose every cell (header included) is neutralised."""

    def __init__(self, out, fieldnames, **options):
        options.setdefault("lineterminator", "\n")
        super().__init__(out, fieldnames, **options)

    def writeheader(self):
        return self.writer.writerow(neutralise_row(self.fieldnames))

    def writerow(self, rowdict):
        return self.writer.writerow(neutralise_row(self._dict_to_list(rowdict)))

    def writerows(self, rowdicts):
        for row in rowdicts:
            self.writerow(row)


def rows_to_text(header, rows):
    """A whole CSV document as text."""
    out = io.StringIO()
    w = writer(out)
    if header is not None:
        w.writerow(header)
    w.writerows(rows)
    return out.getvalue()


def stream(header, rows):
    """The CSV document line by line (for ``StreamingHttpResponse`` and S3 exports: never whole in memory)."""
    buffer = io.StringIO()
    w = writer(buffer)
    for values in [header] if header is not None else []:
        w.writerow(values)
    yield buffer.getvalue()
    for values in rows:
        buffer.seek(0)
        buffer.truncate()
        w.writerow(values)
        yield buffer.getvalue()


def frame_to_csv(frame, **options):
    """``DataFrame.to_csv`` with every text cell (and the column names) neutralised; numeric columns untouched."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or str(safe[column].dtype) in ("string", "str"):
            safe[column] = safe[column].map(neutralise)
    safe.columns = [neutralise(str(c)) if isinstance(c, str) else c for c in safe.columns]
    options.setdefault("index", False)
    options.setdefault("lineterminator", "\n")
    return safe.to_csv(**options)


__all__ = ["FORMULA_STARTS", "DictWriter", "frame_to_csv", "neutralise", "restore", "rows_to_text", "stream", "writer"]
