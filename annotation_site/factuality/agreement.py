"""Agreement reports of a project, assembled from the frames (``frames``) by pure functions.

Factuality (ActivityNet-Fact, three levels):
- paragraph: Krippendorff's alpha, ordinal and interval, over the 1-5 scores; a unit is a caption;
- sentence: alpha, nominal, over the 0/1 labels; a unit is a sentence;
- word: alpha, nominal, over token labels (1: inside a span of that annotator); a unit is every token of every
  caption (``word_units="tokens"``, as issue #3 asks) or, with ``word_units="words"``, every word (punctuation
  tokens left out, as the word-level score counts);
- per annotator: agreement with the aggregate (median / majority, including the annotator's own vote);
- per system: the distribution of paragraph scores and the shares of erroneous sentences and words.

Rating projects: alpha (ordinal, interval), Fleiss' kappa, mean pairwise Kendall tau and Spearman rho.
"""

import pandas as pd

from annotation_site.workflow import reports as workflow_reports

from . import frames, statistics
from .aggregation import aggregate, token_marks
from .scores import is_word

WORD_UNITS = ("tokens", "words")


def word_frame(sentence_frame, token_frame, word_units="tokens", marks=None):
    """One row per (token, annotator) for the sentences each annotator judged: unit "sentence:index", value
    1 when the token is inside one of that annotator's spans."""
    tokens_of = {int(s): t for s, t in zip(token_frame["sentence_id"].tolist(), token_frame["tokens"].tolist())}
    rows = []
    for (sentence_id, annotator_id), (_, marked) in (marks or token_marks(sentence_frame)).items():
        for i, token in enumerate(tokens_of.get(sentence_id, ())):
            if word_units == "words" and not is_word(token):
                continue
            rows.append((f"{sentence_id}:{i}", annotator_id, int(i in marked)))
    return pd.DataFrame(rows, columns=["unit", "annotator", "value"])


def _sentence_labels(sentence_frame):
    first = sentence_frame.drop_duplicates(["sentence_id", "annotator_id"])
    return pd.DataFrame(
        {
            "unit": first["sentence_id"].astype(int),
            "annotator": first["annotator_id"].astype(int),
            "value": first["error"].astype(int),
        }
    )


def annotator_agreement(paragraph_frame, sentence_frame, result, marks=None):
    """Per annotator: paragraphs scored, exact agreement with the median and mean absolute difference from it;
    sentences judged and agreement with the majority; token agreement and F1 of their marked tokens against
    the majority's marked tokens."""
    rows: dict = {}
    for caption_id, annotator_id, score in paragraph_frame[["caption_id", "annotator_id", "score"]].itertuples(
        index=False, name=None
    ):
        final = result.paragraphs.get(int(caption_id))
        entry = rows.setdefault(int(annotator_id), _empty_row(int(annotator_id)))
        entry["paragraphs"] += 1
        entry["_exact"] += int(score) == final
        entry["_abs"] += abs(int(score) - final)
    for (sentence_id, annotator_id), (error, marked) in (marks or token_marks(sentence_frame)).items():
        entry = rows.setdefault(annotator_id, _empty_row(annotator_id))
        entry["sentences"] += 1
        entry["_agree"] += error == result.sentences.get(sentence_id)
        final = {i for start, end in result.spans.get(sentence_id, []) for i in range(start, end)}
        entry["_tp"] += len(marked & final)
        entry["_fp"] += len(marked - final)
        entry["_fn"] += len(final - marked)
    out = []
    for annotator_id in sorted(rows):
        e = rows[annotator_id]
        marked_or_final = e["_tp"] + e["_fp"] + e["_fn"]
        out.append(
            {
                "annotator_id": annotator_id,
                "paragraphs": e["paragraphs"],
                "sentences": e["sentences"],
                "paragraph_exact": e["_exact"] / e["paragraphs"] if e["paragraphs"] else None,
                "paragraph_mean_abs_diff": e["_abs"] / e["paragraphs"] if e["paragraphs"] else None,
                "sentence_agreement": e["_agree"] / e["sentences"] if e["sentences"] else None,
                "word_f1": (2 * e["_tp"] / (2 * e["_tp"] + e["_fp"] + e["_fn"])) if marked_or_final else None,
            }
        )
    return out


def _empty_row(annotator_id):
    return {
        "annotator_id": annotator_id,
        "paragraphs": 0,
        "sentences": 0,
        "_exact": 0,
        "_abs": 0,
        "_agree": 0,
        "_tp": 0,
        "_fp": 0,
        "_fn": 0,
    }


def system_distributions(paragraph_frame, sentence_frame, token_frame, caption_frame, scale=range(1, 6), marks=None):
    """Per system (raw judgments of every annotator): how many paragraph scores of each value, the mean score,
    the share of sentence judgments that flag an error and the share of judged words inside spans."""
    system_of = dict(caption_frame[["caption_id", "system"]].itertuples(index=False, name=None))
    out = {}
    for system in caption_frame["system"].drop_duplicates():
        out[system] = {
            "system": system,
            "counts": {v: 0 for v in scale},
            "scores": 0,
            "sum": 0,
            "sentences": 0,
            "error_sentences": 0,
            "words": 0,
            "error_words": 0,
        }
    for caption_id, score in paragraph_frame[["caption_id", "score"]].itertuples(index=False, name=None):
        row = out[system_of[int(caption_id)]]
        row["counts"][int(score)] = row["counts"].get(int(score), 0) + 1
        row["scores"] += 1
        row["sum"] += int(score)
    if "caption_id" in token_frame:
        tokens_of = {
            int(s): (int(c), t)
            for s, c, t in zip(
                token_frame["sentence_id"].tolist(), token_frame["caption_id"].tolist(), token_frame["tokens"].tolist()
            )
        }
        for (sentence_id, _), (error, marked) in (marks or token_marks(sentence_frame)).items():
            caption_id, tokens = tokens_of[sentence_id]
            row = out[system_of[caption_id]]
            row["sentences"] += 1
            row["error_sentences"] += error
            for i, token in enumerate(tokens):
                if is_word(token):
                    row["words"] += 1
                    row["error_words"] += i in marked
    for row in out.values():
        row["mean_score"] = row.pop("sum") / row["scores"] if row["scores"] else None
        row["sentence_error_share"] = row["error_sentences"] / row["sentences"] if row["sentences"] else None
        row["word_error_share"] = row["error_words"] / row["words"] if row["words"] else None
    return list(out.values())


def factuality_report(
    paragraph_frame,
    sentence_frame,
    token_frame,
    caption_frame,
    *,
    ties="error",
    word_units="tokens",
    min_units=statistics.MIN_UNITS,
):
    """The whole report of a factuality project as plain values (JSON-ready but for annotator ids)."""
    if word_units not in WORD_UNITS:
        raise ValueError(f"word_units must be one of {WORD_UNITS}")
    paragraphs = paragraph_frame.rename(columns={"caption_id": "unit", "annotator_id": "annotator", "score": "value"})
    ordinal = statistics.krippendorff_alpha(paragraphs, level="ordinal", value_domain=range(1, 6), min_units=min_units)
    interval = statistics.krippendorff_alpha(
        paragraphs, level="interval", value_domain=range(1, 6), min_units=min_units
    )
    sentence = statistics.krippendorff_alpha(
        _sentence_labels(sentence_frame), level="nominal", value_domain=[0, 1], min_units=min_units
    )
    marks = token_marks(sentence_frame)  # read once, used by every level below
    word = statistics.krippendorff_alpha(
        word_frame(sentence_frame, token_frame, word_units, marks),
        level="nominal",
        value_domain=[0, 1],
        min_units=min_units,
    )
    result = aggregate(paragraph_frame, sentence_frame, ties, marks=marks)
    return {
        "parameters": {"ties": ties, "word_units": word_units, "min_units": min_units},
        "paragraph": {
            "ordinal": ordinal.alpha,
            "interval": interval.alpha,
            "units": ordinal.units,
            "annotators": ordinal.annotators,
            "warnings": ordinal.warnings,
        },
        "sentence": {
            "nominal": sentence.alpha,
            "units": sentence.units,
            "annotators": sentence.annotators,
            "warnings": sentence.warnings,
        },
        "word": {"nominal": word.alpha, "units": word.units, "annotators": word.annotators, "warnings": word.warnings},
        "annotators": annotator_agreement(paragraph_frame, sentence_frame, result, marks),
        "systems": system_distributions(paragraph_frame, sentence_frame, token_frame, caption_frame, marks=marks),
        "errors_without_spans": result.errors_without_spans,
    }


def rating_report(
    rating_frame, caption_frame, scale, *, min_units=statistics.MIN_UNITS, kendall_variant="b", min_common=3
):
    """The report of a rating project: alpha (ordinal, interval), Fleiss' kappa (the scale points as
    categories), mean pairwise Kendall tau / Spearman rho, and the distribution of ratings per system."""
    values = [v for v, _ in scale]
    long = rating_frame.rename(columns={"caption_id": "unit", "annotator_id": "annotator", "score": "value"})
    ordinal = statistics.krippendorff_alpha(long, level="ordinal", value_domain=values, min_units=min_units)
    interval = statistics.krippendorff_alpha(long, level="interval", value_domain=values, min_units=min_units)
    fleiss = statistics.fleiss_from_frame(long, categories=values)
    pairwise = statistics.pairwise_correlation(long, kendall_variant=kendall_variant, min_common=min_common)
    warnings = list(ordinal.warnings)
    if fleiss.dropped:
        warnings.append(
            f"Fleiss' kappa uses the {fleiss.units} captions with {fleiss.raters} ratings; "
            f"{fleiss.dropped} with another number of ratings were left out"
        )
    systems = system_distributions(
        rating_frame[["caption_id", "annotator_id", "score"]],
        frames_empty_sentences(),
        pd.DataFrame(),
        caption_frame,
        scale=values,
    )
    for row in systems:
        for key in ("sentences", "error_sentences", "words", "error_words", "sentence_error_share", "word_error_share"):
            row.pop(key)
    return {
        "parameters": {"min_units": min_units, "kendall_variant": kendall_variant, "min_common": min_common},
        "rating": {
            "ordinal": ordinal.alpha,
            "interval": interval.alpha,
            "units": ordinal.units,
            "annotators": ordinal.annotators,
            "fleiss_kappa": fleiss.kappa,
            "fleiss_units": fleiss.units,
            "fleiss_raters": fleiss.raters,
            "kendall_tau": pairwise.kendall_tau,
            "spearman_rho": pairwise.spearman_rho,
            "pairs": pairwise.pairs,
            "warnings": warnings,
        },
        "annotators": annotator_agreement(
            rating_frame, frames_empty_sentences(), aggregate(rating_frame, frames_empty_sentences())
        ),
        "systems": systems,
    }


def frames_empty_sentences():
    return pd.DataFrame(columns=frames.SENTENCES)


def project_report(project, **parameters):
    """Load the frames of a project (one query each) and build its report."""
    captions = frames.captions(project)
    if project.is_rating:
        from .projects import scale_of

        return rating_report(frames.ratings(project), captions, scale_of(project), **parameters)
    return factuality_report(
        frames.paragraphs(project), frames.sentences(project), frames.tokens(project), captions, **parameters
    )


def command_summary(report):
    """The shape ``factuality_agreement --format json`` prints (a contract for scripts)."""
    if "rating" in report:
        rating = {k: v for k, v in report["rating"].items() if k != "warnings"}
        return {"rating": rating}
    return {
        "paragraph": {k: report["paragraph"][k] for k in ("ordinal", "interval", "units", "annotators")},
        "sentence": {k: report["sentence"][k] for k in ("nominal", "units", "annotators")},
        "word": {k: report["word"][k] for k in ("nominal", "units", "annotators")},
    }


def project_systems(project):
    """Only the per-system distributions of a project (for the charts): three or four queries."""
    captions = frames.captions(project)
    if project.is_rating:
        from .projects import scale_of

        values = [v for v, _ in scale_of(project)]
        return system_distributions(
            frames.ratings(project), frames_empty_sentences(), pd.DataFrame(), captions, scale=values
        )
    return system_distributions(frames.paragraphs(project), frames.sentences(project), frames.tokens(project), captions)


def jsonable(value):
    """The report with numpy numbers made plain and dictionary keys made strings (for JSON)."""
    return workflow_reports.jsonable(value)
