"""Who someone is, as text (issue #11, "Identity"). Every id that comes from outside — typed into an entry link,
named in an import or a command, sent by the API — is read here, so one person cannot appear as several and an
outsider cannot take an identity the platform derives for someone else:

- ids are normalised with Unicode NFKC (``ａlice`` and ``alice``, ``ﬁ`` and ``fi`` are one id) and trimmed;
- ids holding control, format (invisible: zero-width spaces and joiners, bidirectional marks, the BOM), private
  use, surrogate or unassigned characters, or line / paragraph separators, are refused;
- ids someone types or lists for a person (an entry link's id, per-participant links, DA workers named on the
  campaign page, the API or ``da_assign``) are letters, digits and ``. _ - @ + :`` (``named_id``): a space
  would make "alice bob", typed as two ids, one worker;
- the platform's own namespaces are reserved: ``account:`` (site accounts: ``assessment.workers.worker_for_user``)
  and the crowd's participant namespaces (``prolific:``, ``mturk:``, ``link:``, ...: ``Participant.worker_key``)
  cannot be named by anybody else.
"""

import re
import unicodedata

ACCOUNT_PREFIX = "account:"
PARTICIPANT_PREFIXES = ("prolific:", "mturk:", "link:", "none:", "crowd:")
RESERVED_PREFIXES = (ACCOUNT_PREFIX,) + PARTICIPANT_PREFIXES
REFUSED_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


NAMED_ID_CHARACTERS = re.compile(r"[\w.@+:-]+")
NAMED_ID_RULE = "letters, digits and . _ - @ + : only"


class IdentityError(ValueError):
    pass


def normalise(raw, *, what="id", max_length=200):
    """The canonical form of an id from outside (NFKC, trimmed); IdentityError saying what is wrong."""
    if not isinstance(raw, str):
        raise IdentityError(f"the {what} must be text")
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        raise IdentityError(f"the {what} is empty")
    if len(text) > max_length:
        raise IdentityError(f"the {what} has {len(text)} characters; at most {max_length} are allowed")
    for char in text:
        if unicodedata.category(char) in REFUSED_CATEGORIES:
            code = f"U+{ord(char):04X}"
            name = unicodedata.name(char, "")
            raise IdentityError(
                f"the {what} holds an invisible or control character ({f'{name}, ' if name else ''}{code}); "
                "type it again without it"
            )
    return text


def reserved_prefix(text):
    """The reserved namespace ``text`` begins with, or None (case-insensitive: ``Account:x`` is reserved too)."""
    lowered = text.casefold()
    return next((p for p in RESERVED_PREFIXES if lowered.startswith(p)), None)


def external_id(raw, *, what="worker id", max_length=200):
    """An id named from outside (links, imports, commands, the API): normalised, outside reserved namespaces."""
    text = normalise(raw, what=what, max_length=max_length)
    prefix = reserved_prefix(text)
    if prefix:
        raise IdentityError(
            f"the {what} {text!r} begins with {prefix!r}, which the platform reserves for "
            f"{'site accounts' if prefix == ACCOUNT_PREFIX else 'crowd participants'}"
        )
    return text


def named_id(raw, *, what="worker id", max_length=200, reserved=True):
    """An id typed or listed for a person: ``external_id`` (or only ``normalise`` when not ``reserved``) made of
    ``NAMED_ID_CHARACTERS``; IdentityError saying which character is wrong."""
    text = (
        external_id(raw, what=what, max_length=max_length)
        if reserved
        else normalise(raw, what=what, max_length=max_length)
    )
    if not NAMED_ID_CHARACTERS.fullmatch(text):
        char = next(c for c in text if not NAMED_ID_CHARACTERS.fullmatch(c))
        holds = "a space" if char.isspace() else f"{char!r}"
        raise IdentityError(f"the {what} {text[:60]!r} holds {holds}: ids are {NAMED_ID_RULE}")
    return text
