"""A thin client of Prolific's v1 REST API (no official Python client exists) over ``requests``.

Facts it relies on (docs.prolific.com, API reference; recorded in docs/crowd.md):
- ``Authorization: Token <token>``; JSON bodies; base ``https://api.prolific.com``.
- Studies: ``POST /api/v1/studies/`` creates a draft; ``POST /api/v1/studies/{id}/transition/`` with
  ``{"action": "PUBLISH" | "PAUSE" | "START" | "STOP"}``; ``PATCH /api/v1/studies/{id}/`` updates fields such as
  ``total_available_places``.
- Submissions: ``GET /api/v1/studies/{id}/submissions/`` pages with ``_links.next.href``; ``GET
  /api/v1/submissions/{id}/`` (the id is the ``SESSION_ID`` Prolific passes to the study URL); ``POST
  /api/v1/submissions/{id}/transition/`` with ``APPROVE`` or ``REJECT`` (+ ``rejection_category`` and a
  ``message`` of at least 100 characters) is idempotent; ``POST /api/v1/submissions/bulk-approve/`` with
  ``submission_ids``.
- Bonuses: ``POST /api/v1/submissions/bonus-payments/`` with ``study_id`` and ``csv_bonuses``
  (``"<submission or participant id>,<amount>\\n"`` lines, amounts in the study's currency) only *creates* a
  bulk bonus payment and answers its ``id``; ``POST /api/v1/bulk-bonus-payments/{id}/pay/`` pays it, and is NOT
  idempotent: a second call pays again. Paid bonuses show in a submission's ``bonus_payments`` (cents), in
  the following minutes.

Retries. Rate limiting (429) is waited out (``Retry-After`` seconds, else exponential back-off) for every call:
a 429 means the request was not processed. 5xx answers, timeouts and dropped connections are retried only for
calls that are safe to repeat (``idempotent=True``); for the pay call they raise ``OutcomeUnknown``, because
the payment may have gone through.
"""

import logging
import time

import requests

from .. import config

log = logging.getLogger(__name__)

REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
MIN_REJECTION_MESSAGE = 100


class ProlificError(Exception):
    """Prolific answered with a definite refusal (4xx other than 429): the request had no effect."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.status = status
        self.body = body


class TransientError(Exception):
    """Prolific could not be reached or failed (5xx, timeout) after the retries: try again later."""


class OutcomeUnknown(TransientError):
    """A request that must not be repeated may or may not have taken effect (the pay call)."""


class ProlificClient:
    def __init__(
        self, token=None, base_url=None, *, timeout=None, retries=None, backoff=None, session=None, sleep=time.sleep
    ):
        self.token = token or config.require("PROLIFIC_API_TOKEN", "Prolific")
        self.base_url = (base_url or config.setting("PROLIFIC_API_URL") or "https://api.prolific.com").rstrip("/")
        self.timeout = timeout if timeout is not None else config.setting("PROLIFIC_TIMEOUT", 20)
        self.retries = retries if retries is not None else config.setting("PROLIFIC_RETRIES", 5)
        self.backoff = backoff if backoff is not None else config.setting("PROLIFIC_BACKOFF", 1.0)
        self.session = session or requests.Session()
        self.session.trust_env = False  # never a proxy from the environment: the API or the test server only
        self.sleep = sleep

    # --- transport ---------------------------------------------------------------------------------------------

    def request(self, method, path, *, json=None, params=None, idempotent=True):
        url = path if path.startswith("http") else f"{self.base_url}{path}"
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.session.request(
                    method, url, json=json, params=params, headers=headers, timeout=self.timeout
                )
            except requests.ConnectionError as exc:
                # refused before sending is safe to repeat; a connection dropped after sending is not known
                if not idempotent and not _never_sent(exc):
                    raise OutcomeUnknown(f"{method} {path}: connection lost ({exc})") from exc
                if attempt > self.retries:
                    raise TransientError(f"{method} {path}: Prolific unreachable ({exc})") from exc
                self._wait(attempt, None)
                continue
            except requests.Timeout as exc:
                if not idempotent:
                    raise OutcomeUnknown(f"{method} {path}: no answer within {self.timeout} s") from exc
                if attempt > self.retries:
                    raise TransientError(f"{method} {path}: no answer within {self.timeout} s") from exc
                self._wait(attempt, None)
                continue
            status = response.status_code
            if status == 429:
                if attempt > self.retries:
                    raise TransientError(f"{method} {path}: still rate limited after {self.retries} retries")
                self._wait(attempt, response.headers.get("Retry-After"))
                continue
            if status >= 500:
                if not idempotent:
                    raise OutcomeUnknown(f"{method} {path}: Prolific answered {status}")
                if attempt > self.retries:
                    raise TransientError(f"{method} {path}: Prolific answered {status} {attempt} times")
                self._wait(attempt, response.headers.get("Retry-After"))
                continue
            if status >= 400:
                body = _body(response)
                raise ProlificError(f"{method} {path}: Prolific refused ({status}): {body}", status, body)
            return _body(response)

    def _wait(self, attempt, retry_after):
        try:
            delay = float(retry_after) if retry_after is not None else self.backoff * 2 ** (attempt - 1)
        except ValueError:
            delay = self.backoff * 2 ** (attempt - 1)
        delay = min(max(delay, 0.0), 60.0)
        log.info("Prolific: waiting %.1f s before retry %d", delay, attempt)
        self.sleep(delay)

    # --- studies -----------------------------------------------------------------------------------------------

    def create_study(self, fields):
        return self.request("POST", "/api/v1/studies/", json=fields, idempotent=False)

    def get_study(self, study_id):
        return self.request("GET", f"/api/v1/studies/{study_id}/")

    def transition_study(self, study_id, action):
        return self.request("POST", f"/api/v1/studies/{study_id}/transition/", json={"action": action})

    def update_study(self, study_id, fields):
        return self.request("PATCH", f"/api/v1/studies/{study_id}/", json=fields)

    # --- submissions -------------------------------------------------------------------------------------------

    def get_submission(self, submission_id):
        return self.request("GET", f"/api/v1/submissions/{submission_id}/")

    def list_submissions(self, study_id, page_size=100):
        """Every submission of the study, following ``_links.next`` page by page."""
        url = f"/api/v1/studies/{study_id}/submissions/"
        params = {"page_size": page_size}
        while url:
            page = self.request("GET", url, params=params)
            yield from page.get("results", [])
            url = ((page.get("_links") or {}).get("next") or {}).get("href")
            params = None  # the next link carries its own query

    def approve(self, submission_id):
        return self.request("POST", f"/api/v1/submissions/{submission_id}/transition/", json={"action": "APPROVE"})

    def reject(self, submission_id, message, category):
        check_rejection(message, category)
        return self.request(
            "POST",
            f"/api/v1/submissions/{submission_id}/transition/",
            json={"action": "REJECT", "message": message, "rejection_category": category},
        )

    def bulk_approve(self, submission_ids):
        return self.request("POST", "/api/v1/submissions/bulk-approve/", json={"submission_ids": list(submission_ids)})

    # --- bonuses -----------------------------------------------------------------------------------------------

    def create_bonus_payments(self, study_id, amounts):
        """``amounts``: [(submission id, Decimal)]. Creates (does not pay) a bulk bonus payment; returns it."""
        csv = "".join(f"{submission},{amount:.2f}\n" for submission, amount in amounts)
        return self.request(
            "POST", "/api/v1/submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv}
        )

    def pay_bonus_payments(self, bulk_id):
        """Pays a bulk bonus payment. NOT idempotent: never call it twice for one id."""
        return self.request("POST", f"/api/v1/bulk-bonus-payments/{bulk_id}/pay/", idempotent=False)

    # --- participants and webhooks -----------------------------------------------------------------------------

    def jwks(self):
        return self.request("GET", "/.well-known/study/jwks.json")

    def create_hook_subscription(self, workspace_id, event_type, target_url):
        return self.request(
            "POST",
            "/api/v1/hooks/subscriptions/",
            json={"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url, "is_enabled": True},
            idempotent=False,
        )


def check_rejection(message, category):
    if category not in REJECTION_CATEGORIES:
        raise ProlificError(f"rejection category {category!r} is not one of {', '.join(REJECTION_CATEGORIES)}")
    if len((message or "").strip()) < MIN_REJECTION_MESSAGE:
        raise ProlificError(
            f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} characters "
            f"(this one has {len((message or '').strip())})"
        )


def _never_sent(exc):
    text = str(exc).lower()
    return "refused" in text or "failed to establish" in text or "name or service not known" in text


def _body(response):
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError:
        return {"text": response.text[:500]}
