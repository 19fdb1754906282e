"""Signed links and completion codes.

- Study entry link ``/crowd/s/TOKEN/``: signs the study's id. Prolific and MTurk append their parameters;
  plain entry links take the platform's id parameter (``Study.id_parameter``) and are capped by the study's
  places, HITs per participant and closing time.
- Per-participant link ``/crowd/p/TOKEN/``: signs a ParticipantLink (one participant id, an expiry, a number
  of HITs); the database row is the authority (expiry, revocation), the signature keeps ids unguessable.
- Participation token: the participant's own pages (consent, practice, start, finish) after admission.
- Completion code: an HMAC of (study, protocol assignment, participant), so it is bound to that assignment and
  that participant and the researcher can verify it (``verify_code``); it is exported with the results.
"""

import base64
import hmac

from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

ENTRY_SALT = "crowd.study-entry"
LINK_SALT = "crowd.participant-link"
PARTICIPATION_SALT = "crowd.participation"
CODE_SALT = "crowd.completion-code"


def entry_token(study):
    return signing.dumps(study.pk, salt=ENTRY_SALT)


def study_id_from_entry_token(token):
    try:
        return int(signing.loads(token, salt=ENTRY_SALT))
    except (signing.BadSignature, TypeError, ValueError):
        return None


def participant_link_token(link):
    return signing.dumps({"l": link.pk, "n": str(link.nonce)}, salt=LINK_SALT)


def participant_link_from_token(token):
    """(link id, nonce) or None."""
    try:
        data = signing.loads(token, salt=LINK_SALT)
        return int(data["l"]), str(data["n"])
    except (signing.BadSignature, TypeError, ValueError, KeyError):
        return None


def participation_token(participation):
    """The token of a Participation (or of its primary key)."""
    return signing.dumps(getattr(participation, "pk", participation), salt=PARTICIPATION_SALT)


def participation_id_from_token(token):
    try:
        return int(signing.loads(token, salt=PARTICIPATION_SALT))
    except (signing.BadSignature, TypeError, ValueError):
        return None


def completion_code(study_id, work_key, worker_key):
    """Ten characters (A-Z, 2-7), bound to the study, the protocol assignment and the participant."""
    digest = salted_hmac(CODE_SALT, f"{study_id}:{work_key}:{worker_key}", secret=settings.SECRET_KEY).digest()
    return base64.b32encode(digest[:10]).decode()[:10]


def verify_code(study_id, work_key, worker_key, code):
    return hmac.compare_digest(completion_code(study_id, work_key, worker_key), (code or "").strip().upper())
