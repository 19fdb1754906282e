"""Numbers typed by people and programs outside the platform, read strictly (issue #11).

Python's ``int`` and ``float`` accept more than a score or an id should: ``float("1e2")`` is 100,
``int("١٢")`` (Arabic-Indic digits) is 12 and ``"٣".isdigit()`` is true, ``float("nan")`` and ``"inf"`` parse. A
score written any of those ways is a typing or tooling error, or an attempt to get past a check, so every score
and every id in a URL or file is read here: ASCII digits only, no exponent, no NaN or infinity. Scores a program
wrote (automatic metrics' files) may carry an exponent, as programs write small numbers (``1.5e-05``), and
nothing else more (``program_float``).
"""

import math
import re
from decimal import Decimal

from django.db.backends.base.operations import BaseDatabaseOperations

_ASCII_INTEGER = re.compile(r"[0-9]+\Z")
_FORM_INTEGER = re.compile(r"-?[0-9]{1,19}\Z")
_FORM_DECIMAL = re.compile(r"-?(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})\Z")
_AMOUNT = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,2})?\Z")  # the money columns: 8 digits, 2 after the point
_ASCII_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\Z")
_PROGRAM_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def program_float(text):
    """A number a program wrote as text (``0.25``, ``-3``, ``1.5e-05``; surrounding spaces ignored), or None:
    ``float`` alone would also take digits of other scripts (``"٣"``), ``_`` between digits (``"1_000"``),
    ``nan`` and ``inf``."""
    text = text.strip() if isinstance(text, str) else ""
    if not _PROGRAM_FLOAT.match(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def ascii_int(text):
    """The non-negative integer spelt with ASCII digits only, else None (``"12"`` -> 12; ``"١٢"``, ``"1e2"``,
    ``" 12"``, ``"+12"`` -> None)."""
    if isinstance(text, str) and _ASCII_INTEGER.match(text):
        return int(text)
    return None


def _shown(text):
    """The refused text as a message quotes it: at most 20 characters."""
    return text if len(text) <= 20 else text[:20] + "..."


def form_integer(text, *, low, high, what):
    """A whole number typed into a form field, from ``low`` to ``high``: ASCII digits with an optional leading
    minus (surrounding spaces ignored), or a JSON integer; else ValueError saying which field and what it takes."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    text = text.strip() if isinstance(text, str) else ""
    if not _FORM_INTEGER.match(text) or not low <= int(text) <= high:
        raise ValueError(f"{what} must be a whole number from {low} to {high}, not {_shown(text)!r}")
    return int(text)


def column_range(model, field_name):
    """The (lowest, highest) whole number the column of ``model.field_name`` holds on every supported database
    (PostgreSQL's ranges: SQLite's columns take any 64-bit number, so a bound read from the embedded default
    would fail in production)."""
    field = model._meta.get_field(field_name)
    return BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()]


def form_decimal(text, *, low, high, what):
    """A decimal number typed into a form field or given to a command, from ``low`` to ``high`` (inclusive):
    ASCII digits with an optional leading minus and one optional point (``0.05``, ``.05``, ``30``; surrounding
    spaces ignored), returned as a float; else ValueError saying which field and what it takes. ``float`` alone
    would take "nan", "inf", "1e2" and digits of other scripts."""
    text = text.strip() if isinstance(text, str) else ""
    if not _FORM_DECIMAL.match(text) or not low <= float(text) <= high:
        raise ValueError(f"{what} must be a number from {low:g} to {high:g} such as 0.5, not {_shown(text)!r}")
    return float(text)


def amount(value, *, what):
    """An amount of money (a reward, a bonus) typed into a form, sent to the API or given to a command: ASCII
    digits with at most two after a point, from 0 to 999999.99 (what the money columns hold); a JSON number is
    read as it is written. Else ValueError saying what is expected: ``Decimal`` alone would take "NaN",
    "Infinity", "1e2", "-5" and digits of other scripts, and a NaN bonus fails the payment run later."""
    if isinstance(value, bool):
        value = None
    elif isinstance(value, (int, float)):
        value = repr(value)
    text = value.strip() if isinstance(value, str) else ""
    if not _AMOUNT.match(text):
        raise ValueError(
            f"{what} must be an amount of money such as 1.50 (digits 0-9, at most two after the point, "
            f"less than 1,000,000), not {_shown(text)!r}"
        )
    return Decimal(text)


def integer_score(value, low=0, high=100):
    """A score that must be a whole number from ``low`` to ``high``: a JSON integer (or a float with no
    fraction, as some clients send 70.0), or text of ASCII digits (``"70"``, ``"70.0"``, surrounding spaces
    allowed). Raises ValueError saying what is wrong."""
    expected = f"an integer from {low} to {high}"
    if isinstance(value, bool):
        raise ValueError(f"the score must be {expected}, not {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"the score must be {expected}, not {value!r}")
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not _ASCII_DECIMAL.match(text):
            raise ValueError(f"the score must be {expected} written with the digits 0-9, not {value!r}")
        as_float = float(text)
        if not as_float.is_integer():
            raise ValueError(f"the score must be {expected}, not {value!r}")
        number = int(as_float)
    else:
        raise ValueError(f"the score must be {expected}")
    if not low <= number <= high:
        raise ValueError(f"the score must be {expected}, not {value!r}")
    return number
