"""A fake Prolific API on loopback for the tests: real HTTP, request shapes checked like Prolific checks them,
every call logged, and failure modes on demand (429 with Retry-After, 5xx, a request that is processed but never
answered, a slow answer that times the client out).

It keeps the state the client changes (studies, submissions, bulk bonus payments), pays a bulk bonus payment
every time ``pay`` is called (Prolific's pay call is not idempotent, so neither is this one), and shows paid
bonuses in the submission's ``bonus_payments`` (cents)."""

import base64
import itertools
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "fake-prolific-token"
CATEGORIES = {
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
}


@dataclass
class Call:
    method: str
    path: str
    query: dict
    body: object
    status: int = 0
    answered: bool = True


@dataclass
class Fault:
    pattern: re.Pattern
    method: str
    kind: str  # status | drop | slow | queued
    status: int = 500
    retry_after: str | None = None
    remaining: int = 1
    delay: float = 0.0


@dataclass
class FakeProlific:
    page_size: int = 20
    calls: list = field(default_factory=list)
    studies: dict = field(default_factory=dict)
    submissions: dict = field(default_factory=dict)
    bulk_bonuses: dict = field(default_factory=dict)
    payments: list = field(default_factory=list)  # (bulk id, submission id, cents), one per bonus paid
    shape_errors: list = field(default_factory=list)
    faults: list = field(default_factory=list)
    jwks: dict = field(default_factory=lambda: {"keys": []})

    def __post_init__(self):
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self.server = None
        self.url = ""

    # --- test helpers ------------------------------------------------------------------------------------------

    def new_id(self, prefix):
        return f"{prefix}{next(self._ids):022x}"  # 24 characters, like Prolific's ids

    def add_study(self, **fields):
        study_id = self.new_id("5a")
        self.studies[study_id] = {"id": study_id, "status": "ACTIVE", "total_available_places": 10, **fields}
        return study_id

    def add_submission(self, study_id, participant_id=None, status="ACTIVE"):
        submission_id = self.new_id("6b")
        self.submissions[submission_id] = {
            "id": submission_id,
            "study_id": study_id,
            "participant": participant_id or self.new_id("7c"),
            "status": status,
            "bonus_payments": [],
            "started_at": "2026-11-23T10:00:00Z",
        }
        return submission_id

    def set_status(self, submission_id, status):
        self.submissions[submission_id]["status"] = status

    def fail(self, method, pattern, kind="status", *, status=500, times=1, retry_after=None, delay=0.0):
        """The next ``times`` matching calls fail: ``status`` (answered with it, not processed), ``drop`` (processed,
        then the connection is closed without an answer), ``slow`` (answered after ``delay`` seconds)."""
        self.faults.append(Fault(re.compile(pattern), method, kind, status, retry_after, times, delay))

    def log(self, method=None, pattern=None):
        return [
            c
            for c in self.calls
            if (method is None or c.method == method) and (pattern is None or re.search(pattern, c.path))
        ]

    def paid(self):
        """{submission id: [cents, ...]} of every bonus paid."""
        out = {}
        for _, submission, cents in self.payments:
            out.setdefault(submission, []).append(cents)
        return out

    # --- server ------------------------------------------------------------------------------------------------

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                fake.handle(self)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        host, port = self.server.server_address
        self.url = f"http://{host}:{port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def handle(self, request):
        parts = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"unparseable": raw.decode(errors="replace")}
        call = Call(request.command, parts.path, parse_qs(parts.query), body)
        with self.lock:
            self.calls.append(call)
            fault = next(
                (
                    f
                    for f in self.faults
                    if f.remaining > 0 and f.method == request.command and f.pattern.search(parts.path)
                ),
                None,
            )
            if fault is not None:
                fault.remaining -= 1
        if fault is not None and fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            return self._answer(request, call, fault.status, {"error": {"detail": "injected failure"}}, headers)
        if request.headers.get("Authorization") != f"Token {TOKEN}":
            return self._answer(request, call, 401, {"error": {"detail": "Invalid token."}})
        if fault is not None and fault.kind == "queued":
            time.sleep(fault.delay)  # the request waits in Prolific's queue: nothing changed yet
        with self.lock:
            status, answer = self.route(request.command, parts.path, call)
        if fault is not None and fault.kind == "drop":
            call.answered = False
            call.status = status
            request.close_connection = True
            try:
                request.connection.shutdown(2)
            except OSError:
                pass
            return None
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)
        return self._answer(request, call, status, answer)

    def _answer(self, request, call, status, answer, headers=None):
        call.status = status
        data = json.dumps(answer).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                request.send_header(key, value)
            request.end_headers()
            request.wfile.write(data)
        except OSError:
            call.answered = False

    def shape(self, call, message):
        self.shape_errors.append(f"{call.method} {call.path}: {message}")
        return 400, {"error": {"detail": message}}

    # --- the API -----------------------------------------------------------------------------------------------

    def route(self, method, path, call):
        body = call.body if isinstance(call.body, dict) else {}
        if method == "GET" and path == "/.well-known/study/jwks.json":
            return 200, self.jwks
        m = re.fullmatch(r"/api/v1/submissions/([0-9a-f]{24})/", path)
        if m and method == "GET":
            submission = self.submissions.get(m[1])
            return (200, dict(submission)) if submission else (404, {"error": {"detail": "Not found."}})
        m = re.fullmatch(r"/api/v1/studies/([0-9a-f]{24})/submissions/", path)
        if m and method == "GET":
            rows = [
                {**s, "participant_id": s["participant"]} for s in self.submissions.values() if s["study_id"] == m[1]
            ]
            size = int(call.query.get("page_size", [self.page_size])[0])
            size = min(size, self.page_size)
            page = int(call.query.get("page", ["1"])[0])
            chunk = rows[(page - 1) * size : page * size]
            more = page * size < len(rows)
            links = {"next": {"href": f"{self.url}{path}?page={page + 1}&page_size={size}" if more else None}}
            return 200, {"results": chunk, "_links": links, "meta": {"count": len(rows)}}
        m = re.fullmatch(r"/api/v1/submissions/([0-9a-f]{24})/transition/", path)
        if m and method == "POST":
            return self.transition(call, m[1], body)
        if path == "/api/v1/submissions/bulk-approve/" and method == "POST":
            ids = body.get("submission_ids")
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
                return self.shape(call, "submission_ids must be a non-empty list of ids")
            unknown = [i for i in ids if i not in self.submissions]
            if unknown:
                return self.shape(call, f"unknown submissions {unknown}")
            for i in ids:
                if self.submissions[i]["status"] == "AWAITING REVIEW":
                    self.submissions[i]["status"] = "APPROVED"
            return 200, {"detail": "Bulk approve in progress"}
        if path == "/api/v1/submissions/bonus-payments/" and method == "POST":
            return self.create_bonus(call, body)
        m = re.fullmatch(r"/api/v1/bulk-bonus-payments/([0-9a-f]{24})/pay/", path)
        if m and method == "POST":
            batch = self.bulk_bonuses.get(m[1])
            if batch is None:
                return 404, {"error": {"detail": "Not found."}}
            for submission, cents in batch["lines"]:  # every call pays: not idempotent, as on Prolific
                self.payments.append((m[1], submission, cents))
                self.submissions[submission]["bonus_payments"].append(cents)
            return 202, {}
        if path == "/api/v1/studies/" and method == "POST":
            return self.create_study(call, body)
        m = re.fullmatch(r"/api/v1/studies/([0-9a-f]{24})/", path)
        if m and m[1] in self.studies:
            if method == "GET":
                return 200, self.studies[m[1]]
            if method == "PATCH":
                places = body.get("total_available_places")
                if places is not None and (
                    not isinstance(places, int) or places < self.studies[m[1]]["total_available_places"]
                ):
                    return self.shape(call, "total_available_places can only grow")
                self.studies[m[1]].update(body)
                return 200, self.studies[m[1]]
        m = re.fullmatch(r"/api/v1/studies/([0-9a-f]{24})/transition/", path)
        if m and method == "POST" and m[1] in self.studies:
            action = body.get("action")
            states = {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "COMPLETED"}
            if action not in states:
                return self.shape(call, f"unknown study action {action!r}")
            self.studies[m[1]]["status"] = states[action]
            return 200, self.studies[m[1]]
        return 404, {"error": {"detail": "Not found."}}

    def transition(self, call, submission_id, body):
        submission = self.submissions.get(submission_id)
        if submission is None:
            return 404, {"error": {"detail": "Not found."}}
        action = body.get("action")
        if action not in ("APPROVE", "REJECT"):
            return self.shape(call, f"unknown action {action!r}")
        target = "APPROVED" if action == "APPROVE" else "REJECTED"
        if action == "REJECT":
            if body.get("rejection_category") not in CATEGORIES:
                return self.shape(call, f"rejection_category {body.get('rejection_category')!r} is not valid")
            if len(body.get("message") or "") < 100:
                return self.shape(call, "message must be at least 100 characters")
        if submission["status"] == target:
            return 200, dict(submission)  # idempotent: the second request is ignored
        if submission["status"] != "AWAITING REVIEW":
            return 400, {"error": {"detail": f"cannot {action.lower()} a submission that is {submission['status']}"}}
        submission["status"] = target
        return 200, dict(submission)

    def create_bonus(self, call, body):
        study_id, text = body.get("study_id"), body.get("csv_bonuses")
        if study_id not in self.studies or not isinstance(text, str) or not text.strip():
            return self.shape(call, "study_id and csv_bonuses are required")
        lines = []
        for raw in text.strip().split("\n"):
            fields = raw.split(",")
            if len(fields) != 2 or not re.fullmatch(r"\d+\.\d{2}", fields[1]):
                return self.shape(call, f"bad csv_bonuses line {raw!r}")
            submission = self.submissions.get(fields[0])
            if submission is None or submission["study_id"] != study_id:
                return self.shape(call, f"{fields[0]} did not take part in the study")
            lines.append((fields[0], int(Decimal(fields[1]) * 100)))
        bulk_id = self.new_id("8d")
        self.bulk_bonuses[bulk_id] = {"id": bulk_id, "study": study_id, "lines": lines}
        total = sum(c for _, c in lines)
        return 201, {
            "id": bulk_id,
            "study": study_id,
            "amount": total,
            "fees": 0,
            "total_amount": total,
            "csv_bonuses": text,
        }

    def create_study(self, call, body):
        needed = (
            "name",
            "description",
            "external_study_url",
            "prolific_id_option",
            "completion_codes",
            "total_available_places",
            "estimated_completion_time",
            "reward",
        )
        missing = [k for k in needed if k not in body]
        if missing:
            return self.shape(call, f"missing fields {missing}")
        url = body["external_study_url"]
        for placeholder in ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"):
            if placeholder not in url:
                return self.shape(call, f"external_study_url lacks {placeholder}")
        if not isinstance(body["reward"], int) or not isinstance(body["total_available_places"], int):
            return self.shape(call, "reward (cents) and total_available_places must be integers")
        codes = body["completion_codes"]
        if not codes or any(not c.get("code") or not c.get("code_type") for c in codes):
            return self.shape(call, "completion codes need a code and a code_type")
        study_id = self.new_id("5a")
        self.studies[study_id] = {"id": study_id, "status": "UNPUBLISHED", **body}
        return 201, self.studies[study_id]


def webhook_signature(secret, timestamp, body):
    """Prolific's signature of a hook request: base64(HMAC-SHA256(secret, timestamp + body))."""
    import hashlib
    import hmac

    return base64.b64encode(hmac.new(secret.encode(), (timestamp + body).encode(), hashlib.sha256).digest()).decode()


def new_event_id():
    return uuid.uuid4().hex
