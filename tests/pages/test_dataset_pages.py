"""The dataset pages through Django's test client: access rules, what each page shows, escaping of untrusted
captions, the import page (valid and invalid uploads), export downloads and constant query counts."""

import json
import re

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.corpus.models import Caption, Dataset, Video
from annotation_site.interchange import jsonl

pytestmark = pytest.mark.django_db


def text_of(html):
    """The visible text of an HTML fragment with whitespace collapsed (for assertions on what a reader sees)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def rows(html, table_id):
    """The rows (lists of cell texts) of the body of the table with that id."""
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S)
    assert table, f"no table #{table_id}"
    body = re.search(r"<tbody>(.*?)</tbody>", table.group(0), re.S).group(1)
    return [
        [text_of(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


# --- Access -----------------------------------------------------------------------------------------------------


def test_home_requires_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next=/"


def test_login_page_logs_in_and_returns_to_next(client, staff_user):
    page = client.get(reverse("login") + "?next=/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="username"' in html and 'name="password"' in html and 'name="next" value="/"' in html
    response = client.post(reverse("login"), {"username": "researcher", "password": "pw-researcher-1", "next": "/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_login_page_shows_a_wrong_password(client, staff_user):
    response = client.post(reverse("login"), {"username": "researcher", "password": "wrong"})
    assert response.status_code == 200
    assert "correct username and password" in response.content.decode()


def test_logout_is_a_post_form(staff_client):
    html = staff_client.get(reverse("home")).content.decode()
    form = re.search(r'<form method="post" action="([^"]+)"[^>]*>(.*?)</form>', html, re.S)
    assert form and form.group(1) == reverse("logout") and "csrfmiddlewaretoken" in form.group(2)
    assert staff_client.post(reverse("logout")).status_code == 302
    assert staff_client.get(reverse("home")).status_code == 302  # logged out


@pytest.mark.parametrize(
    "url_name, args",
    [
        ("dataset-detail", ["sample"]),
        ("video-detail", ["sample", "v1"]),
        ("dataset-import", []),
        ("video-add", ["sample"]),
        ("dataset-export", ["sample", "jsonl"]),
    ],
)
def test_dataset_pages_are_staff_only(user_client, client, sample_dataset, url_name, args):
    url = reverse(url_name, args=args)
    response = user_client.get(url)  # logged in, not staff
    assert response.status_code == 302, url
    assert response["Location"].startswith(reverse("admin:login"))
    assert b"COOT" not in response.content
    user_client.logout()
    anonymous = user_client.get(url)
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]


def test_non_staff_home_goes_to_the_annotation_queue_without_staff_links(user_client, sample_dataset):
    response = user_client.get(reverse("home"))
    assert response.status_code == 302 and response["Location"] == reverse("factuality-home")
    html = user_client.get(response["Location"]).content.decode()
    nav = re.search(r'<nav class="site-nav".*?</nav>', html, re.S).group(0)
    assert reverse("factuality-home") in nav
    assert ">Datasets<" not in nav
    for staff_only in (reverse("dataset-import"), reverse("admin:index")):
        assert staff_only not in nav
    assert reverse("dataset-detail", args=["sample"]) not in html


# --- Layout and home ---------------------------------------------------------------------------------------------


def test_layout_has_navigation_for_staff(staff_client, sample_dataset):
    html = staff_client.get(reverse("home")).content.decode()
    nav = re.search(r'<nav class="site-nav".*?</nav>', html, re.S).group(0)
    for href, label in [
        (reverse("home"), "Datasets"),
        (reverse("dataset-import"), "Import"),
        (reverse("admin:index"), "Admin"),
        ("/api/docs/", "API docs"),
    ]:
        assert re.search(rf'href="{re.escape(href)}"[^>]*>{label}</a>', nav), label
    assert "CaptionEval" in html and "researcher" in html
    assert '<link rel="stylesheet" href="/static/css/app.css">' in html
    assert "http://" not in re.sub(r'href="http[^"]*"', "", html.split("<main")[0])  # nothing fetched from outside


def test_home_lists_datasets_with_counts(staff_client, sample_dataset, jsonl_dataset):
    jsonl_dataset('{"video_id": "x", "system": "S", "sentences": ["one ."]}\n', name="other")
    html = staff_client.get(reverse("home")).content.decode()
    assert rows(html, "datasets") == [
        ["other", "—", "1", "1", "jsonl", rows(html, "datasets")[0][5]],
        ["sample", "—", "2", "2", "jsonl", rows(html, "datasets")[1][5]],
    ]
    assert f'href="{reverse("dataset-detail", args=["sample"])}"' in html


def test_home_empty_state_tells_staff_how_to_import(staff_client):
    html = staff_client.get(reverse("home")).content.decode()
    assert "No datasets yet" in html
    assert f'href="{reverse("dataset-import")}"' in html
    assert "manage.py import_dataset --format factvc --name NAME PATH" in html


# --- Dataset page -----------------------------------------------------------------------------------------------


def test_dataset_page_lists_systems_summary_videos_and_exports(staff_client, sample_dataset):
    response = staff_client.get(reverse("dataset-detail", args=["sample"]))
    assert response.status_code == 200
    html = response.content.decode()
    systems = re.search(r'<ul class="chips" id="systems">(.*?)</ul>', html, re.S).group(1)
    assert text_of(systems) == "COOT &lt;i&gt;evil&lt;/i&gt; human"  # the human system is marked
    assert rows(html, "label-summary") == [
        ["COOT", "2", "3.00", "66.7%"],  # scores 2 and 4; 2 erroneous sentences of 3
        ["&lt;i&gt;evil&lt;/i&gt;", "1", "5.00", "0.0%"],
    ]
    chart = re.search(r'<figure class="chart" id="label-chart">.*?</figure>', html, re.S).group(0)
    assert chart.startswith('<figure class="chart" id="label-chart"><svg')
    # one bar per system and panel (COOT mean 3.0 and 2/3 erroneous; evil 5.0 and none erroneous)
    assert re.findall(r'<g id="bar-(\w+)-(\d)">', chart) == [
        ("mean_score", "0"),
        ("mean_score", "1"),
        ("sentence_error_rate", "0"),
        ("sentence_error_rate", "1"),
    ]
    assert ">3.0<" in chart and ">5.0<" in chart and ">67%<" in chart and ">0%<" in chart
    assert "&lt;i&gt;evil&lt;/i&gt;" in chart and "<i>" not in chart
    videos = rows(html, "videos")
    assert [row[1:] for row in videos] == [
        ["v1", "0:12.5", "none", "external (not processed)"],
        ["v2", "—", "youtube", "external (not processed)"],
    ]
    assert f'href="{reverse("video-detail", args=["sample", "v1"])}?labels=imported"' in html
    assert f'href="{reverse("dataset-export", args=["sample", "factvc"])}?labels=imported"' in html
    assert f'href="{reverse("dataset-export", args=["sample", "jsonl"])}?labels=imported"' in html
    assert f'href="{reverse("video-add", args=["sample"])}"' in html


def test_dataset_page_without_labels_offers_only_jsonl(staff_client, jsonl_dataset):
    jsonl_dataset('{"video_id": "x", "system": "S", "sentences": ["one ."]}\n', name="plain")
    html = staff_client.get(reverse("dataset-detail", args=["plain"])).content.decode()
    assert reverse("dataset-export", args=["plain", "factvc"]) not in html
    assert f'href="{reverse("dataset-export", args=["plain", "jsonl"])}"' in html
    assert "No factuality labels" in html
    assert 'id="label-chart"' not in html


def test_dataset_page_label_set_selector(staff_client, sample_dataset):
    from annotation_site.factuality.models import LabelSet

    LabelSet.objects.create(dataset=sample_dataset, name="second", origin=LabelSet.Origin.AGGREGATED)
    html = staff_client.get(reverse("dataset-detail", args=["sample"])).content.decode()
    select = re.search(r'<select name="labels" id="label-set">(.*?)</select>', html, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"( selected)?', select) == [("imported", " selected"), ("second", "")]
    html = staff_client.get(reverse("dataset-detail", args=["sample"]) + "?labels=second").content.decode()
    assert rows(html, "label-summary") == [["COOT", "0", "—", "—"], ["&lt;i&gt;evil&lt;/i&gt;", "0", "—", "—"]]
    assert staff_client.get(reverse("dataset-detail", args=["sample"]) + "?labels=nope").status_code == 404


def test_dataset_page_paginates_videos(staff_client, jsonl_dataset):
    text = "".join(
        json.dumps({"video_id": f"v{i:03d}", "system": "S", "sentences": ["x ."]}) + "\n" for i in range(120)
    )
    jsonl_dataset(text, name="big")
    url = reverse("dataset-detail", args=["big"])
    first = staff_client.get(url).content.decode()
    assert len(rows(first, "videos")) == 50 and "Page 1 of 3" in first
    assert 'href="?page=2"' in first
    third = staff_client.get(url + "?page=3").content.decode()
    assert [row[1] for row in rows(third, "videos")] == [f"v{i:03d}" for i in range(100, 120)]


def test_dataset_page_shows_thumbnails_and_file_kind(staff_client, sample_dataset):
    video = Video.objects.get(dataset=sample_dataset, external_id="v1")
    video.thumbnail.save("v1.jpg", ContentFile(b"\xff\xd8\xff"), save=False)
    video.file.save("v1.webm", ContentFile(b"webm"), save=False)
    video.status = Video.Status.READY
    video.save()
    html = staff_client.get(reverse("dataset-detail", args=["sample"])).content.decode()
    assert f'<img class="thumb" src="{video.thumbnail.url}"' in html
    assert rows(html, "videos")[0][1:] == ["v1", "0:12.5", "file", "Ready"]


def test_video_ids_with_slashes_and_odd_characters_link(staff_client, jsonl_dataset):
    jsonl_dataset('{"video_id": "cam/1 #a?b", "system": "S", "sentences": ["x ."]}\n', name="odd")
    html = staff_client.get(reverse("dataset-detail", args=["odd"])).content.decode()
    link = re.search(r'<a href="(/datasets/odd/videos/[^"]+)">', html).group(1)
    assert link == "/datasets/odd/videos/cam/1%20%23a%3Fb/"
    response = staff_client.get(link)
    assert response.status_code == 200 and "cam/1 #a?b" in response.content.decode()


# --- Video page -------------------------------------------------------------------------------------------------


def test_video_page_highlights_error_spans_and_erroneous_sentences(staff_client, sample_dataset):
    html = staff_client.get(reverse("video-detail", args=["sample", "v1"])).content.decode()
    coot = re.search(r'<article class="caption" data-system="COOT">.*?</article>', html, re.S).group(0)
    assert "paragraph score <strong>2</strong>/5" in coot
    sentences = re.findall(r'<li class="(sentence[^"]*)"[^>]*>(.*?)</li>', coot, re.S)
    assert [cls for cls, _ in sentences] == ["sentence sentence--error", "sentence sentence--ok"]
    # tokens 4 and 5 of "a man rides a red horse across the field ." form one highlighted span
    assert (
        '<span class="sentence__text">a man rides a <mark class="error-span">red horse</mark> across the field .</span>'
    ) in coot
    assert coot.count("<mark") == 1
    assert 'badge badge--error">error</span>' in sentences[0][1]
    assert "error</span>" not in sentences[1][1]
    # sentence times are seek links
    assert re.search(r'<a class="timestamp seek" href="#player" data-seek="0.500000"[^>]*>0:00.5</a>', coot) is None
    # (v1 has no video, so times are shown but are not links)
    assert '<span class="timestamp">0:00.5</span>' in coot
    assert "No video available" in html


def test_video_page_escapes_untrusted_captions(staff_client, sample_dataset):
    html = staff_client.get(reverse("video-detail", args=["sample", "v1"])).content.decode()
    assert "&lt;script&gt;alert(&quot;caption&quot;)&lt;/script&gt; rides a horse ." in html
    assert "<script>alert" not in html
    assert "&lt;i&gt;evil&lt;/i&gt;" in html and "<i>evil</i>" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html and "<img src=x" not in html
    # the dataset page shows the same untrusted names (table, chips, SVG chart) escaped too
    dataset_html = staff_client.get(reverse("dataset-detail", args=["sample"])).content.decode()
    assert "<i>evil</i>" not in dataset_html and dataset_html.count("&lt;i&gt;evil&lt;/i&gt;") >= 3


def test_video_page_shows_references(staff_client, sample_dataset):
    html = staff_client.get(reverse("video-detail", args=["sample", "v1"])).content.decode()
    refs = re.search(r'<dl class="references">(.*?)</dl>', html, re.S).group(1)
    assert text_of(refs) == "gt_1 A man rides a horse. &lt;img src=x onerror=alert(2)&gt;"


def test_video_page_youtube_embed(staff_client, sample_dataset):
    html = staff_client.get(reverse("video-detail", args=["sample", "v2"])).content.decode()
    assert 'src="https://www.youtube-nocookie.com/embed/AbCdEfGhIj0"' in html
    assert "<video" not in html
    caption = re.search(r'<article class="caption".*?</article>', html, re.S).group(0)
    assert 'a <mark class="error-span">woman</mark> is cooking .' in caption


def test_video_page_file_player(staff_client, sample_dataset):
    video = Video.objects.get(dataset=sample_dataset, external_id="v1")
    video.file.save("clip.webm", ContentFile(b"webm"), save=False)
    video.status = Video.Status.READY
    video.save()
    html = staff_client.get(reverse("video-detail", args=["sample", "v1"])).content.decode()
    assert re.search(rf'<video class="player__video" src="{re.escape(video.playback_url)}"', html)
    assert video.playback_url.startswith("/media/videos/")
    assert '<script type="module" src="/static/js/video-player.js"></script>' in html
    for control in (
        'data-action="toggle"',
        'data-role="seek"',
        'data-action="frame-back"',
        'data-action="frame-forward"',
        'data-speed="0.5"',
        'data-speed="2"',
    ):
        assert control in html
    shortcuts = text_of(re.search(r'<details class="shortcuts".*?</details>', html, re.S).group(0))
    for key in ("Space", "k", "j", "l", ",", ".", "[", "]"):
        assert f" {key} " in f" {shortcuts} "
    # with a video, sentence times are seek links
    assert re.search(r'<a class="timestamp seek" href="#player" data-seek="0.500000"[^>]*>0:00.5</a>', html)
    assert 'data-start="3.250000" data-end="6.000000"' in html


def test_video_page_external_url(staff_client, jsonl_dataset):
    jsonl_dataset(
        json.dumps({"type": "video", "video_id": "u", "url": "https://example.org/a.webm?x=1&y=2"}) + "\n", name="urls"
    )
    html = staff_client.get(reverse("video-detail", args=["urls", "u"])).content.decode()
    assert '<video class="player__video" src="https://example.org/a.webm?x=1&amp;y=2"' in html
    assert "No captions for this video." in html and "No reference captions" in html


def test_video_page_404s(staff_client, sample_dataset):
    assert staff_client.get(reverse("video-detail", args=["sample", "nope"])).status_code == 404
    assert staff_client.get(reverse("video-detail", args=["nope", "v1"])).status_code == 404
    assert staff_client.get(reverse("dataset-detail", args=["nope"])).status_code == 404


# --- Import page ------------------------------------------------------------------------------------------------


def upload(text, name="upload.jsonl"):
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="application/x-ndjson")


def test_import_page_renders_the_form(staff_client):
    html = staff_client.get(reverse("dataset-import")).content.decode()
    assert 'enctype="multipart/form-data"' in html
    for field in ("name", "format", "file", "labels", "replace", "youtube"):
        assert f'name="{field}"' in html
    assert 'id="problems"' not in html


def test_import_valid_upload_creates_the_dataset(staff_client):
    text = (
        '{"video_id": "v1", "system": "COOT", "paragraph_score": 3, '
        '"sentences": [{"text": "a dog runs .", "error": 1, "spans": [[1, 2]]}]}\n'
    )
    response = staff_client.post(
        reverse("dataset-import"),
        {
            "name": "uploaded",
            "format": "jsonl",
            "file": upload(text),
            "labels": "imported",
            "youtube": "on",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("dataset-detail", args=["uploaded"])
    dataset = Dataset.objects.get(name="uploaded")
    assert Caption.objects.filter(video__dataset=dataset).count() == 1
    page = staff_client.get(response["Location"]).content.decode()
    assert "Imported uploaded: 1 videos, 1 systems, 1 captions, 1 sentences, 0 references" in page
    assert rows(page, "label-summary") == [["COOT", "1", "3.00", "100.0%"]]


def test_import_invalid_upload_lists_problems_with_lines_and_imports_nothing(staff_client):
    text = (
        '{"video_id": "v1", "system": "COOT", "paragraph_score": 3, "sentences": ["fine ."]}\n'
        '{"video_id": "v2", "system": "COOT", "paragraph_score": 9, "sentences": ["bad score ."]}\n'
        '{"video_id": "v3", "system": "COOT", "sentences": ["broken"\n'
        '{"video_id": "v4", "system": "<b>x</b>", "sentences": [{"text": "t .", "spans": [[0, 5]]}]}\n'
    )
    response = staff_client.post(
        reverse("dataset-import"),
        {
            "name": "broken",
            "format": "jsonl",
            "file": upload(text, "bad <file>.jsonl"),
        },
    )
    assert response.status_code == 200
    assert not Dataset.objects.exists()
    html = response.content.decode()
    section = re.search(r'<section class="problems[^"]*" id="problems".*?</section>', html, re.S).group(0)
    assert "3 problems found: nothing was imported" in text_of(section)
    problems = [
        [text_of(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r'<tr class="problem">(.*?)</tr>', section, re.S)
    ]
    assert [p[:3] for p in problems] == [
        ["bad &lt;file&gt;.jsonl", "2", "paragraph_score"],
        ["bad &lt;file&gt;.jsonl", "3", "—"],
        ["bad &lt;file&gt;.jsonl", "4", "sentences[0].spans"],
    ]
    assert problems[0][3] == "paragraph_score must be an integer from 1 to 5, not 9"
    assert problems[1][3].startswith("invalid JSON")
    assert "<file>" not in html and "<b>x</b>" not in html
    # the form keeps what was typed
    assert 'name="name" value="broken"' in html


def test_import_refuses_an_existing_name(staff_client, sample_dataset):
    response = staff_client.post(
        reverse("dataset-import"),
        {
            "name": "sample",
            "format": "jsonl",
            "file": upload('{"video_id": "a", "system": "S", "sentences": ["x ."]}\n'),
        },
    )
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    assert Video.objects.filter(dataset=sample_dataset).count() == 2


def test_import_form_errors(staff_client):
    response = staff_client.post(reverse("dataset-import"), {"name": "", "format": "jsonl"})
    html = response.content.decode()
    assert response.status_code == 200 and html.count('class="field__error"') == 2  # name and file
    assert not Dataset.objects.exists()


def test_import_non_utf8_upload(staff_client):
    response = staff_client.post(
        reverse("dataset-import"),
        {
            "name": "latin",
            "format": "jsonl",
            "file": SimpleUploadedFile("latin.jsonl", "caf\xe9".encode("latin-1")),
        },
    )
    html = response.content.decode()
    assert response.status_code == 200 and "not UTF-8 text" in html and 'id="problems"' in html
    assert not Dataset.objects.exists()


# --- Export ------------------------------------------------------------------------------------------------------


def test_export_downloads(staff_client, sample_dataset):
    from annotation_site.interchange.services import default_label_set, export_bundle

    response = staff_client.get(reverse("dataset-export", args=["sample", "jsonl"]) + "?labels=imported")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="sample.jsonl"'
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert response.content.decode() == jsonl.write(
        export_bundle(sample_dataset, label_set=default_label_set(sample_dataset))
    )
    factvc = staff_client.get(reverse("dataset-export", args=["sample", "factvc"]))
    assert factvc.status_code == 200
    assert factvc["Content-Disposition"] == 'attachment; filename="factuality_annotation.json"'
    data = json.loads(factvc.content)
    assert data["v1"]["COOT"] == {
        "paragraph_score": 2,
        "sentences": ["a man rides a [red horse] across the field .", "he waves at the camera ."],
    }


def test_export_factvc_without_labels_explains(staff_client, jsonl_dataset):
    jsonl_dataset('{"video_id": "x", "system": "S", "sentences": ["one ."]}\n', name="plain")
    response = staff_client.get(reverse("dataset-export", args=["plain", "factvc"]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("dataset-detail", args=["plain"])
    assert "no factuality labels to export" in response.content.decode()
    assert staff_client.get(reverse("dataset-export", args=["plain", "csv"])).status_code == 404


# --- Add video --------------------------------------------------------------------------------------------------


def test_add_video_by_url(staff_client, sample_dataset):
    page = staff_client.get(reverse("video-add", args=["sample"]))
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.content.decode()
    response = staff_client.post(
        reverse("video-add", args=["sample"]), {"external_id": "v3", "url": "https://youtu.be/AbCdEfGhIj1"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("video-detail", args=["sample", "v3"])
    html = staff_client.get(response["Location"]).content.decode()
    assert "Added video v3." in html
    assert "youtube-nocookie.com/embed/AbCdEfGhIj1" in html


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"external_id": "v9"}, None, "Give either a video file or a URL"),
        ({"external_id": "v1", "url": "https://example.org/x.mp4"}, "external_id", "already has a video"),
    ],
)
def test_add_video_errors_are_shown(staff_client, sample_dataset, data, field, message):
    response = staff_client.post(reverse("video-add", args=["sample"]), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    if field:  # a field's error is shown next to that field
        block = re.search(rf'<div class="field field--invalid">\s*<label for="id_{field}".*?</div>', html, re.S)
        assert block and message in block.group(0)
    assert Video.objects.filter(dataset=sample_dataset).count() == 2


def test_add_video_rejects_a_non_video_file(staff_client, sample_dataset):
    response = staff_client.post(
        reverse("video-add", args=["sample"]),
        {
            "external_id": "v9",
            "file": SimpleUploadedFile("notes.txt", b"hello"),
        },
    )
    assert response.status_code == 200 and "Unsupported video file type" in response.content.decode()
    assert not Video.objects.filter(external_id="v9").exists()


# --- Query counts -----------------------------------------------------------------------------------------------


def _labelled_dataset(jsonl_dataset, name, n_videos, n_systems):
    objects = []
    for v in range(n_videos):
        for s in range(n_systems):
            objects.append(
                {
                    "video_id": f"v{v}",
                    "system": f"S{s}",
                    "paragraph_score": 1 + (v + s) % 5,
                    "sentences": [
                        {"text": "a man walks in .", "error": 1, "spans": [[1, 2]], "timestamp": [0.0, 1.0]},
                        {"text": "he sits .", "error": 0},
                    ],
                }
            )
        objects.append({"type": "reference", "video_id": f"v{v}", "reference_set": "gt", "text": "a man ."})
    return jsonl_dataset("".join(json.dumps(o) + "\n" for o in objects), name=name).dataset


def _count(client, url):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response


DATASET_PAGE_QUERIES = 13  # session, user, dataset, label sets (2), systems (2), page count + rows, summary (2),
#                           latest processing job, count of unprocessed files
VIDEO_PAGE_QUERIES = 10  # session, user, video, label sets, captions, sentences, 3 label tables, references


def test_dataset_page_query_count_does_not_grow_with_videos(staff_client, jsonl_dataset, django_assert_max_num_queries):
    _labelled_dataset(jsonl_dataset, "five", 5, 2)
    _labelled_dataset(jsonl_dataset, "forty", 40, 2)
    counts = []
    for name, n in (("five", 5), ("forty", 40)):
        url = reverse("dataset-detail", args=[name])
        with django_assert_max_num_queries(DATASET_PAGE_QUERIES):
            response = staff_client.get(url)
        assert len(rows(response.content.decode(), "videos")) == n
        counts.append(_count(staff_client, url)[0])
    assert counts[0] == counts[1]


def test_video_page_query_count_does_not_grow_with_captions(staff_client, jsonl_dataset, django_assert_max_num_queries):
    _labelled_dataset(jsonl_dataset, "two", 1, 2)
    _labelled_dataset(jsonl_dataset, "eight", 1, 8)
    counts = []
    for name, n in (("two", 2), ("eight", 8)):
        url = reverse("video-detail", args=[name, "v0"])
        with django_assert_max_num_queries(VIDEO_PAGE_QUERIES):
            response = staff_client.get(url)
        html = response.content.decode()
        articles = re.findall(r'<article class="caption".*?</article>', html, re.S)
        assert len(articles) == n and all(a.count('<mark class="error-span">man</mark>') == 1 for a in articles)
        counts.append(_count(staff_client, url)[0])
    assert counts[0] == counts[1]


def test_add_video_by_file_upload(staff_client, sample_dataset, tmp_path, django_capture_on_commit_callbacks, settings):
    from annotation_site.corpus import synthetic

    clip = synthetic.make_video(tmp_path / "clip.webm", seconds=1.0)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("video-add", args=["sample"]),
            {
                "external_id": "uploaded",
                "file": SimpleUploadedFile("my clip.webm", clip.read_bytes(), "video/webm"),
            },
        )
    assert response.status_code == 302
    video = Video.objects.get(dataset=sample_dataset, external_id="uploaded")
    assert video.kind == "file"
    html = staff_client.get(response["Location"]).content.decode()
    assert f'<video class="player__video" src="{video.playback_url}"' in html
    if settings.CELERY_TASK_ALWAYS_EAGER:  # processed at once: duration and thumbnail are known
        assert video.status == Video.Status.READY and abs(video.duration - 1.0) < 0.1
        assert f'poster="{video.thumbnail.url}"' in html


def test_error_pages_use_the_layout(staff_client):
    response = staff_client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Not found" in html and 'class="site-header"' in html
