"""Aggregation as the ActivityNet-Fact paper: median paragraph score, majority sentence label, majority per
token; the documented tie rules for even counts; the label set it writes."""

import pandas as pd
import pytest

from annotation_site.factuality.aggregation import (
    LabelSetNameTaken,
    aggregate,
    majority,
    median_score,
    runs,
    write_label_set,
)
from annotation_site.factuality.frames import PARAGRAPHS, SENTENCES
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel


@pytest.mark.parametrize(
    "scores, ties, expected",
    [
        ([4], "error", 4),
        ([2, 5, 3], "error", 3),
        ([5, 5, 1], "error", 5),
        ([2, 3], "error", 2),
        ([2, 3], "no_error", 3),
        ([3, 4, 4, 5], "error", 4),
        ([3, 4, 5, 5], "error", 4),
        ([3, 4, 5, 5], "no_error", 5),
        ([1, 5], "error", 1),
        ([1, 5], "no_error", 5),
    ],
)
def test_median_with_tie_rules(scores, ties, expected):
    assert median_score(scores, ties) == expected


@pytest.mark.parametrize(
    "votes, voters, ties, expected",
    [
        (2, 3, "error", True),
        (1, 3, "error", False),
        (1, 2, "error", True),
        (1, 2, "no_error", False),
        (2, 4, "error", True),
        (2, 4, "no_error", False),
        (3, 4, "no_error", True),
        (0, 1, "error", False),
    ],
)
def test_majority_with_tie_rules(votes, voters, ties, expected):
    assert majority(votes, voters, ties) is expected


def test_runs_are_maximal():
    assert runs([5, 1, 2, 7, 6]) == [(1, 3), (5, 8)]
    assert runs([]) == []


def frames(paragraphs, sentences):
    return (pd.DataFrame(paragraphs, columns=PARAGRAPHS), pd.DataFrame(sentences, columns=SENTENCES))


def test_three_annotators_as_in_the_paper():
    nan = float("nan")
    paragraph, sentence = frames(
        [(10, 1, 4), (10, 2, 2), (10, 3, 5)],
        [  # sentence 100 (6 tokens): annotators 1 and 2 flag it; they agree on token 2 only
            (100, 10, 1, True, 1, 3),
            (100, 10, 2, True, 2, 4),
            (100, 10, 3, False, nan, nan),
            # sentence 101: only annotator 3 flags it (minority)
            (101, 10, 1, False, nan, nan),
            (101, 10, 2, False, nan, nan),
            (101, 10, 3, True, 0, 1),
            # sentence 102: all flag it, marking different words: erroneous without a majority span
            (102, 10, 1, True, 0, 1),
            (102, 10, 2, True, 1, 2),
            (102, 10, 3, True, 2, 3),
        ],
    )
    result = aggregate(paragraph, sentence)
    assert result.paragraphs == {10: 4}
    assert result.sentences == {100: True, 101: False, 102: True}
    assert result.spans == {100: [(2, 3)]}
    assert result.errors_without_spans == 1


def test_several_spans_of_one_annotator_count_once_per_token():
    nan = float("nan")
    _, sentence = frames(
        [],
        [
            (1, 10, 1, True, 0, 2),
            (1, 10, 1, True, 4, 5),
            (1, 10, 2, True, 1, 2),
            (1, 10, 2, True, 4, 6),
            (1, 10, 3, False, nan, nan),
        ],
    )
    result = aggregate(pd.DataFrame(columns=PARAGRAPHS), sentence)
    assert result.spans == {1: [(1, 2), (4, 5)]}  # tokens 1 and 4 have 2 of 3 votes; 0 and 5 one


def test_even_counts_follow_the_tie_rule_at_every_level():
    nan = float("nan")
    paragraph, sentence = frames([(10, 1, 3), (10, 2, 4)], [(1, 10, 1, True, 0, 2), (1, 10, 2, False, nan, nan)])
    leaning_error = aggregate(paragraph, sentence, "error")
    assert (leaning_error.paragraphs, leaning_error.sentences, leaning_error.spans) == (
        {10: 3},
        {1: True},
        {1: [(0, 2)]},
    )
    leaning_no_error = aggregate(paragraph, sentence, "no_error")
    assert (leaning_no_error.paragraphs, leaning_no_error.sentences, leaning_no_error.spans) == (
        {10: 4},
        {1: False},
        {},
    )
    with pytest.raises(ValueError):
        aggregate(paragraph, sentence, "coin")


@pytest.mark.parametrize("ties", ["error", "no_error"])
def test_a_majority_token_always_lies_in_a_majority_sentence(ties):
    import random

    rng = random.Random(5)
    rows = []
    for sentence_id in range(200):
        for annotator in range(rng.choice([1, 2, 3, 4, 5])):
            marks = [(s, s + rng.randint(1, 3)) for s in rng.sample(range(8), rng.randint(0, 2))]
            error = bool(marks) or rng.random() < 0.2
            for start, end in sorted(set(marks)) or [(None, None)]:
                rows.append((sentence_id, 1, annotator, error, start, end))
    result = aggregate(pd.DataFrame(columns=PARAGRAPHS), pd.DataFrame(rows, columns=SENTENCES), ties)
    assert result.spans
    assert all(result.sentences[s] for s in result.spans)


def test_write_label_set_replaces_its_contents_and_records_the_run(make_project, small_dataset):
    project = make_project()
    captions = {
        (c.video.external_id, c.system.name): c
        for c in small_dataset.videos.get(external_id="v1").captions.select_related("system", "video")
    }
    alpha = captions[("v1", "Alpha")]
    first, second = alpha.sentences.order_by("index")
    paragraph, sentence = frames(
        [(alpha.pk, 1, 2), (alpha.pk, 2, 2), (alpha.pk, 3, 4)],
        [(second.pk, alpha.pk, a, True, 1, 2) for a in (1, 2)] + [(first.pk, alpha.pk, 3, False, None, None)],
    )
    run = write_label_set(project, aggregate(paragraph, sentence))
    label_set = LabelSet.objects.get(dataset=small_dataset, name="fact")
    assert label_set.origin == LabelSet.Origin.AGGREGATED and project.label_set == label_set
    assert "ties: error" in label_set.source
    assert (run.captions, run.sentences, run.spans, run.ties) == (1, 2, 1, "error")
    assert list(ParagraphLabel.objects.filter(label_set=label_set).values_list("caption_id", "score")) == [
        (alpha.pk, 2)
    ]
    assert list(ErrorSpan.objects.filter(sentence_label__label_set=label_set).values_list("start", "end")) == [(1, 2)]
    # again, with other judgments: replaced, not added
    run = write_label_set(project, aggregate(paragraph.iloc[:1], sentence.iloc[2:]))
    assert ParagraphLabel.objects.get(label_set=label_set).score == 2
    assert SentenceLabel.objects.filter(label_set=label_set).count() == 1
    assert not ErrorSpan.objects.filter(sentence_label__label_set=label_set).exists()
    assert project.aggregations.count() == 2 and LabelSet.objects.filter(dataset=small_dataset).count() == 1


def test_write_label_set_never_overwrites_a_label_set_it_did_not_make(make_project, small_dataset):
    LabelSet.objects.create(dataset=small_dataset, name="fact", origin=LabelSet.Origin.IMPORTED)
    project = make_project()
    with pytest.raises(LabelSetNameTaken):
        write_label_set(project, aggregate(*frames([], [])))
