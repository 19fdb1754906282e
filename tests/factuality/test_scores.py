"""Derived caption scores as the FactVC release: share of erroneous sentences and of erroneous words (words,
not punctuation tokens), and their "higher is better" forms; checked on the published corpus figures."""

import pytest

from annotation_site.corpus.models import Dataset
from annotation_site.factuality.models import ErrorSpan, LabelSet, SentenceLabel
from annotation_site.factuality.scores import SCORE_COLUMNS, caption_scores, corpus_shares, is_word, label_set_scores
from tests.conftest import import_factvc


def test_caption_scores_count_words_not_punctuation():
    sentences = [
        ("a man [rides a] horse .".replace("[", "").replace("]", "").split(), True, [(2, 4)]),
        ("he waves , smiling .".split(), False, []),
    ]
    scores = caption_scores(sentences)
    assert (scores["sentences"], scores["error_sentences"], scores["words"], scores["error_words"]) == (2, 1, 8, 2)
    assert scores["sentence_error"] == 0.5 and scores["sentence_score"] == 0.5
    assert scores["word_error"] == 0.25 and scores["word_score"] == 0.75


def test_unk_is_a_word_and_a_span_over_punctuation_counts_only_its_words():
    assert is_word("UNK") and is_word("2") and is_word("'s") and not is_word(".") and not is_word(",")
    scores = caption_scores([(["UNK", "is", "playing", "."], True, [(0, 4)])])
    assert (scores["words"], scores["error_words"]) == (3, 3)


def test_empty_caption_has_no_scores():
    scores = caption_scores([])
    assert scores["sentence_error"] is None and scores["word_score"] is None


def test_label_set_scores_from_the_database(db):
    from tests.factuality.conftest import import_jsonl, lines

    dataset = import_jsonl(
        lines(
            {
                "video_id": "v1",
                "system": "A",
                "paragraph_score": 3,
                "sentences": [
                    {"text": "a man rides a horse .", "error": 1, "spans": [[1, 2], [3, 5]]},
                    {"text": "he waves .", "error": 0},
                ],
            },
            {"video_id": "v1", "system": "B", "paragraph_score": 5, "sentences": [{"text": "a horse .", "error": 0}]},
        ),
        "scored",
    )
    frame = label_set_scores(dataset.label_sets.get())
    assert list(frame.columns) == SCORE_COLUMNS
    rows = {row["system"]: row for row in frame.to_dict("records")}
    assert rows["A"]["video_id"] == "v1" and rows["A"]["paragraph_score"] == 3
    assert rows["A"]["sentence_error"] == 0.5 and rows["A"]["word_error"] == pytest.approx(3 / 7)
    assert rows["B"]["sentence_score"] == 1.0 and rows["B"]["word_score"] == 1.0


@pytest.mark.django_db
def test_published_activitynet_fact_shares(shared_datasets):
    """FactVC paper / release README: 81.9 % of paragraphs, 51.4 % of sentences and 13.5 % of words erroneous."""
    import_factvc(shared_datasets / "activitynet", "anet")
    label_set = LabelSet.objects.get(dataset=Dataset.objects.get(name="anet"))
    frame = label_set_scores(label_set)
    assert len(frame) == 1200
    assert round(100 * (frame["paragraph_score"] < 5).mean(), 1) == 81.9
    spans = {}
    for sentence_id, start, end in ErrorSpan.objects.filter(sentence_label__label_set=label_set).values_list(
        "sentence_label__sentence_id", "start", "end"
    ):
        spans.setdefault(sentence_id, []).append((start, end))
    shares = corpus_shares(
        (tokens, error, spans.get(pk, []))
        for pk, tokens, error in SentenceLabel.objects.filter(label_set=label_set).values_list(
            "sentence_id", "sentence__tokens", "error"
        )
    )
    assert round(100 * shares["sentence_error"], 1) == 51.4
    assert round(100 * shares["word_error"], 1) == 13.5
    assert frame["sentences"].sum() == shares["sentences"] and frame["words"].sum() == shares["words"]
