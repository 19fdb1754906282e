"""The real FactVC release (../shared/datasets/factvc): exact round trip and the paper's published statistics.

Skips cleanly when the shared folder is absent (fails in strict mode, where CI expects it)."""

import io

import pytest
from django.core.management import call_command

from annotation_site.corpus.models import Dataset, Reference, Sentence
from annotation_site.factuality.models import ParagraphLabel, SentenceLabel
from tests.conftest import import_factvc

pytestmark = pytest.mark.django_db
PUNCTUATION = set(".,;:!?'\"-")

# (folder, videos, captions, sentences, references, % paragraphs with errors, % sentences, % words)
# The percentages for ActivityNet-Fact are the ones the FactVC paper and release README publish
# (81.9% / 51.4% / 13.5%); the word share counts words, not punctuation tokens.
RELEASES = [
    ("activitynet", 200, 1200, 3834, 397, 81.9, 51.4, 13.5),
    ("youcook2", 100, 600, 4080, 100, None, None, None),
]


@pytest.mark.parametrize("folder, videos, captions, sentences, references, para, sent, word", RELEASES)
def test_release_imports_and_exports_exactly(
    shared_datasets, tmp_path, folder, videos, captions, sentences, references, para, sent, word
):
    source = shared_datasets / folder
    import_factvc(source, folder)
    dataset = Dataset.objects.get(name=folder)
    assert dataset.videos.count() == videos
    assert dataset.systems.count() == 6
    assert Sentence.objects.filter(caption__video__dataset=dataset).count() == sentences
    assert Reference.objects.filter(video__dataset=dataset).count() == references
    assert not dataset.videos.filter(references__isnull=True).exists()  # every video has a reference
    out = tmp_path / "factuality_annotation.json"
    call_command("export_dataset", "--format", "factvc", "--name", folder, "--out", str(out), stderr=io.StringIO())
    assert out.read_bytes() == (source / "factuality_annotation.json").read_bytes()

    if para is None:
        return
    labels = ParagraphLabel.objects.filter(label_set__dataset=dataset)
    assert labels.count() == captions
    assert round(100 * labels.filter(score__lt=5).count() / captions, 1) == para
    sentence_labels = SentenceLabel.objects.filter(label_set__dataset=dataset)
    assert round(100 * sentence_labels.filter(error=True).count() / sentences, 1) == sent
    words = errors = 0
    for label in sentence_labels.select_related("sentence").prefetch_related("spans"):
        marked = {i for span in label.spans.all() for i in range(span.start, span.end)}
        for i, token in enumerate(label.sentence.tokens):
            if token not in PUNCTUATION:
                words += 1
                errors += i in marked
    assert round(100 * errors / words, 1) == word
