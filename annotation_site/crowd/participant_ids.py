"""The ids a crowd platform hands over for a person and their work, checked before anything is written (issue
#11, "Identity" and "Resource limits").

- **Platform ids** (a Prolific PID, an MTurk WorkerId, the id typed into an entry link) are normalised as every
  id from outside is (``identities.normalise``: NFKC, trimmed, no invisible or control characters), so one
  person cannot appear as several, wherever the id arrives (an entry link, the MTurk HIT page, an MTurk results
  file, a list of ids to block or to make links for).
- **They fit where they go.** The protocols know a participant by the worker key ``NAMESPACE:PLATFORM_ID``
  (``Participant.worker_key``), stored in their worker columns (a DA worker's and an annotator's ``external_id``:
  ``WORKER_KEY_MAX_LENGTH``). A namespace holds a link study's name (``link:NAME``), so a platform id may be at
  most ``WORKER_KEY_MAX_LENGTH - len(NAMESPACE) - 1`` characters (94 for a study named with the longest name
  allowed, 194 on MTurk), and never more than its own column. An id past that was a database error (a 500) on
  PostgreSQL when the participant started, and an id cut short would make two people one.
- **The ids of their work** (a Prolific session, an MTurk AssignmentId and HITId) are stored as they came
  (the platform is called with them again), so they are checked, not changed: within their columns, no control
  or invisible characters.
"""

from annotation_site import identities

from .models import Participant, Participation

WORKER_KEY_MAX_LENGTH = 200  # the protocols' worker columns (asserted in tests/crowd/test_participant_ids.py)


def platform_id_limit(namespace):
    """How long a platform id of ``namespace`` may be."""
    column = Participant._meta.get_field("platform_id").max_length
    return min(column, WORKER_KEY_MAX_LENGTH - len(namespace) - 1)


def platform_id(namespace, raw, *, what="participant id"):
    """The platform id as it is stored, or IdentityError saying what is wrong."""
    return identities.normalise(raw, what=what, max_length=platform_id_limit(namespace))


def work_id(raw, field, *, what):
    """A submission or unit id of the platform's (``field`` of Participation) as it came, or IdentityError."""
    if raw == "":
        return raw
    column = Participation._meta.get_field(field).max_length
    if identities.normalise(raw, what=what, max_length=column) != raw:
        raise identities.IdentityError(f"the {what} is not as a platform issues it (it changes under Unicode NFKC)")
    return raw
