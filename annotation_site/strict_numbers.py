"""Numbers typed by people and programs outside the platform, read strictly (issue #11).

Python's ``int`` and ``float`` accept more than a score or an id should: ``float("1e2")`` is 100,
``int("١٢")`` (Arabic-Indic digits) is 12 and ``"٣".isdigit()`` is true, ``float("nan")`` and ``"inf"`` parse. A
score written any of those ways is a typing or tooling error, or an attempt to get past a check, so every score
and every id in a URL or file is read here: ASCII digits only, no exponent, no NaN or infinity.
"""

import math
import re

_ASCII_INTEGER = re.compile(r"[0-9]+\Z")
_ASCII_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\Z")


def ascii_int(text):
    """The non-negative integer spelt with ASCII digits only, else None (``"12"`` -> 12; ``"١٢"``, ``"1e2"``,
    ``" 12"``, ``"+12"`` -> None)."""
    if isinstance(text, str) and _ASCII_INTEGER.match(text):
        return int(text)
    return None


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
