"""Human scores per caption: factuality levels counted by hand on the tiny dataset, and the DA join."""

import numpy as np
import pandas as pd
import pytest

from metrics_eval import human, loaders

pytestmark = pytest.mark.django_db


def by_key(dataset, frame):
    captions = loaders.captions(dataset).set_index("caption_id")
    return {(captions.loc[i, "video_id"], captions.loc[i, "system"]): row for i, row in frame.iterrows()}


def test_factuality_scores_of_the_tiny_dataset(tiny_dataset):
    scores = by_key(tiny_dataset, loaders.factuality(loaders.label_set(tiny_dataset)))
    assert len(scores) == 12
    # vid-a / Beta: 2 sentences, the first wrong ("bike"); 10 words (the two "." are not words), 1 wrong.
    beta = scores[("vid-a", "Beta")]
    assert (beta["paragraph"], beta["sentence"], beta["word"]) == (3.0, 0.5, pytest.approx(0.9))
    # vid-a / Gamma: "a woman swims in the sea ." with "woman" and "sea" wrong: 6 words, 2 wrong.
    gamma = scores[("vid-a", "Gamma")]
    assert (gamma["paragraph"], gamma["sentence"], gamma["word"]) == (1.0, 0.0, pytest.approx(1 - 2 / 6))
    # vid-c / Gamma: "a man paints a wall ." with "man" and "a wall" wrong: 5 words, 3 wrong.
    assert scores[("vid-c", "Gamma")]["word"] == pytest.approx(0.4)
    # no error anywhere: 1 at both levels
    alpha = scores[("vid-b", "Alpha")]
    assert (alpha["paragraph"], alpha["sentence"], alpha["word"]) == (4.0, 1.0, 1.0)


def test_punctuation_is_not_a_word_and_spanless_errors_count_at_sentence_level():
    paragraphs = pd.DataFrame({"caption_id": [1], "score": [2]})
    sentences = pd.DataFrame(
        {
            "label_id": [10, 11, 12],
            "caption_id": [1, 1, 2],
            "error": [True, True, False],
            "tokens": [["a", "dog", "."], ["it", "barks", "!"], ["``", "ok", "''"]],
        }
    )
    spans = pd.DataFrame({"label_id": [10], "start": [1], "end": [3]})  # "dog ." : one word, one punctuation
    frame = human.factuality_scores(paragraphs, sentences, spans)
    assert frame.loc[1, "sentence"] == 0.0
    assert frame.loc[1, "word"] == pytest.approx(1 - 1 / 4)  # words: a dog it barks
    assert np.isnan(frame.loc[2, "paragraph"])  # caption 2 has sentence labels only
    assert (frame.loc[2, "sentence"], frame.loc[2, "word"]) == (1.0, 1.0)


def test_da_caption_scores_join_the_dataset_captions():
    captions = pd.DataFrame({"caption_id": [1, 2, 3], "video_id": ["v1", "v1", "v2"], "system": ["A", "B", "A"]})
    da = pd.DataFrame(
        {
            "video_id": ["v1", "v2", "v9"],
            "system": ["B", "A", "A"],
            "raw": [70.0, 40.0, 1.0],
            "z": [0.5, -0.3, 9.0],
            "n": [3, 2, 1],
        }
    )
    joined = human.da_caption_scores(da, captions)
    assert sorted(joined.index) == [2, 3]  # v9 is not in the dataset
    assert joined.loc[2].to_dict() == {"z": 0.5, "raw": 70.0, "n": 3.0}


def test_missing_label_set_is_reported(tiny_dataset):
    with pytest.raises(loaders.HumanScoresUnavailable, match="no label set 'nope'"):
        loaders.label_set(tiny_dataset, "nope")


def test_a_missing_default_label_set_is_reported_in_plain_words(tiny_dataset):
    imported = tiny_dataset.label_sets.get()
    tiny_dataset.label_sets.filter(pk=imported.pk).update(name="round-1")
    tiny_dataset.label_sets.create(name="round-2", origin=imported.origin)
    with pytest.raises(loaders.HumanScoresUnavailable) as missing:
        loaders.label_set(tiny_dataset)
    assert str(missing.value) == (
        "dataset tiny has no default label set (one named imported, or the only one); its label sets: round-1, round-2"
    )
    tiny_dataset.label_sets.all().delete()
    with pytest.raises(loaders.HumanScoresUnavailable, match="; it has no label sets$"):
        loaders.label_set(tiny_dataset)
