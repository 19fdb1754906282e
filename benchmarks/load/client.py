"""Participants as their browsers behave, over real HTTP (aiohttp, one asyncio process drives them all): each
has its own cookie jar and keep-alive connection, loads the pages, takes the next item and submits answers
as JSON with a client-made UUID, exactly the requests of the templates and static/js:

- DA (``static/js/da-rating.js``): the rating page by its signed link (first item inside the page), then per item
  ``POST /api/da/assignments/TOKEN/judgments/`` whose answer carries the next item;
- factuality (``static/js/factuality-annotate.js``): a logged-in annotator opens the project's work page, presses
  Start (``POST .../start/`` -> 302 to the annotation page), submits ``POST /api/factuality/assignments/PK/submit/``
  with ``"next": true`` and opens the page the answer names in ``next`` (the next video, handed out by the
  submit); only without ``next`` does it post the page's ``next-form`` (Start) again;
- task (``static/js/task-annotate.js``): a crowd participant opens ``/tasks/p/TOKEN/``, presses Start
  (``POST .../next/`` -> 302 to the item page), submits ``POST /api/tasks/assignments/PK/submit/`` with the
  ``X-Participant-Token`` header and ``"next": true``, opens the ``next`` page, and so on until the link's quota
  is reached (``next`` is then the end page).

A submission whose answer does not arrive (connection refused or reset, timeout, 5xx) is sent again with the
same UUID and body, as the pages do, with a growing pause; only a 200 / 201 answer counts as acknowledged.
Each participant pauses ``think`` seconds (exponentially distributed around the mean) before each action.
"""

import asyncio
import json
import random
import re
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

import aiohttp

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
DATA_CSRF = re.compile(r'data-csrf-token="([^"]*)"')


def json_script(html, element_id):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    if match is None:
        raise ProtocolProblem(f"the page has no {element_id} data")
    return json.loads(match.group(1))


class ProtocolProblem(Exception):
    """The server answered something a browser would not have gone on from."""


def factuality_answer(config, rng, wrong_share=0.2):
    """An answer to a factuality page's configuration (its ``annotation-config``): per paragraph a score, and
    each sentence marked wrong with chance ``wrong_share``, with a span over its first two tokens."""
    paragraphs = []
    for paragraph in config["paragraphs"]:
        sentences = []
        for length in paragraph["sentences"]:
            wrong = rng.random() < wrong_share
            sentences.append({"error": int(wrong), "spans": [[0, min(2, length)]] if wrong else []})
        paragraphs.append({"score": rng.randint(1, 5), "sentences": sentences})
    return {"paragraphs": paragraphs}


def task_answer(questions, rng):
    """An answer to a task page's questions: a random option or count, a short text where one is required, one
    value per row of a question with rows."""
    answer = {}
    for question in questions:
        rows = question.get("rows")

        def one(question=question):
            kind = question["type"]
            if kind in ("likert", "choice"):
                return rng.choice(question["options"])
            if kind == "count":
                return rng.randint(question["min"], question["max"])
            if kind == "text":
                return "looks right" if question.get("required") else ""
            if kind == "pairs":
                return []
            raise ProtocolProblem(f"question type {kind!r} not handled by the load client")

        answer[question["id"]] = (
            [one() for _ in range(rows)] if rows is not None and question["type"] != "pairs" else one()
        )
    return answer


@dataclass
class Recorder:
    """What happened: latencies per (protocol, kind), every acknowledged submission and every UUID sent."""

    latencies: dict = field(default_factory=lambda: defaultdict(list))
    acked: dict = field(default_factory=lambda: defaultdict(dict))  # protocol -> {uuid: sent payload summary}
    sent: dict = field(default_factory=lambda: defaultdict(set))  # protocol -> uuids sent at least once
    statuses: dict = field(default_factory=lambda: defaultdict(int))
    retries: int = 0
    problems: list = field(default_factory=list)
    requests: int = 0
    first: float = None
    last: float = None
    finished: bool = False  # every participant has stopped (set by drive)
    started: float = None  # when drive started the participants (perf_counter)
    ran_out: dict = field(default_factory=lambda: defaultdict(list))  # protocol -> seconds at which each
    # participant that had done all its work stopped while the run still had time and requests left

    def acknowledged(self):
        return sum(len(v) for v in self.acked.values())

    def timed(self, protocol, kind, seconds, end):
        self.latencies[(protocol, kind)].append(seconds)
        self.first = end - seconds if self.first is None else min(self.first, end - seconds)
        self.last = end if self.last is None else max(self.last, end)

    def problem(self, who, message):
        if len(self.problems) < 1000:
            self.problems.append(f"{who}: {message}")


class Budget:
    """Stops the run: a deadline and a maximum number of requests."""

    def __init__(self, seconds, max_requests):
        self.deadline = time.monotonic() + seconds
        self.left = max_requests

    def take(self):
        if not self.open():
            return False
        self.left -= 1
        return True

    def open(self):
        """Whether the run still has time and requests left."""
        return time.monotonic() < self.deadline and self.left > 0


class Participant:
    RETRYABLE = (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError)

    def __init__(self, spec, base, recorder, budget, *, think, retries, timeout, seed):
        self.spec = spec
        self.protocol = spec["protocol"]
        self.base = base
        self.recorder = recorder
        self.budget = budget
        self.think = think
        self.retries = retries
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.random = random.Random(seed)
        self.csrf = ""

    async def pause(self):
        if self.think > 0:
            await asyncio.sleep(self.random.expovariate(1 / self.think))

    async def call(self, kind, method, path, *, body=None, headers=None, form=None, retry=True):
        """One request (retried with the same body on connection problems and 5xx when ``retry``); returns
        (status, text, location). Latency is measured from the first try to the answer that counts."""
        url = path if path.startswith("http") else self.base + path
        began = time.perf_counter()
        delay = 0.2
        for attempt in range(self.retries + 1):
            self.recorder.requests += 1
            try:
                async with self.http.request(
                    method, url, data=form, json=body, headers=headers, allow_redirects=False, timeout=self.timeout
                ) as response:
                    text = await response.text()
                    status, location = response.status, response.headers.get("Location", "")
            except self.RETRYABLE as exc:
                self.recorder.statuses["connection error"] += 1
                if not retry or attempt == self.retries:
                    raise ProtocolProblem(f"{method} {path}: {exc!r}") from None
            else:
                self.recorder.statuses[status] += 1
                if status < 500 or not retry or attempt == self.retries:
                    end = time.perf_counter()
                    self.recorder.timed(self.protocol, kind, end - began, end)
                    return status, text, location
            self.recorder.retries += 1
            await asyncio.sleep(delay * (0.5 + self.random.random()))
            delay = min(delay * 2, 3.0)
        raise ProtocolProblem(f"{method} {path}: no answer")  # not reached

    def remember_csrf(self, html):
        found = CSRF_INPUT.search(html) or DATA_CSRF.search(html)
        if found and found.group(1):
            self.csrf = found.group(1)

    def csrf_headers(self):
        cookie = self.http.cookie_jar.filter_cookies(self.base).get("csrftoken")
        return {"X-CSRFToken": cookie.value if cookie else self.csrf, "Referer": self.base + "/"}

    async def submit(self, path, body, headers, summary):
        """POST a submission until acknowledged; True when acknowledged (200 / 201)."""
        key = body.get("client_uuid") or body.get("submission_uuid")
        self.recorder.sent[self.protocol].add(key)
        status, text, _ = await self.call("submit", "POST", path, body=body, headers=headers)
        try:
            data = json.loads(text)
        except ValueError:
            data = {}
        if status in (200, 201):
            self.recorder.acked[self.protocol][key] = summary
            return data
        raise ProtocolProblem(f"submit answered {status}: {text[:300]}")

    async def run(self):
        jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
        if "session" in self.spec:
            jar.update_cookies({self.spec["session_cookie"]: self.spec["session"]})
        connector = aiohttp.TCPConnector(limit=2, force_close=False)
        async with aiohttp.ClientSession(cookie_jar=jar, connector=connector) as self.http:
            try:
                await getattr(self, f"run_{self.protocol}")()
            except ProtocolProblem as exc:
                self.recorder.problem(f"{self.protocol} {self.spec['key']}", str(exc))
            else:
                if self.budget.open():  # stopped because its work was done, not because the run ended
                    self.recorder.ran_out[self.protocol].append(time.perf_counter() - self.recorder.started)

    # --- the three kinds of work ----------------------------------------------------------------------------

    async def run_da(self):
        if not self.budget.take():
            return
        status, html, _ = await self.call("page", "GET", self.spec["url"])
        if status != 200:
            raise ProtocolProblem(f"rating page answered {status}")
        state = json_script(html, "da-state")
        submit_url = re.search(r'data-submit-url="([^"]+)"', html).group(1)
        self.remember_csrf(html)
        while state.get("item") and not state.get("complete"):
            await self.pause()
            if not self.budget.take():
                return
            item = state["item"]
            score = self.random.randint(0, 100)
            body = {
                "item": item["id"],
                "score": score,
                "client_uuid": str(uuid.uuid4()),
                "elapsed_ms": self.random.randint(3000, 20000),
                "played": True,
                "watched_seconds": round(self.random.uniform(0.5, 1.0), 3),
            }
            data = await self.submit(submit_url, body, self.csrf_headers(), {"item": item["id"], "score": score})
            state = data["state"]

    async def run_factuality(self):
        work = self.spec["start"].replace("/start/", "/work/")
        if not self.budget.take():
            return
        status, html, _ = await self.call("page", "GET", work)
        if status != 200:
            raise ProtocolProblem(f"work page answered {status}")
        self.remember_csrf(html)
        location = None  # the next page a submit's answer named
        for _ in range(self.spec["limit"]):
            if location is None:  # the first video, or a submit that did not hand out: Start
                if not self.budget.take():
                    return
                status, _, location = await self.call(
                    "next",
                    "POST",
                    self.spec["start"],
                    form={"csrfmiddlewaretoken": self.csrf},
                    headers=self.csrf_headers(),
                )
                if status != 302:
                    return
            if "/assignments/" not in location:
                return  # nothing left for this annotator (the work page)
            if not self.budget.take():
                return
            status, html, _ = await self.call("page", "GET", location)
            if status != 200:
                raise ProtocolProblem(f"annotation page answered {status}")
            self.remember_csrf(html)
            config = json_script(html, "annotation-config")
            await self.pause()
            if not self.budget.take():
                return
            body = {
                "submission_uuid": str(uuid.uuid4()),
                "answer": factuality_answer(config, self.random),
                "confirm": False,
                "time_spent": self.random.randint(30, 200),
                "video_played": True,
                "next": True,
            }
            data = await self.submit(
                config["submitUrl"], body, self.csrf_headers(), {"assignment": config["submitUrl"]}
            )
            location = data.get("next")

    async def run_task(self):
        token = self.spec["token"]
        if not self.budget.take():
            return
        status, html, _ = await self.call("page", "GET", self.spec["url"])
        if status != 200:
            raise ProtocolProblem(f"participant page answered {status}")
        self.remember_csrf(html)
        next_path = f"/tasks/p/{token}/next/"
        location = None  # the next page a submit's answer named
        while True:
            if location is None:  # the first item, or a submit that did not hand out: Next
                if not self.budget.take():
                    return
                status, _, location = await self.call(
                    "next", "POST", next_path, form={"csrfmiddlewaretoken": self.csrf}, headers=self.csrf_headers()
                )
                if status != 302:
                    return
            if "/items/" not in location:
                return  # the quota is reached or nothing is left (the end page)
            if not self.budget.take():
                return
            status, html, _ = await self.call("page", "GET", location)
            if status != 200:
                raise ProtocolProblem(f"item page answered {status}")
            self.remember_csrf(html)
            config = json_script(html, "annotation-config")
            await self.pause()
            if not self.budget.take():
                return
            body = {
                "submission_uuid": str(uuid.uuid4()),
                "answer": task_answer(config["questions"], self.random),
                "confirm": False,
                "time_spent": self.random.randint(20, 90),
                "video_played": True,
                "next": True,
            }
            headers = dict(self.csrf_headers(), **{"X-Participant-Token": config["participantToken"]})
            data = await self.submit(config["submitUrl"], body, headers, {"assignment": config["submitUrl"]})
            location = data.get("next")


async def drive(base, specs, *, seconds, max_requests, think, ramp, retries=8, timeout=30, seed=0, during=None):
    """Run every participant (started evenly over ``ramp`` seconds) until their work, the time or the request
    budget runs out. ``during``: an optional coroutine function run alongside (fault injection) with the
    recorder. Returns the Recorder and the wall time."""
    recorder = Recorder(started=time.perf_counter())
    budget = Budget(seconds, max_requests)

    async def one(index, spec):
        await asyncio.sleep(ramp * index / max(1, len(specs)))
        await Participant(
            spec, base, recorder, budget, think=think, retries=retries, timeout=timeout, seed=seed * 100_003 + index
        ).run()

    began = time.perf_counter()
    jobs = [asyncio.ensure_future(one(i, spec)) for i, spec in enumerate(specs)]
    side = asyncio.ensure_future(during(recorder)) if during else None
    await asyncio.gather(*jobs)
    wall = time.perf_counter() - began
    recorder.finished = True
    if side is not None:
        await side
    return recorder, wall


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]
