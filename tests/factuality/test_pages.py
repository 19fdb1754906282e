"""The pages: what annotators and researchers see, who may see it, and constant query counts."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpRequest
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import annotator_for_user
from annotation_site.factuality import projects
from annotation_site.factuality.assignment import next_assignment
from annotation_site.factuality.models import Project, Submission

from .conftest import import_jsonl, lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(annotator, make_project):
    """The annotator persona invited to project "fact": their page client, with their Annotator and the project."""
    client = annotator.client
    client.annotator = annotator_for_user(annotator.user)
    client.project = make_project(annotators=[client.annotator])
    return client


def test_an_annotator_sees_their_projects_and_starts_a_video(member):
    home = member.get(reverse("factuality-home"))
    assert home.status_code == 200 and b'id="my-projects"' in home.content and b"all-projects" not in home.content
    response = member.post(reverse("factuality-start", args=["fact"]))
    found = member.project.assignments.get()
    assert response.status_code == 302 and response.url == reverse("factuality-annotate", args=[found.pk])
    work = member.get(reverse("factuality-work", args=["fact"]))
    assert b"Continue video" in work.content and b"Continue video 1" in work.content
    assert member.get(reverse("factuality-project", args=["fact"])).url == reverse("factuality-work", args=["fact"])


def test_annotators_see_only_their_projects(member, make_project, other_annotator, outsider):
    make_project(name="secret")
    assert member.get(reverse("factuality-work", args=["secret"])).status_code == 404
    assert member.get(reverse("factuality-instructions", args=["secret"])).status_code == 404
    assert member.post(reverse("factuality-start", args=["secret"])).status_code == 404
    for name in ("factuality-settings", "factuality-report", "factuality-export-raw"):
        assert member.get(reverse(name, args=["fact"])).status_code == 302  # to the staff login
    for stranger in (other_annotator, outsider):  # an annotator of other projects, an account with no role
        assert stranger.client.get(reverse("factuality-work", args=["fact"])).status_code == 404
        assert stranger.client.post(reverse("factuality-start", args=["fact"])).status_code == 404
    assert member.project.assignments.count() == 0


def test_the_annotation_page_hides_systems_and_escapes_captions(client, annotator_accounts):
    dataset = import_jsonl(
        lines(
            {
                "video_id": "x1",
                "system": "SecretNet<b>",
                "sentences": ["<script>alert(1)</script> walks . ", "a [b] c ."],
            }
        ),
        "hostile",
    )
    [annotator] = annotator_accounts(1)
    project = projects.create_project(projects.ProjectSpec(name="h", dataset=dataset))
    projects.add_member(project, annotator)
    found = next_assignment(project, annotator)
    client.force_login(annotator.user)
    page = client.get(reverse("factuality-annotate", args=[found.pk])).content.decode()
    assert "SecretNet" not in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Paragraph A" in page and 'Video 1 <span class="muted">of 1</span>' in page
    config = json.loads(
        re.search(r'<script id="annotation-config" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert config["paragraphs"] == [{"letter": "A", "sentences": [3, 4]}]
    assert config["state"]["source"] == "new" and config["kind"] == "factuality"
    assert [v for v, _ in config["scale"]] == [1, 2, 3, 4, 5]
    assert "A lot of severe errors" in page and 'name="score-0"' in page


def _page_queries(client, annotator_accounts, django_assert_max_num_queries, captions, sentences):
    dataset = import_jsonl(
        lines(
            *[
                {"video_id": "w", "system": f"S{c}", "sentences": [f"sentence {s} ." for s in range(sentences)]}
                for c in range(captions)
            ]
        ),
        f"d{captions}",
    )
    [annotator] = annotator_accounts(1, prefix=f"q{captions}-")
    project = projects.create_project(projects.ProjectSpec(name=f"p{captions}", dataset=dataset))
    projects.add_member(project, annotator)
    found = next_assignment(project, annotator)
    client.force_login(annotator.user)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as context:
        assert client.get(reverse("factuality-annotate", args=[found.pk])).status_code == 200
    return len(context)


def test_the_annotation_page_uses_a_constant_number_of_queries(
    client, annotator_accounts, django_assert_max_num_queries
):
    small = _page_queries(client, annotator_accounts, django_assert_max_num_queries, 2, 1)
    large = _page_queries(client, annotator_accounts, django_assert_max_num_queries, 12, 10)
    assert small == large <= 9  # 11 before position_of became one query (it also loaded the annotator)


def test_instructions_render_and_are_editable(staff_client, make_project):
    make_project()
    page = staff_client.get(reverse("factuality-instructions", args=["fact"])).content.decode()
    assert '<mark class="error-span">cat</mark>' in page and "<h2>Worked examples</h2>" in page
    assert "UNK" in page and "completeness does not count" in page
    response = staff_client.post(
        reverse("factuality-settings", args=["fact"]),
        {
            "description": "pilot",
            "annotators_per_video": 2,
            "instructions": "## Our rules\nJudge [carefully] <em>now</em>.",
        },
    )
    assert response.status_code == 302
    page = staff_client.get(reverse("factuality-instructions", args=["fact"])).content.decode()
    assert "<h2>Our rules</h2>" in page and '<mark class="error-span">carefully</mark>' in page
    assert "&lt;em&gt;now&lt;/em&gt;" in page
    assert Project.objects.get(name="fact").annotators_per_video == 2


def test_staff_creates_a_project_from_the_form(staff_client, small_dataset):
    chooser = staff_client.get(reverse("factuality-project-create"))
    assert b'id="choose-dataset"' in chooser.content
    form = staff_client.get(reverse("factuality-project-create") + "?dataset=small")
    assert b"Alpha" in form.content and b'id="project-form"' in form.content
    alpha = small_dataset.systems.get(name="Alpha")
    response = staff_client.post(
        reverse("factuality-project-create"),
        {
            "dataset": "small",
            "name": "from-form",
            "kind": "factuality",
            "systems": [alpha.pk],
            "videos": "v2\nv3\n",
            "annotators_per_video": 3,
            "shuffle_systems": "on",
            "annotators": "new-one\n",
            "rationale": "off",
            "preset": "vatex-eval",
        },
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("factuality-project", args=["from-form"])
    page = response.content.decode()
    assert "Created project from-form with 2 videos." in page
    assert re.search(
        r"New account new-one: send them this one-time link to set a password: "
        r"http://testserver/factuality/invitations/[^/]+/[^/]+/",
        page,
    )
    bad = staff_client.post(
        reverse("factuality-project-create"),
        {
            "dataset": "small",
            "name": "bad",
            "kind": "factuality",
            "videos": "v9",
            "annotators_per_video": 3,
            "rationale": "off",
            "preset": "vatex-eval",
        },
    )
    assert b"no video" in bad.content or b"has no video" in bad.content


def test_an_invitation_link_sets_the_password_once(client, staff_client, make_project):
    make_project()
    response = staff_client.post(reverse("factuality-invite", args=["fact"]), {"usernames": "invitee"}, follow=True)
    link = re.search(r"http://testserver(/factuality/invitations/[^/]+/[^/]+/)", response.content.decode()).group(1)
    assert client.get(link).status_code == 200
    done = client.post(link, {"new_password1": "a-long-password-42", "new_password2": "a-long-password-42"})
    assert done.status_code == 302 and done.url == reverse("factuality-home")
    assert b"fact" in client.get(reverse("factuality-home")).content  # logged in, sees the project
    client.logout()
    assert client.get(link).status_code == 400  # used up
    assert client.login(request=HttpRequest(), username="invitee", password="a-long-password-42")  # (django-axes)


def test_project_page_report_charts_and_downloads(staff_client, completed):
    page = staff_client.get(reverse("factuality-project", args=["anet-mini"])).content.decode()
    assert 'id="progress"' in page and "ann1" in page and "Not aggregated yet." in page
    staff_client.post(reverse("factuality-aggregate", args=["anet-mini"]), {"ties": "error"})
    page = staff_client.get(reverse("factuality-project", args=["anet-mini"])).content.decode()
    assert "Download factuality_annotation.json" in page and "9 captions, 15 sentences" in page
    report = staff_client.get(reverse("factuality-report", args=["anet-mini"])).content.decode()
    assert report.count('data-level="paragraph"') == 2 and 'data-level="word"' in report
    assert "alpha rests on only 9 units" in report and "ann3" in report
    for chart in ("scores", "errors"):
        svg = staff_client.get(reverse("factuality-chart", args=["anet-mini", chart]))
        assert svg["Content-Type"] == "image/svg+xml" and svg.content.startswith(b"<?xml")
        assert b"Beta" in svg.content
    assert staff_client.get(reverse("factuality-chart", args=["anet-mini", "pie"])).status_code == 404
    download = staff_client.get(reverse("factuality-export-factvc", args=["anet-mini"]))
    assert json.loads(download.content)["v1"]["Beta"]["sentences"] == ["a [woman] is riding [a horse] ."]
    raw = staff_client.get(reverse("factuality-export-raw", args=["anet-mini"]) + "?anonymise=0")
    assert b'"annotator": "ann1"' in raw.content
    # imported back on the project page: refused unless the box says it is the project's own download
    form_page = staff_client.get(reverse("factuality-project", args=["anet-mini"])).content.decode()
    assert 'name="own_export"' in form_page
    before = Submission.objects.count()
    upload = SimpleUploadedFile("raw.jsonl", raw.content)
    refused = staff_client.post(reverse("factuality-import-raw", args=["anet-mini"]), {"file": upload})
    assert refused.status_code == 400 and "is the id of ann1, an annotator of project anet-mini" in (
        refused.content.decode()
    )
    assert Submission.objects.count() == before
    upload = SimpleUploadedFile("raw.jsonl", raw.content)
    staff_client.post(reverse("factuality-import-raw", args=["anet-mini"]), {"file": upload, "own_export": "on"})
    # the same answers: nothing stored again (a copy hid each answer's time and playback)
    assert Submission.objects.count() == before and not Annotator.objects.filter(kind="imported").exists()
    dataset = staff_client.get(reverse("dataset-detail", args=["small"]) + "?labels=anet-mini")
    assert b"anet-mini (Aggregated)" in dataset.content


def test_the_import_form_shows_every_problem(staff_client, make_project):
    make_project()
    upload = SimpleUploadedFile("bad.jsonl", b'{"video_id": "v1", "system": "Alpha"}\nnot json\n')
    response = staff_client.post(reverse("factuality-import-raw", args=["fact"]), {"file": upload})
    assert response.status_code == 400
    assert response.content.decode().count('class="problem"') == 4  # 3 missing fields + invalid JSON


def test_closed_projects_hand_out_nothing(member):
    projects.set_status(member.project, Project.Status.CLOSED)
    response = member.post(reverse("factuality-start", args=["fact"]), follow=True)
    assert b"This project is closed." in response.content


# the words loop the annotation page had before its words were made by the ``token_spans`` filter (issue #11)
_WORDS_LOOP = (
    '{% for token in tokens %}<span class="tok" data-t="{{ forloop.counter0 }}"{% if forloop.first %} tabindex="0"'
    '{% else %} tabindex="-1"{% endif %}>{{ token }}</span>{% if not forloop.last %} {% endif %}{% endfor %}'
)


@pytest.mark.parametrize(
    "tokens",
    [[], ["one"], ["a", "<b>", "&amp;", '"q"', "it's"], [f"w{i}" for i in range(1200)]],
)
def test_the_words_filter_renders_what_the_template_loop_rendered(tokens):
    from django.template import Context, Template

    old = Template(_WORDS_LOOP).render(Context({"tokens": tokens}))
    new = Template("{% load factuality_tags %}{{ tokens|token_spans }}").render(Context({"tokens": tokens}))
    assert new == old
    assert "<b>" not in new


# the paragraph loops the annotation page had before they were made by ``sentence_items`` and ``likert_options``
_SENTENCES_LOOP = """{% for sentence in paragraph.sentences %}
                <li class="fact-sentence" data-sentence="{{ sentence.index }}">
                  <button type="button" class="fact-flag" data-action="flag" aria-pressed="false">
                    <span class="visually-hidden">Paragraph {{ paragraph.letter }}, sentence {{ forloop.counter }}: </span><span data-role="flag-text">Error?</span>
                  </button>
                  <div class="fact-sentence__body">
                    <p class="fact-tokens" role="group" aria-label="Words of paragraph {{ paragraph.letter }}, sentence {{ forloop.counter }}" aria-describedby="span-hint">{{ sentence.tokens|token_spans }}</p>
                    <ul class="fact-spans" data-role="spans" aria-label="Marked words of paragraph {{ paragraph.letter }}, sentence {{ forloop.counter }}"></ul>
                  </div>
                </li>
              {% endfor %}"""
_LIKERT_LOOP = """{% for value, label in scale %}
                <label class="fact-likert__option">
                  <input type="radio" name="score-{{ paragraph.index }}" value="{{ value }}">
                  <span class="fact-likert__value">{{ value }}</span>
                  <span class="fact-likert__anchor">{{ label }}</span>
                </label>
              {% endfor %}"""


@pytest.mark.parametrize(
    "paragraph",
    [
        {"letter": "A", "index": 0, "sentences": []},
        {"letter": "B", "index": 1, "sentences": [{"index": 0, "tokens": ["a", "<b>", "it's"]}]},
        {"letter": "AB", "index": 27, "sentences": [{"index": j, "tokens": [f"w{j}"] * j} for j in range(12)]},
    ],
)
@pytest.mark.parametrize(
    "scale",
    [
        list(projects.scale_of(Project(kind=Project.Kind.FACTUALITY))),
        [(0, 'none <at> all & "quoted"'), (50, ""), (100, "it's {all}")],
        [(1234, "a large value")],
    ],
)
def test_the_paragraph_filters_render_what_the_template_loops_rendered(paragraph, scale):
    from django.template import Context, Template

    context = Context({"paragraph": paragraph, "scale": scale})
    load = "{% load factuality_tags %}"
    assert Template(load + "{{ paragraph|sentence_items }}").render(context) == Template(load + _SENTENCES_LOOP).render(
        context
    )
    assert Template(load + "{{ scale|likert_options:paragraph.index }}").render(context) == Template(
        load + _LIKERT_LOOP
    ).render(context)


def test_progress_after_lowering_the_overlap_counts_every_answer_given(staff_client, completed):
    """3 videos x 3 answers done, then the annotators per video lowered to 1 (PATCH): the project page and the
    API count the 9 answers given against 9 slots (they said 9 of 3)."""
    url = reverse("api-factuality-project", args=["anet-mini"])
    assert staff_client.patch(url, {"annotators_per_video": 1}, content_type="application/json").status_code == 200
    progress = staff_client.get(url).json()["progress"]
    assert (progress["slots"], progress["submitted"], progress["share"]) == (9, 9, 1.0)
    assert progress["above_capacity"] == 6  # 2 answers per video beyond the 1 asked now
    page = staff_client.get(reverse("factuality-project", args=["anet-mini"])).content.decode()
    shown = re.search(r"<dt>Answers submitted</dt><dd>(.*?)</dd>", page, re.S).group(1)
    assert " ".join(re.sub(r"<[^>]+>", " ", shown).split()) == "9 of 9"
    assert "6 answers beyond 1 per video" in page
