"""Pages: a researcher sets a task up from a preset (create, import items and model answers, refused files,
settings and definition, members, participant links, close), annotators and crowd participants work on it,
the report, its charts and downloads; the annotation page uses a constant number of queries."""

import json
import re
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation_site.annotators.services import annotator_for_user
from annotation_site.judgment_tasks import imports, participants, services
from annotation_site.judgment_tasks.assignment import next_assignment
from annotation_site.judgment_tasks.models import Assignment, Item, ModelAnswer, Submission, Task
from annotation_site.prepared_queries import sent_sql
from annotation_site.problems import FormatError

from .conftest import lines, question_quality_items, work_through

pytestmark = pytest.mark.django_db


def upload(text, name="items.jsonl"):
    return SimpleUploadedFile(name, text.encode(), content_type="application/x-ndjson")


def test_a_researcher_sets_up_a_task_from_a_preset(staff_client, videos):
    page = staff_client.get(reverse("tasks-create"))
    assert b"fifa-question-quality" in page.content and b"vc-inspector" in page.content
    response = staff_client.post(
        reverse("tasks-create"),
        {
            "name": "verify",
            "dataset": "clips",
            "preset": "fifa-verification",
            "annotators_per_item": 3,
            "annotators": "alice\nbob",
            "description": "",
        },
    )
    assert response.status_code == 302
    task = Task.objects.get(name="verify")
    detail = staff_client.get(reverse("tasks-detail", args=["verify"])).content.decode()
    assert "Next: import the items" in detail and "alice" in detail and "to set a password" in detail
    bad = staff_client.post(
        reverse("tasks-import", args=["verify", "items"]),
        {"items-file": upload(lines({"video_id": "c1", "questions": "q?"}, {"video_id": "zz"}))},
    )
    assert bad.status_code == 400
    text = bad.content.decode()
    assert "nothing was imported" in text and "<code>questions</code>" in text and ">2<" in text
    good = lines(
        *[{"item_id": f"i{n}", "video_id": f"c{n + 1}", "subset": "T2V", "questions": ["a?", "b?"]} for n in range(4)]
    )
    staff_client.post(reverse("tasks-import", args=["verify", "items"]), {"items-file": upload(good)})
    assert Item.objects.filter(task=task).count() == 4
    qa = lines(*[{"item_id": f"i{n}", "model": "VQA", "answers": {"answer": ["yes", "no"]}} for n in range(4)])
    staff_client.post(reverse("tasks-import", args=["verify", "answers"]), {"answers-file": upload(qa)})
    assert ModelAnswer.objects.filter(task=task).count() == 4
    settings = staff_client.get(reverse("tasks-settings", args=["verify"])).content.decode()
    assert "definition" in settings and "disabled" not in settings.split('name="definition"')[1][:200]
    definition = dict(task.definition)
    definition["questions"] = [dict(definition["questions"][0], prompt="Yes or no?")]
    response = staff_client.post(
        reverse("tasks-settings", args=["verify"]),
        {
            "title": "Verify",
            "description": "",
            "annotators_per_item": 3,
            "instructions": "## Do it",
            "definition": json.dumps(definition),
        },
    )
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.definition["questions"][0]["prompt"] == "Yes or no?" and task.title == "Verify"
    response = staff_client.post(
        reverse("tasks-settings", args=["verify"]),
        {"title": "Verify", "annotators_per_item": 3, "definition": '{"questions": []}'},
    )
    assert response.status_code == 200 and b"at least one question" in response.content
    link = staff_client.post(
        reverse("tasks-participant-link", args=["verify"]),
        {"provider": "link", "external_id": "P-17", "limit": 2},
        follow=True,
    ).content.decode()
    assert re.search(r"/tasks/p/[^/]+/", link)
    staff_client.post(reverse("tasks-status", args=["verify"]), {"status": "closed"})
    assert Task.objects.get(name="verify").status == "closed"


@pytest.fixture
def quality(make_task, annotator_accounts):
    annotators = annotator_accounts(3)
    items = [dict(item, system="Sora") for item in question_quality_items(2)]  # the system must never be shown
    return make_task("quality", "fifa-question-quality", items, members=annotators), annotators


def test_the_annotation_page_is_built_from_the_definition(client, quality):
    task, (annotator, *_) = quality
    client.force_login(annotator.user)
    work = client.get(reverse("tasks-work", args=["quality"]))
    assert b"Start the next item" in work.content
    response = client.post(reverse("tasks-start", args=["quality"]))
    found = Assignment.objects.get(annotator=annotator)
    assert response["Location"] == reverse("tasks-annotate", args=[found.pk])
    page = client.get(response["Location"]).content.decode()
    assert 'id="list-tuples"' in page and "T3" in page and "a ball" in page
    assert page.count('class="task-chip"') == 6  # 2 questions x 3 tuples
    assert 'id="list-questions"' not in page  # the questions are the rows of the matching question
    assert "<video" not in page and "player" not in page.split('id="annotation"')[0].split("fact-layout")[1][:80]
    config = json.loads(
        re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert config["questions"] == [
        {
            "id": "matches",
            "type": "pairs",
            "required": True,
            "left": 3,
            "rows": 2,
            "prompt": "For each question, mark the facts it asks about.",
        }
    ]
    assert config["state"]["source"] == "new" and config["participantToken"] is None
    # No system, no item id. The CSRF token is 64 random letters and digits, so "q0" turns up inside it in about
    # one page in sixty: look at what the page shows, not at the token.
    shown = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)
    assert not re.search(r"\b(?:Sora|q0)\b", shown)


def _page_queries(client, make_task, annotator_accounts, name, elements):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    [annotator] = annotator_accounts(1, prefix=name)
    items = [
        {
            "video_id": "c1",
            "tuples": [f"t{i}" for i in range(elements)],
            "questions": [f"q{i}?" for i in range(elements)],
        }
    ]
    task = make_task(name, "fifa-conversion", items, members=[annotator])
    found = next_assignment(task, annotator)
    client.force_login(annotator.user)
    with CaptureQueriesContext(connection) as context:
        assert client.get(reverse("tasks-annotate", args=[found.pk])).status_code == 200
    return len(context)


def test_the_annotation_page_uses_a_constant_number_of_queries(client, make_task, annotator_accounts):
    short = _page_queries(client, make_task, annotator_accounts, "short", 2)
    # 8 before position_of became one query (it also loaded the annotator)
    assert short == _page_queries(client, make_task, annotator_accounts, "long", 200) <= 6


def test_api_submit_is_idempotent_and_checks_ownership(quality, annotator, other_annotator, crowd_worker):
    task, _ = quality
    first = services.add_member(task, annotator_for_user(annotator.user))
    services.add_member(task, annotator_for_user(other_annotator.user))
    found = next_assignment(task, first)
    url = reverse("api-tasks-submit", args=[found.pk])
    body = {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[0, 0]]}}
    assert other_annotator.client.post(url, body, content_type="application/json").status_code == 404  # not theirs
    # no account and no participant token: not a worker at all
    assert crowd_worker.client.post(url, body, content_type="application/json").status_code == 403
    assert Submission.objects.count() == 0
    client = annotator.client
    assert client.post(url, body, content_type="application/json").status_code == 201
    assert client.post(url, body, content_type="application/json").status_code == 200  # a retry
    assert Submission.objects.count() == 1
    empty = {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": []}}
    refused = client.post(url, empty, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["needs_confirmation"]
    wrong = client.post(
        url, {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[5, 0]]}}, content_type="application/json"
    )
    assert wrong.status_code == 400 and wrong.json()["problems"][0]["question"] == "matches"
    draft = client.put(
        reverse("api-tasks-draft", args=[found.pk]), {"answer": {"matches": [[1, 1]]}}, content_type="application/json"
    )
    assert draft.status_code == 200


def test_the_page_names_the_version_of_the_draft_it_rendered(client, quality):
    """What the page compares before it restores an answer kept in the tab (static/js/annotation-session.js,
    DraftKeeper): its ``draftVersion`` is the ``saved_at`` the draft endpoint answered for the draft rendered."""
    task, (annotator, *_) = quality
    found = next_assignment(task, annotator)
    client.force_login(annotator.user)

    def config():
        page = client.get(reverse("tasks-annotate", args=[found.pk])).content.decode()
        return json.loads(
            re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S).group(1)
        )

    assert config()["draftVersion"] is None
    versions = []
    for pairs in ([[1, 1]], [[0, 0]]):
        saved = client.put(
            reverse("api-tasks-draft", args=[found.pk]), {"answer": {"matches": pairs}}, content_type="application/json"
        )
        versions.append(saved.json()["saved_at"])
        assert config()["draftVersion"] == versions[-1]
    assert versions[0] != versions[1]
    body = {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[0, 0]]}}
    assert (
        client.post(reverse("api-tasks-submit", args=[found.pk]), body, content_type="application/json").status_code
        == 201
    )
    assert config()["draftVersion"] is None
    # the submission it starts from: a copy kept in a tab from before a later resubmission is dropped (was the
    # same "submitted" for every submission, so such a copy was restored over the newer answer)
    assert config()["basedOn"] == body["submission_uuid"]
    again = {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[1, 1]]}}
    client.post(reverse("api-tasks-submit", args=[found.pk]), again, content_type="application/json")
    assert config()["basedOn"] == again["submission_uuid"]


def test_a_crowd_participant_works_through_a_signed_link(client, quality, django_assert_max_num_queries):
    task, _ = quality
    annotator = participants.admit(task, provider="prolific", external_id="5f1e")
    assert participants.admit(task, provider="prolific", external_id="5f1e") == annotator
    assert annotator.kind == "crowd"
    url = participants.entry_url(
        task, annotator, limit=1, finish_url="https://app.prolific.com/submissions/complete?cc=C0DE"
    )
    token = url.split("/")[3]
    landing = client.get(url)
    assert landing.status_code == 200 and b"Start" in landing.content
    response = client.post(reverse("tasks-participant-next", args=[token]))
    found = Assignment.objects.get(annotator=annotator)
    item_url = reverse("tasks-participant-item", args=[token, found.pk])
    assert response["Location"] == item_url
    page = client.get(item_url).content.decode()
    assert token in page and 'Item 1 <span class="muted">of 1</span>' in page
    # no way out to pages that need an account: the site header had "Log in" and the name linked to "/"
    for html in (page, landing.content.decode()):
        header = html.split('<header class="site-header">', 1)[1].split("</header>", 1)[0]
        assert "href" not in header and "Log in" not in header and "CaptionEval" in header
    submit = client.post(
        reverse("api-tasks-submit", args=[found.pk]),
        {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[0, 0], [1, 1]]}},
        content_type="application/json",
        HTTP_X_PARTICIPANT_TOKEN=token,
    )
    assert submit.status_code == 201
    assert (
        client.post(reverse("api-tasks-submit", args=[found.pk]), {}, content_type="application/json").status_code
        == 403
    )
    assert participants.is_complete(task, annotator, limit=1)
    done = client.post(reverse("tasks-participant-next", args=[token]))
    assert done["Location"] == reverse("tasks-participant-done", args=[token])
    assert client.get(done["Location"])["Location"].startswith("https://app.prolific.com/")
    assert client.get(reverse("tasks-participant", args=[token + "x"])).status_code == 403
    other = participants.admit(task, provider="prolific", external_id="other")
    other_token = participants.token_for(task, other)
    assert client.get(reverse("tasks-participant-item", args=[other_token, found.pk])).status_code == 404


def test_an_expired_link_is_refused_with_a_clear_page(client, quality, settings):
    task, _ = quality
    annotator = participants.admit(task, provider="link", external_id="late")
    url = participants.entry_url(task, annotator)
    settings.JUDGMENT_TASKS_TOKEN_MAX_AGE = -1
    page = client.get(url)
    assert page.status_code == 403 and b"This link has expired" in page.content


def test_report_page_charts_and_downloads(staff_client, quality):
    task, annotators = quality
    for a, annotator in enumerate(annotators):
        work_through(task, annotator, lambda item, a=a: {"matches": [[0, 0], [1, 1]] if a < 2 else [[0, 0]]})
    page = staff_client.get(reverse("tasks-report", args=["quality"])).content.decode()
    assert "Question quality" in page and "Precision" in page and "100.00%" in page
    for chart in ("figure-0", "agreement", "answers"):
        svg = staff_client.get(reverse("tasks-chart", args=["quality", chart, "svg"]))
        assert svg.status_code == 200 and b"<svg" in svg.content
        png = staff_client.get(reverse("tasks-chart", args=["quality", chart, "png"]))
        assert png.content.startswith(b"\x89PNG")
    staff_client.raise_request_exception = False
    for missing in ("figure-9", "figure-\u00b2", "figure-\u0660", "figure--1"):  # "²".isdigit(), int("²") fails
        assert staff_client.get(reverse("tasks-chart", args=["quality", missing, "svg"])).status_code == 404, missing
    labels = staff_client.get(reverse("tasks-download", args=["quality", "labels.csv"])).content.decode()
    header, *rows = labels.strip().splitlines()
    assert header.startswith("question,item_id,video_id") and len(rows) == 12  # 2 items x 3 tuples x 2 questions
    assert "matches,q0,c1,Sora,,,,1,1,3,1,0,1:3" in rows
    report = json.loads(staff_client.get(reverse("tasks-download", args=["quality", "report.json"])).content)
    assert report["figures"][0]["precision"] == 1.0 and report["figures"][0]["recall"] == 2 / 3
    figures = staff_client.get(reverse("tasks-download", args=["quality", "figures.csv"])).content.decode()
    assert "question quality,matches,all,precision,1.0" in figures
    raw = staff_client.get(reverse("tasks-download", args=["quality", "answers.jsonl"])).content.decode()
    assert len(raw.splitlines()) == 6 and '"annotator": "A1"' in raw


def test_pages_need_membership_or_staff(quality, annotator, outsider, staff_researcher):
    for stranger in (annotator, outsider):  # an annotator who is not a member; an account with no role
        client = stranger.client
        assert client.get(reverse("tasks-work", args=["quality"])).status_code == 404
        assert client.post(reverse("tasks-start", args=["quality"])).status_code == 404
        assert client.get(reverse("tasks-report", args=["quality"])).status_code == 302  # to the admin login
        assert client.get(reverse("api-tasks-report", args=["quality"])).status_code == 403
    assert staff_researcher.client.get(reverse("tasks-report", args=["quality"])).status_code == 200


def test_alpha_per_model_version_warns_on_each_version_it_rests_on_few_units(
    staff_client, make_task, annotator_accounts
):
    """Each version's alpha carries its own warning: a version with a handful of items must not look as reliable
    as the figure over all versions."""
    annotators = annotator_accounts(3)
    items = [
        {"item_id": f"e{n}", "video_id": f"c{n + 1}", "model": "vci-3b" if n < 3 else "vci-7b", "caption": f"c {n}",
         "score": "3", "explanation": f"wrong object {n}"}
        for n in range(6)
    ]  # fmt: skip
    task = make_task("vci", "vc-inspector", items, members=annotators)
    for a, annotator in enumerate(annotators):
        work_through(task, annotator, lambda item, a=a: {"correct": (int(item.key[1:]) + a) % 5 + 1,
                                                         "names_errors": 3, "comment": ""})  # fmt: skip
    page = staff_client.get(reverse("tasks-report", args=["vci"])).content.decode()
    table = page.split('id="figure-table-0"')[1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    versions = [re.search(r'<th scope="row">(.*?)</th>', row).group(1) for row in rows if '<th scope="row">' in row]
    assert versions == ["all versions", "vci-3b", "vci-7b"]
    warned = [row for row in rows if "fewer than 30" in row]
    assert [re.search(r"only (\d+) units", row).group(1) for row in warned] == ["6", "3", "3"]


def test_every_question_type_renders(client, make_task, annotator_accounts):
    """Likert, choice, per-element count, matching pairs and free text on one page (the VC-Inspector preset
    plus a custom definition)."""
    [annotator] = annotator_accounts(1)
    task = make_task(
        "vci",
        "vc-inspector",
        [{"video_id": "c1", "caption": "a man runs .", "score": "3", "explanation": "the man walks"}],
        members=[annotator],
    )
    found = next_assignment(task, annotator)
    client.force_login(annotator.user)
    page = client.get(reverse("tasks-annotate", args=[found.pk])).content.decode()
    assert '<textarea id="text-comment" rows="3" maxlength="2000">' in page
    assert page.count('name="correct"') == 5 and page.count('name="names_errors"') == 5
    assert "the man walks" in page and "(optional)" in page
    custom = services.create_task(
        name="custom",
        dataset=task.dataset,
        definition={
            "lists": [{"name": "people", "marker": "P"}, {"name": "things", "marker": "X"}],
            "questions": [
                {"id": "count", "type": "count", "prompt": "How many times?", "per": "people", "max": 9},
                {"id": "kind", "type": "choice", "prompt": "Kind?", "options": [["a", "A"], ["b", "B"], ["c", "C"]]},
                {"id": "link", "type": "pairs", "prompt": "Who holds what?", "left": "things", "right": "people"},
            ],
        },
    )
    from annotation_site.judgment_tasks import imports

    imports.import_items(custom, lines({"video_id": "c2", "people": ["a man", "a girl"], "things": ["a cup"]}))
    services.add_member(custom, annotator)
    found = next_assignment(custom, annotator)
    page = client.get(reverse("tasks-annotate", args=[found.pk])).content.decode()
    assert page.count('type="number"') == 2 and page.count('name="kind"') == 3 and page.count("task-chip") >= 2
    config = json.loads(
        re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert [(q["id"], q.get("rows")) for q in config["questions"]] == [("count", 2), ("kind", None), ("link", 2)]


def test_position_of_is_one_query_and_agrees_with_the_lists(make_task, annotator_accounts, django_assert_num_queries):
    from annotation_site.judgment_tasks import assignment as assigning

    def by_lists(found, limit):  # position_of as it was: the annotator's assignments as a list
        mine = list(
            Assignment.objects.filter(task_id=found.task_id, annotator_id=found.annotator_id)
            .order_by("created_at", "id")
            .values_list("pk", flat=True)
        )
        total = len(mine) + assigning.assignable_count(found.task, found.annotator)
        return mine.index(found.pk) + 1, min(total, limit) if limit else total, False

    annotators = annotator_accounts(3, prefix="pos")
    items = [{"item_id": f"i{i}", "video_id": "c1", "tuples": ["t"], "questions": [f"q{i}?"]} for i in range(4)]
    task = make_task("pos", "fifa-conversion", items, members=annotators, per_item=2)
    taken = []
    for _ in range(4):
        for annotator in annotators:
            found = next_assignment(task, annotator)
            if found is not None:
                taken.append(found)
                Assignment.objects.filter(pk=found.pk).update(status=Assignment.Status.SUBMITTED)
            for found in taken:
                for limit in (None, 2):
                    expected = by_lists(found, limit)
                    with django_assert_num_queries(1):
                        assert assigning.position_of(found, limit=limit) == expected
    assert {assigning.position_of(found)[0] for found in taken} >= {1, 2, 3}


def test_next_assignment_locks_the_member_row_with_its_compiled_query(make_task, annotator_accounts):
    """The member lock and the open-assignment read are compiled once per connection: the lock stays a
    ``FOR UPDATE`` of the member's row (PostgreSQL), the second request finds the open assignment again."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    a, b = annotator_accounts(2, prefix="lock")
    items = [{"item_id": f"i{i}", "video_id": "c1", "tuples": ["t"], "questions": [f"q{i}?"]} for i in range(2)]
    task = make_task("lock", "fifa-conversion", items, members=[a, b], per_item=1)
    first = next_assignment(task, a)
    with CaptureQueriesContext(connection) as captured:
        assert next_assignment(task, a) == first
        assert next_assignment(task, b) not in (None, first)
    locks = [s for s in (sent_sql(q["sql"]) for q in captured.captured_queries) if "taskmember" in s]
    assert len(locks) == 2
    if connection.vendor == "postgresql":
        assert all('FOR UPDATE OF "judgment_tasks_taskmember"' in sql for sql in locks)


def stat(page, term):
    """The value of the progress partial's ``term`` as the page shows it (tags removed, spaces collapsed)."""
    found = re.search(rf"<dt>{re.escape(term)}</dt><dd>(.*?)</dd>", page, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_progress_after_lowering_the_overlap_counts_every_answer_given(staff_client, make_task, annotator_accounts):
    """4 items x 3 answers done, then the overlap lowered to 1 (PATCH): the answers given stay counted (the page
    said "12 of 4", the API "slots": 4, "submitted": 12); with an item still open beyond the new overlap the
    share done is below 100 % until it is submitted."""
    annotators = annotator_accounts(3)
    task = make_task("lowered", "fifa-question-quality", question_quality_items(4), members=annotators)
    for annotator in annotators:
        work_through(task, annotator, lambda item: {"matches": [[0, 0]]})
    url = reverse("api-tasks-detail", args=["lowered"])
    assert staff_client.patch(url, {"annotators_per_item": 1}, content_type="application/json").status_code == 200
    progress = staff_client.get(url).json()["progress"]
    assert (progress["slots"], progress["submitted"], progress["share"]) == (12, 12, 1.0)
    assert progress["above_capacity"] == 8  # 2 answers per item beyond the 1 asked now
    page = staff_client.get(reverse("tasks-detail", args=["lowered"])).content.decode()
    assert stat(page, "Answers submitted") == "12 of 12" and stat(page, "Done") == "100%"
    assert "8 answers beyond 1 per item" in page

    # two items answered twice, a third annotator still on one of them, then the overlap lowered to 2: that
    # open answer is work left (the old total, 2 x 2 = 4, said 4 of 4: 100 % done)
    task = make_task("open", "fifa-question-quality", question_quality_items(2), members=annotators)
    for annotator in annotators[:2]:
        work_through(task, annotator, lambda item: {"matches": [[0, 0]]})
    assert next_assignment(task, annotators[2]) is not None
    url = reverse("api-tasks-detail", args=["open"])
    assert staff_client.patch(url, {"annotators_per_item": 2}, content_type="application/json").status_code == 200
    progress = staff_client.get(url).json()["progress"]
    assert (progress["slots"], progress["assigned"], progress["submitted"]) == (5, 5, 4)
    assert progress["share"] == 4 / 5 and progress["above_capacity"] == 1
    page = staff_client.get(reverse("tasks-detail", args=["open"])).content.decode()
    assert stat(page, "Answers submitted") == "4 of 5" and stat(page, "Done") == "80%"


def test_a_pair_given_twice_is_refused(quality, annotator):
    """Matching pairs are a set: ``[[0, 0], [0, 0]]`` was accepted (201) and stored as one pair; it is refused
    with the pair named as the page names it, and nothing is stored. A model's answers are checked alike."""
    task, _ = quality
    found = next_assignment(task, services.add_member(task, annotator_for_user(annotator.user)))
    url = reverse("api-tasks-submit", args=[found.pk])
    body = {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[0, 0], [1, 1], [0, 0]]}}
    refused = annotator.client.post(url, body, content_type="application/json")
    assert refused.status_code == 400
    [problem] = refused.json()["problems"]
    assert problem["question"] == "matches" and problem["code"] == "pairs"
    assert "the pair T1–Q1 ([0, 0]) is given twice: give each pair once" in problem["message"]
    assert not Submission.objects.exists()
    with pytest.raises(FormatError) as caught:
        imports.import_model_answers(
            task, lines({"item_id": "q0", "model": "M", "answers": {"matches": [[2, 1], [2, 1]]}}), filename="m.jsonl"
        )
    assert [str(p) for p in caught.value.problems] == [
        "m.jsonl, line 1, answers.matches: “For each question, mark the facts it asks about.”: the pair T3–Q2 ([2, 1]) is given "
        "twice: give each pair once"
    ]
