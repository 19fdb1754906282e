"""Numbers given to management commands, read like every number from outside the platform (``strict_numbers``):
ASCII digits only, no exponent, no NaN or infinity, and within a range.

argparse's ``type=int`` takes digits of other scripts (``"٣"`` is 3) and ``type=float`` takes ``"nan"`` and
``"1e2"``; an out-of-range value then reached the database and ended in a traceback (a column's range, a check
constraint). These types refuse such a value before the command does anything, naming the option
(``argument --places: the number must be a whole number from 0 to 2147483647, not '-5'``).

``column(Model, "field")`` bounds a whole number by the range of the column it is stored in, the same on every
database (PostgreSQL's ranges: SQLite's columns would take any 64-bit number, so a value that works on the
embedded default would fail in production).
"""

import argparse

from .strict_numbers import amount, column_range, form_decimal, form_integer


def _argument_type(read):
    """An argparse type from a reader that raises ValueError with its message (argparse shows it with the
    option's name)."""

    def parse(text):
        try:
            return read(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def whole_number(low, high):
    """An argparse type: a whole number from ``low`` to ``high``."""
    return _argument_type(lambda text: form_integer(text, low=low, high=high, what="the number"))


def column(model, field_name, *, low=None, high=None):
    """An argparse type: a whole number the column holds, further bounded by ``low`` / ``high`` when given."""
    column_low, column_high = column_range(model, field_name)
    return whole_number(
        column_low if low is None else max(low, column_low), column_high if high is None else min(high, column_high)
    )


def decimal_number(low, high):
    """An argparse type: a decimal number (``0.05``, ``.05``, ``30``) from ``low`` to ``high``, as a float."""
    return _argument_type(lambda text: form_decimal(text, low=low, high=high, what="the number"))


#: An argparse type: an amount of money (``strict_numbers.amount``).
money = _argument_type(lambda text: amount(text, what="the amount"))
