"""Plain links for every other source (lab panels, CloudResearch Connect, volunteers by e-mail), and ``none``
for campaigns that came in by import. Neither platform pays: decisions and bonuses are recorded in the ledger
(confirmed at once, "recorded: pay outside the platform") so the researcher has one list to act on."""

from annotation_site import identities

from .. import ledger
from .base import Admission, AdmissionRefused, CrowdProvider

RECORDED = "recorded: no platform pays this; pay outside CaptionEval"


class LinkProvider(CrowdProvider):
    name = "link"
    namespace_is_study = True  # ids typed into an entry link only mean something within this study

    def admit(self, params):
        raw = (params.get(self.study.id_parameter) or "").strip()
        if not raw:
            raise AdmissionRefused(
                "invalid",
                f"This link needs your participant id (the '{self.study.id_parameter}' "
                "parameter). Please use the link you were given.",
            )
        try:  # NFKC, no invisible characters, the characters of a named id: one person cannot enter as several
            raw = identities.named_id(raw, what="participant id", reserved=False)
        except identities.IdentityError as exc:
            raise AdmissionRefused("invalid", f"This participant id is not valid: {exc}.") from None
        return Admission(platform_id=raw)

    def send(self, decisions, bonuses):
        rows = ledger.claim(decisions + bonuses)
        ledger.confirm(rows, RECORDED)

    def reconcile(self, sent_decisions, sent_bonuses):
        ledger.confirm(sent_decisions + sent_bonuses, RECORDED)


class NoProvider(LinkProvider):
    name = "none"

    def admit(self, params):
        raise AdmissionRefused("closed", "This study takes no participants: its judgments were imported.")
