"""The provider interface: publish a study, admit a participant, finish, fetch submissions, approve / reject /
bonus (through the ledger), block."""

from dataclasses import dataclass, field

from django.urls import reverse

from .. import config, links


@dataclass
class Admission:
    """Who arrives, as the platform vouches for them."""

    platform_id: str
    submission_id: str = ""
    unit_id: str = ""
    preview: bool = False
    extra: dict = field(default_factory=dict)


class AdmissionRefused(Exception):
    """A participant may not enter. ``kind`` picks the page: invalid, expired, unverified, closed, full, done."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


@dataclass
class SubmissionInfo:
    submission_id: str
    platform_id: str
    status: str
    bonus_cents: list = field(default_factory=list)


class CrowdProvider:
    name = ""
    namespace_is_study = False
    make_client = None  # the platform's API client (made on first use), for providers that have one

    def __init__(self, study, client=None):
        self.study = study
        self._client = client

    @property
    def client(self):
        """The platform's API client: the one given (tests pass a stubbed one), else made on first use."""
        if self._client is None:
            self._client = self.make_client()
        return self._client

    def namespace(self):
        return f"{self.name}:{self.study.name}" if self.namespace_is_study else self.name

    # study on the platform
    def create_study(self, places):
        return None

    def publish(self):
        return None

    def pause(self):
        return None

    def add_places(self, places):
        return None

    def entry_url(self):
        return config.base_url() + reverse("crowd-entry", args=[links.entry_token(self.study)])

    # participants
    def admit(self, params):
        raise NotImplementedError

    def finish(self, participation, code):
        """How the participant leaves: {"mode": "code" | "redirect" | "submit", "url", "code", "fields"}."""
        study = self.study
        if study.end_mode == "redirect" and study.completion_url:
            return {"mode": "redirect", "url": study.completion_url.replace("{code}", code), "code": code}
        return {"mode": "code", "code": code}

    def submissions(self):
        """The platform's view of the study's submissions (SubmissionInfo list); [] when it has none."""
        return []

    def block(self, participant, reason):
        return None

    # payments: send planned rows, reconcile rows left sent by a crash or a failure
    def send(self, decisions, bonuses):
        raise NotImplementedError

    def reconcile(self, sent_decisions, sent_bonuses):
        raise NotImplementedError

    def already_done(self, row):
        """Whether the platform shows a failed ledger row's decision or bonus done (True / False), or None when it
        cannot be asked now; asked before a person sends failed rows again. A platform without calls: False."""
        return False

    def shows_any_paid(self, dispatch):
        """Whether the platform now shows any bonus of an in-doubt dispatch paid (asked before a person's "not
        paid" puts its rows back to be paid again); False for a platform that has no such batches."""
        return False
