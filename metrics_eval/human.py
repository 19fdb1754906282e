"""Human scores per caption, as pure functions over DataFrames (the loaders feed them from the database).

Factuality (ActivityNet-Fact protocol, Liu & Wan 2023; ``get_anno_score`` in their FactVC code), in the
"higher is better" orientation so every correlation with a metric reads the same way:

- ``paragraph``: the paragraph Likert score (1 = many errors ... 5 = none), as it is;
- ``sentence``: 1 - the share of the caption's labelled sentences that have a factual error;
- ``word``: 1 - the share of the caption's words inside error spans. Words are tokens with at least one letter or
  digit; punctuation tokens are not words (docs/architecture.md, "Word-level share": 13.5 % of ActivityNet-Fact
  words are in error spans, the published figure).

FactVC correlates the negated shares; 1 - share differs from that by a constant, so the correlations are the
same.

Direct Assessment: the per-caption mean z and raw scores of a campaign (``assessment.results.caption_scores``)
and the per-system scores (``system_scores``).
"""

import numpy as np
import pandas as pd

FACTUALITY_LEVELS = ("paragraph", "sentence", "word")
DA_LEVELS = ("z", "raw")


def is_word(token):
    return any(ch.isalnum() for ch in token)


def factuality_scores(paragraphs, sentences, spans):
    """Per-caption factuality scores.

    ``paragraphs``: [caption_id, score]; ``sentences``: [label_id, caption_id, error, tokens];
    ``spans``: [label_id, start, end]. Returns a DataFrame indexed by caption_id with the columns
    paragraph, sentence and word (NaN where a caption has no such label).
    """
    paragraph = pd.Series(
        paragraphs["score"].to_numpy(dtype=float), index=paragraphs["caption_id"].to_numpy(), name="paragraph"
    )
    marked = {}
    for label_id, start, end in spans[["label_id", "start", "end"]].itertuples(index=False):
        marked.setdefault(label_id, set()).update(range(start, end))
    rows = []
    for label_id, caption_id, error, tokens in sentences[["label_id", "caption_id", "error", "tokens"]].itertuples(
        index=False
    ):
        inside = marked.get(label_id, ())
        words = [i for i, token in enumerate(tokens) if is_word(token)]
        rows.append((caption_id, bool(error), len(words), sum(1 for i in words if i in inside)))
    per_sentence = pd.DataFrame(rows, columns=["caption_id", "error", "words", "error_words"])
    per_caption = per_sentence.groupby("caption_id").agg(
        sentences=("error", "size"), errors=("error", "sum"), words=("words", "sum"), error_words=("error_words", "sum")
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        sentence = 1.0 - per_caption["errors"] / per_caption["sentences"]
        word = 1.0 - per_caption["error_words"] / per_caption["words"].where(per_caption["words"] > 0)
    frame = pd.concat([paragraph, sentence.rename("sentence"), word.rename("word")], axis=1)
    frame.index.name = "caption_id"
    return frame.astype(float)


def da_caption_scores(caption_scores, captions):
    """DA per-caption scores joined to the dataset's captions: a DataFrame indexed by caption_id with the
    columns z, raw and n (judgments). ``caption_scores``: [video_id, system, raw, z, n] (assessment.results);
    ``captions``: [caption_id, video_id, system]. Scores of captions not in the dataset are dropped."""
    merged = captions.merge(caption_scores, on=["video_id", "system"], how="inner")
    return merged.set_index("caption_id")[["z", "raw", "n"]].astype(float)


def select_human_systems(frame, metrics, *, include=False, valid=(), fewer_references=()):
    """Keep the captions of human systems out of a correlation unless asked for (issue #9).

    A human system's captions are (copies of) references: scored against the references they came from, BLEU
    and METEOR give them 1.0. By default they are left out of every cell; with ``include`` they stay, but only
    for the metrics in ``valid`` (metrics that scored them leave-one-out against the other references, or
    without references) - for the others their scores are dropped, so ``n`` counts only what was correlated.
    ``fewer_references``: the metrics of ``valid`` that scored them leave-one-out, i.e. against one reference fewer
    than the system captions (their scores are not comparable with the systems'; the description lists them so
    the report says so). A metric of ``valid`` that scored none of the human captions (leave-one-out needs another
    reference of the video) is listed in ``metrics_unscored``, not among those with them; the human systems are
    ``included`` only when at least one metric has a score of one of their captions.
    ``frame`` has an ``is_human`` column (dropped from the returned frame). Returns (frame, description).
    """
    is_human = frame["is_human"].astype(bool).to_numpy() if "is_human" in frame else np.zeros(len(frame), bool)
    systems = sorted(frame.loc[is_human, "system"].unique()) if is_human.any() else []
    description = {
        "systems": systems,
        "captions": int(is_human.sum()),
        "included": bool(include and systems),
        "metrics_with_them": [],
        "metrics_without_them": [],
        "metrics_fewer_references": [],
        "metrics_unscored": [],
    }
    if not include:
        frame = frame.loc[~is_human]
    elif systems:
        frame = frame.copy()
        for metric in metrics:
            if metric in valid and frame.loc[is_human, metric].notna().any():
                description["metrics_with_them"].append(metric)
                if metric in fewer_references:
                    description["metrics_fewer_references"].append(metric)
            elif metric in valid:
                description["metrics_unscored"].append(metric)
            else:
                frame.loc[is_human, metric] = np.nan
                description["metrics_without_them"].append(metric)
        description["included"] = bool(description["metrics_with_them"])
        if not description["included"]:  # as if not asked: the counts and the data hash without them
            frame = frame.loc[~is_human]
    return frame.drop(columns=["is_human"], errors="ignore").reset_index(drop=True), description


def analysis_frame(captions, human, metrics):
    """The frame the correlation engine works on: captions [caption_id, video_id, system] with the human
    columns and the metric columns (both indexed by caption_id) joined on; captions without any human score
    are dropped."""
    frame = captions.set_index("caption_id").join(human, how="inner").join(metrics, how="left")
    human_columns = [c for c in human.columns if c != "n"]
    frame = frame.loc[frame[human_columns].notna().any(axis=1)]
    return frame.reset_index()
