"""manage.py load_demo: the demo dataset with stored, probed videos, captions, references and labels."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.http import HttpRequest

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel

pytestmark = pytest.mark.django_db


def _load(*args):
    out = StringIO()
    call_command("load_demo", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def _files(dataset):
    return sorted(name for pair in dataset.videos.values_list("file", "thumbnail") for name in pair)


def test_load_demo_creates_a_complete_dataset():
    output = _load("--videos", "2")
    dataset = Dataset.objects.get(name="demo")
    assert "Created dataset 'demo'" in output and "[1/4] made demo-01-testsrc2" in output

    videos = list(dataset.videos.order_by("position"))
    assert [v.external_id for v in videos] == ["demo-01-testsrc2", "demo-02-smptebars"]
    for video, seconds in zip(videos, (4.0, 4.5)):  # what the demo asks ffmpeg to make
        assert video.status == Video.Status.READY, video.processing_error
        assert video.duration == pytest.approx(seconds, abs=0.1)
        assert (video.width, video.height) == (320, 180)
        assert video.kind == "file" and video.file.name.endswith(".webm")
        assert default_storage.exists(video.file.name) and default_storage.size(video.file.name) > 1000
        with default_storage.open(video.thumbnail.name, "rb") as handle:
            assert handle.read(2) == b"\xff\xd8"

    assert list(System.objects.filter(dataset=dataset, is_human=False).values_list("name", flat=True)) == [
        "ClipTrans",
        "FrameLSTM",
        "RetrievalBaseline",
    ]
    # the DA demo campaign made the reference set its hidden human system (see test_demo_steps.py)
    assert list(System.objects.filter(dataset=dataset, is_human=True).values_list("name", flat=True)) == ["gt_demo"]
    assert Caption.objects.filter(video__dataset=dataset, system__is_human=False).count() == 6
    assert Reference.objects.filter(video__dataset=dataset, reference_set="gt_demo").count() == 2
    sentences = list(Sentence.objects.filter(caption__video__dataset=dataset, caption__system__is_human=False))
    for caption in Caption.objects.filter(video__dataset=dataset, system__is_human=False):
        assert 2 <= caption.sentences.count() <= 4
    for sentence in sentences:
        assert sentence.text == sentence.text.lower() and sentence.tokens == sentence.text.split()
        assert 0 <= sentence.start < sentence.end <= sentence.caption.video.duration + 0.1

    label_set = LabelSet.objects.get(dataset=dataset)
    assert ParagraphLabel.objects.filter(label_set=label_set).count() == 6
    assert set(ParagraphLabel.objects.filter(label_set=label_set).values_list("score", flat=True)) <= {1, 2, 3, 4, 5}
    assert SentenceLabel.objects.filter(label_set=label_set).count() == len(sentences)
    for label in SentenceLabel.objects.filter(label_set=label_set).prefetch_related("spans"):
        spans = list(label.spans.all())
        assert label.error == bool(spans)  # an erroneous sentence marks its wrong words, a correct one none
        for span in spans:
            assert 0 <= span.start < span.end <= len(label.sentence.tokens)
    assert SentenceLabel.objects.filter(label_set=label_set, error=True).exists()
    assert SentenceLabel.objects.filter(label_set=label_set, error=False).exists()
    # one labelled error written by hand in the demo: ClipTrans says the bottom bars of smptebars are "white"
    span = ErrorSpan.objects.get(
        sentence_label__sentence__caption__system__name="ClipTrans",
        sentence_label__sentence__caption__video__external_id="demo-02-smptebars",
    )
    assert span.sentence_label.sentence.tokens[span.start : span.end] == ["white"]


def test_rerunning_leaves_the_demo_alone_and_replace_recreates_it(django_capture_on_commit_callbacks):
    _load("--videos", "1")
    dataset = Dataset.objects.get(name="demo")
    before = (dataset.pk, _files(dataset), list(dataset.videos.values_list("pk", flat=True)))

    output = _load("--videos", "2")
    assert "already exists" in output and "left unchanged" in output
    dataset = Dataset.objects.get(name="demo")
    assert (dataset.pk, _files(dataset), list(dataset.videos.values_list("pk", flat=True))) == before

    with django_capture_on_commit_callbacks(execute=True):
        output = _load("--videos", "2", "--replace")
    assert "Created dataset 'demo'" in output
    dataset = Dataset.objects.get(name="demo")
    assert dataset.pk != before[0] and dataset.videos.count() == 2
    assert Dataset.objects.filter(name="demo").count() == 1
    assert all(default_storage.exists(name) for name in _files(dataset))
    assert not any(default_storage.exists(name) for name in before[1])  # the old files were removed


def test_user_and_password_make_a_staff_superuser(django_user_model):
    _load("--videos", "1", "--user", "demo-admin", "--password", "first-password-1")
    user = django_user_model.objects.get(username="demo-admin")
    assert user.is_staff and user.is_superuser and user.is_active
    assert authenticate(HttpRequest(), username="demo-admin", password="first-password-1") == user

    output = _load("--videos", "1", "--user", "demo-admin", "--password", "second-password-2")
    assert "Updated staff superuser" in output
    assert authenticate(HttpRequest(), username="demo-admin", password="second-password-2") == user
    assert authenticate(HttpRequest(), username="demo-admin", password="first-password-1") is None


@pytest.mark.parametrize("args", [["--videos", "0"], ["--user", "someone"], ["--password", "x"]])
def test_bad_arguments_are_refused(args):
    with pytest.raises(CommandError):
        _load(*args)
    assert not Dataset.objects.exists()
