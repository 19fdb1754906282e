"""Correct/foil pairs with a caption of a human system (docs/metrics.md, "Correct/foil pairs with a human
caption"): a human caption is a reference, so a pair with one is counted only where both of its captions were
scored against the same references without it (computed metrics), or without references.

On the code before this change the pairs report ignored ``is_human``: a computed metric scored the human correct
caption leave-one-out (against gt_2) but its foil - the same text with one word changed - against gt_1 and gt_2,
i.e. against the correct caption itself, so every foil won (BLEU-4, METEOR and CIDEr-D accuracy 0 on these
pairs); an imported metric's score of the human caption (possibly against itself) was counted as it was."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle
from metrics_eval import analysis, loaders, models, reports, services

pytestmark = pytest.mark.django_db

# gt_1 is a human system (its captions are the gt_1 references); "foil" changes one word of each; v4 has no other
# reference than gt_1, so its human caption cannot be scored leave-one-out.
REFERENCES = {
    "v1": ["a man rides a brown horse across a green field", "a man rides a horse across the field"],
    "v2": ["two children play football in a park", "two children play football in the park"],
    "v3": ["a woman slices onions in a kitchen", "a woman slices onions in the kitchen"],
    "v4": ["a dog runs on the beach"],
}
FOILS = {
    "v1": "a man rides a brown dog across a green field",
    "v2": "two children play tennis in a park",
    "v3": "a woman slices apples in a kitchen",
    "v4": "a cat runs on the beach",
}
ALPHA = {"v1": "a man rides a horse", "v2": "children play in a park", "v3": "a woman cooks in a kitchen"}
PAIRS = "video_id,correct,foil\n" + "".join(f"{v},gt_1,foil\n" for v in REFERENCES) + "v1,Alpha,foil\n"
HUMAN_PAIRS = ["v1", "v2", "v3"]  # with a reference left once gt_1 is out
METRICS = ["bleu4", "meteor", "cider"]


def foil_dataset(references=REFERENCES, extra=()):
    lines = [{"type": "video", "video_id": v} for v in references]
    for video, refs in references.items():
        lines += [
            {"type": "reference", "video_id": video, "reference_set": f"gt_{i + 1}", "text": text}
            for i, text in enumerate(refs)
        ]
        lines.append({"video_id": video, "system": "gt_1", "is_human": True, "sentences": [{"text": refs[0]}]})
        lines.append({"video_id": video, "system": "foil", "sentences": [{"text": FOILS[video]}]})
        if video in ALPHA:
            lines.append({"video_id": video, "system": "Alpha", "sentences": [{"text": ALPHA[video]}]})
    lines += list(extra)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    return import_bundle(jsonl.read(text, filename="foil.jsonl"), name="foil", source_format="jsonl").dataset


def correlate(*args):
    out = io.StringIO()
    call_command(
        "correlate", "--dataset", "foil", "--human", "pairs", "--pair-set", "p", "--resamples", "100", *args,
        stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    return out.getvalue()


def outcome(correct, foil):
    return 1.0 if correct > foil else 0.5 if correct == foil else 0.0


def direct_scores(gts_texts, res_texts):
    """{metric: [score per key]} from pycocoevalcap called directly the documented way (PTBTokenizer, then each
    scorer's compute_score on one result file)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = PTBTokenizer().tokenize({k: [{"caption": r} for r in refs] for k, refs in gts_texts.items()})
    res = PTBTokenizer().tokenize({k: [{"caption": t}] for k, t in res_texts.items()})
    _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    meteor = Meteor()
    _, meteor_scores = meteor.compute_score(gts, res)
    _, cider = Cider().compute_score(gts, res)
    return {
        "keys": list(gts),
        "bleu4": [float(v) for v in bleu[3]],
        "meteor": [float(v) for v in meteor_scores],
        "cider": [float(v) for v in cider],
    }


def tokenize(texts):
    """{key: [text, ...]} -> {key: [tokens, ...]} with pycocoevalcap's PTBTokenizer."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    return PTBTokenizer().tokenize({k: [{"caption": t} for t in ts] for k, ts in texts.items()})


def hand_cider_d(hypothesis, references, corpus, n=4, sigma=6.0):
    """CIDEr-D (Vedantam et al. 2015, as coco-caption computes it) of one tokenised hypothesis against its
    tokenised references, the IDF from ``corpus`` (one document per video: its references), written out here
    independently of pycocoevalcap's CiderScorer: tf-idf vectors of the 1..4-grams (idf = log(documents) -
    log(max(1, document frequency))), per n the clipped cosine min(h, r) * r / (|h| |r|) times the Gaussian length
    penalty, averaged over n and over the references, x 10."""

    def grams(text):
        words = text.split()
        counts = {}
        for k in range(1, n + 1):
            for i in range(len(words) - k + 1):
                counts[tuple(words[i : i + k])] = counts.get(tuple(words[i : i + k]), 0) + 1
        return counts

    frequency = {}
    for document in corpus:
        for gram in {g for reference in document for g in grams(reference)}:
            frequency[gram] = frequency.get(gram, 0) + 1
    log_documents = np.log(float(len(corpus)))

    def vector(text):
        vec = [{} for _ in range(n)]
        for gram, tf in grams(text).items():
            vec[len(gram) - 1][gram] = tf * (log_documents - np.log(max(1.0, frequency.get(gram, 0.0))))
        norms = [np.sqrt(sum(v * v for v in part.values())) for part in vec]
        return vec, norms, len(text.split())

    h, h_norm, h_len = vector(hypothesis)
    total = 0.0
    for reference in references:
        r, r_norm, r_len = vector(reference)
        penalty = np.e ** (-((h_len - r_len) ** 2) / (2 * sigma**2))
        for k in range(n):
            value = sum(min(w, r[k].get(g, 0.0)) * r[k].get(g, 0.0) for g, w in h[k].items())
            if h_norm[k] and r_norm[k]:
                value /= h_norm[k] * r_norm[k]
            total += value * penalty / n
    return 10.0 * total / len(references)


def corpus_of(references):
    """The CIDEr-D IDF corpus of pair scores: one document per video, its references (tokenised)."""
    tokens = tokenize(references)
    return tokens, [tokens[v] for v in sorted(references)]


def expected_pair_scores():
    """{metric: {video: (correct, foil)}}: the human pairs' scores from pycocoevalcap called directly (BLEU-4,
    METEOR: both captions against gt_2 only) and, for CIDEr-D, written out by hand against gt_2 with the IDF of
    the dataset's videos (one document each, all their references)."""
    gts = {v: REFERENCES[v][1:] for v in HUMAN_PAIRS}
    correct = direct_scores(gts, {v: REFERENCES[v][0] for v in HUMAN_PAIRS})
    foil = direct_scores(gts, {v: FOILS[v] for v in HUMAN_PAIRS})
    expected = {
        m: {v: (correct[m][correct["keys"].index(v)], foil[m][foil["keys"].index(v)]) for v in HUMAN_PAIRS}
        for m in ("bleu4", "meteor")
    }
    tokens, corpus = corpus_of(REFERENCES)
    hypotheses = tokenize(
        {**{f"c{v}": [REFERENCES[v][0]] for v in HUMAN_PAIRS}, **{f"f{v}": [FOILS[v]] for v in HUMAN_PAIRS}}
    )
    expected["cider"] = {
        v: tuple(hand_cider_d(hypotheses[f"{side}{v}"][0], tokens[v][1:], corpus) for side in ("c", "f"))
        for v in HUMAN_PAIRS
    }
    return expected


def expected_accuracies():
    """Accuracy per metric counted pair by pair from pycocoevalcap's own scores: the human pairs with both
    captions against gt_2 only (one result file of the correct captions, one of the foils: the same references,
    so the same CIDEr-D IDF); the Alpha/foil pair with the stored scores' result files (each system's captions
    against all their videos' references); the v4 pair has no reference once gt_1 is out and is not counted."""
    pair_scores = expected_pair_scores()
    alpha = direct_scores({v: REFERENCES[v] for v in ALPHA}, ALPHA)
    foils = direct_scores(REFERENCES, FOILS)
    expected = {}
    for metric in METRICS:
        outcomes = [outcome(c, f) for c, f in pair_scores[metric].values()]
        outcomes.append(outcome(alpha[metric][alpha["keys"].index("v1")], foils[metric][foils["keys"].index("v1")]))
        expected[metric] = float(np.mean(outcomes))
    return expected


def test_both_captions_of_a_pair_with_a_human_caption_are_scored_against_the_same_references(java, db):
    dataset = foil_dataset()
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    result = services.compute_scores(dataset, METRICS)
    body = json.loads(correlate("--format", "json"))
    expected = expected_accuracies()
    for metric in METRICS:
        cell = body["metrics"][metric]["accuracy"]
        assert cell["n"] == 4  # 3 human pairs scored against gt_2, the Alpha pair; v4 has no other reference
        assert cell["r"] == pytest.approx(expected[metric], abs=1e-12)  # before: 0 on the human pairs
    assert expected["bleu4"] >= 0.75 and expected["meteor"] >= 0.75  # the correct caption wins once fair
    described = body["human_pairs"]
    assert described["systems"] == ["gt_1"] and described["pairs"] == 4
    assert described["metrics_same_references"] == sorted(METRICS) and described["metrics_without_them"] == []
    assert described["without_other_references"] == {m: 1 for m in METRICS} and described["not_scored"] == {}
    table = correlate()
    assert "4 pairs with a caption of human system gt_1 (a reference): both captions scored against the " in table
    assert "1 of them not scored by bleu4: the video has no other reference" in table
    assert result["pairs_with_human_captions"] == {"pairs": 4, "without_other_references": 1}
    assert models.PairScore.objects.filter(metric__name="bleu4").count() == 4  # the v4 pair: stored, no scores
    assert models.PairScore.objects.filter(metric__name="bleu4", correct__isnull=True).count() == 1
    assert_pair_scores(expected_pair_scores())


def stored_pair_scores(pair_set="p"):
    """{metric: {video: (correct, foil)}} of the stored PairScore rows of a pair set."""
    stored = {}
    for score in models.PairScore.objects.filter(pair__pair_set=pair_set).select_related("metric", "pair__correct"):
        stored.setdefault(score.metric.name, {})[score.pair.correct.video.external_id] = (score.correct, score.foil)
    return stored


def assert_pair_scores(expected, pair_set="p"):
    stored = stored_pair_scores(pair_set)
    for metric, videos in expected.items():
        for video, (correct, foil) in videos.items():
            assert stored[metric][video] == (pytest.approx(correct, abs=1e-12), pytest.approx(foil, abs=1e-12))
            assert correct != foil or metric != "cider" or correct > 0


def test_hand_cider_d_is_pycocoevalcaps_over_its_own_corpus():
    """The test's hand-written CIDEr-D, with the IDF of the scored captions' own references, is Cider()'s."""
    from pycocoevalcap.cider.cider import Cider

    tokens, corpus = corpus_of(REFERENCES)
    hypotheses = tokenize({v: [FOILS[v]] for v in REFERENCES})
    _, values = Cider().compute_score(tokens, {v: hypotheses[v] for v in tokens})
    for video, value in zip(tokens, values):
        assert hand_cider_d(hypotheses[video][0], tokens[video], corpus) == pytest.approx(value, abs=1e-12)


def test_cider_d_of_a_pair_does_not_depend_on_the_other_pairs_of_its_set(java, db):
    """CIDEr-D's IDF of a pair with a human caption comes from the dataset's videos (one document each, all their
    references), not from the pairs scored with it. Before: from the pairs of its set, so a set with one such
    pair had IDF log(1) = 0 - CIDEr-D 0 for both captions, a tie counted with 1/2 credit - and a pair's scores
    changed with the other pairs of its set."""
    human = "a man rides a horse over a field"  # a human caption that is none of the references: none left out
    extra = [{"video_id": "v1", "system": "hx", "is_human": True, "sentences": [{"text": human}]}]
    dataset = foil_dataset(extra=extra)
    services.import_pairs(dataset, "video_id,correct,foil\nv1,hx,foil\n", "one.csv", pair_set="one")
    services.import_pairs(dataset, "video_id,correct,foil\nv1,gt_1,foil\n", "single.csv", pair_set="single")
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    services.compute_scores(dataset, ["cider"])

    # references unchanged: the pair's scores are pycocoevalcap's CIDEr-D over the whole corpus
    direct = direct_scores(REFERENCES, {**FOILS, "v1": human})
    (hx_correct, hx_foil) = stored_pair_scores("one")["cider"]["v1"]
    assert hx_correct == pytest.approx(direct["cider"][direct["keys"].index("v1")], abs=1e-12)
    foils = direct_scores(REFERENCES, FOILS)
    assert hx_foil == pytest.approx(foils["cider"][foils["keys"].index("v1")], abs=1e-12)
    assert hx_correct > 0 and hx_foil > 0  # before: 0.0 and 0.0

    # the same pair alone in its set and among others: the same scores, the hand-computed ones
    expected = expected_pair_scores()["cider"]["v1"]
    assert stored_pair_scores("single")["cider"]["v1"] == stored_pair_scores("p")["cider"]["v1"]
    assert stored_pair_scores("single")["cider"]["v1"] == (
        pytest.approx(expected[0], abs=1e-12),
        pytest.approx(expected[1], abs=1e-12),
    )
    body = json.loads(_correlate_set("single"))
    assert body["metrics"]["cider"]["accuracy"]["r"] == outcome(*expected)  # before: 0.5, a 0-0 tie


def _correlate_set(pair_set):
    out = io.StringIO()
    call_command(
        "correlate", "--dataset", "foil", "--human", "pairs", "--pair-set", pair_set, "--resamples", "100",
        "--format", "json", stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    return out.getvalue()


def test_pairs_with_two_human_captions_are_scored_without_either(java, db):
    """Both captions human (gt_1 against gt_2): both are scored against the references that are neither."""
    references = {**REFERENCES, "v1": [*REFERENCES["v1"], "a man is riding a horse through a field"]}
    extra = [
        {"video_id": v, "system": "gt_2", "is_human": True, "sentences": [{"text": references[v][1]}]}
        for v in ("v1", "v2")
    ]
    dataset = foil_dataset(references, extra)
    services.import_pairs(dataset, "video_id,correct,foil\nv1,gt_1,gt_2\nv2,gt_1,gt_2\n", "h.csv", pair_set="h")
    result = services.compute_scores(dataset, METRICS)
    assert result["pairs_with_human_captions"] == {"pairs": 2, "without_other_references": 1}
    gts = {"v1": references["v1"][2:]}
    correct = direct_scores(gts, {"v1": references["v1"][0]})
    foil = direct_scores(gts, {"v1": references["v1"][1]})
    tokens, corpus = corpus_of(references)
    hypotheses = tokenize({"c": [references["v1"][0]], "f": [references["v1"][1]]})
    expected = {m: {"v1": (correct[m][0], foil[m][0])} for m in ("bleu4", "meteor")}
    expected["cider"] = {"v1": tuple(hand_cider_d(hypotheses[k][0], tokens["v1"][2:], corpus) for k in ("c", "f"))}
    assert_pair_scores(expected, "h")
    assert stored_pair_scores("h")["bleu4"]["v2"] == (None, None)  # v2 has no reference but gt_1 and gt_2
    body = json.loads(_correlate_set("h"))
    assert body["metrics"]["bleu4"]["accuracy"]["n"] == 1
    assert body["human_pairs"]["systems"] == ["gt_1", "gt_2"]


def test_replacing_a_pair_set_drops_its_pair_scores(java, db):
    dataset = foil_dataset()
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    services.compute_scores(dataset, ["bleu4"])
    assert models.PairScore.objects.count() == 4
    services.import_pairs(dataset, "video_id,correct,foil\nv2,gt_1,foil\n", "p.csv", pair_set="p", replace=True)
    assert not models.PairScore.objects.exists()  # the replaced pairs' scores went with them
    body = json.loads(_correlate_set("p"))
    assert body["metrics"]["bleu4"]["accuracy"]["n"] == 0
    assert body["human_pairs"]["not_scored"] == {"bleu4": 1}


def import_scores(dataset, text, filename):
    services.import_scores(dataset, text, filename)


def test_imported_scores_of_pairs_with_a_human_caption_count_only_without_references(db, staff_client):
    """An imported metric's score of a human caption may be against a reference set holding it: those pairs are
    left out of its cell (and the report says so), as the other reports leave such captions out; a metric
    declared reference-free keeps them."""
    dataset = foil_dataset()
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    # "overlap" gave every human caption 1.0 (scored against itself), so it "prefers" every correct caption
    rows = [(v, "gt_1", 1.0) for v in REFERENCES] + [(v, "foil", 0.6) for v in REFERENCES]
    rows += [("v1", "Alpha", 0.4)]
    import_scores(
        dataset, "video_id,system,metric,score\n" + "".join(f"{v},{s},overlap,{x}\n" for v, s, x in rows), "o.csv"
    )
    free = {"v1": (0.7, 0.2), "v2": (0.3, 0.5), "v3": (0.6, 0.6), "v4": (0.9, 0.1)}
    records = [
        {"video_id": v, "system": s, "score": x} for v, (c, f) in free.items() for s, x in (("gt_1", c), ("foil", f))
    ]
    records.append({"video_id": "v1", "system": "Alpha", "score": 0.1})
    described = {"metric": "emscore", "parameters": {"human_captions": "reference-free"}, "scores": records}
    import_scores(dataset, json.dumps(described), "emscore.json")

    body = json.loads(correlate("--format", "json"))
    overlap = body["metrics"]["overlap"]["accuracy"]
    assert overlap["n"] == 1 and overlap["r"] == 0.0  # only Alpha (0.4) against its foil (0.6); was n = 5, r = 0.8
    emscore = body["metrics"]["emscore"]["accuracy"]
    hand = [1.0, 0.0, 0.5, 1.0, 0.0]  # v1..v4 human pairs, then Alpha 0.1 against 0.2
    assert emscore["n"] == 5 and emscore["r"] == pytest.approx(np.mean(hand))
    assert body["human_pairs"]["metrics_without_them"] == ["overlap"]
    assert body["human_pairs"]["metrics_reference_free"] == ["emscore"]

    sentence = "left out for overlap (imported scores: not known to score both captions of a pair"
    assert sentence in correlate()
    assert sentence in correlate("--format", "csv").splitlines()[0]
    assert "scored without references by emscore" in correlate()
    page = staff_client.get("/metrics/datasets/foil/").content.decode()
    assert 'id="human-pairs-p"' in page and sentence in page
    report = reports.Report.objects.filter(kind="pairs").latest("pk")
    assert sentence in staff_client.get(f"/metrics/reports/{report.pk}/").content.decode()


def test_pairs_imported_after_computing_are_left_out_until_computed_again(java, db):
    dataset = foil_dataset()
    services.compute_scores(dataset, ["bleu4"])
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    body = json.loads(correlate("--format", "json", "--metrics", "bleu4"))
    assert body["metrics"]["bleu4"]["accuracy"]["n"] == 1  # the Alpha pair; was 4, the foils winning
    assert body["human_pairs"]["not_scored"] == {"bleu4": 4}
    assert "4 of them left out for bleu4: not scored against those references (pairs imported after bleu4 was " in (
        correlate("--metrics", "bleu4")
    )
    services.compute_scores(dataset, ["bleu4"])
    again = json.loads(correlate("--format", "json", "--metrics", "bleu4"))
    assert again["report"] != body["report"] and again["metrics"]["bleu4"]["accuracy"]["n"] == 4
    assert again["human_pairs"]["not_scored"] == {}
    # replacing the computed metric by imported scores drops its pair scores with it
    text = "video_id,system,metric,score\n" + "".join(f"{v},foil,bleu4,0.5\n" for v in REFERENCES)
    services.import_scores(dataset, text + "v1,gt_1,bleu4,1.0\nv1,Alpha,bleu4,0.2\n", "b.csv", replace=True)
    assert not models.PairScore.objects.exists()
    replaced = json.loads(correlate("--format", "json", "--metrics", "bleu4"))
    assert replaced["metrics"]["bleu4"]["accuracy"]["n"] == 1
    assert replaced["human_pairs"]["metrics_without_them"] == ["bleu4"]


def test_pairs_without_a_human_caption_are_unchanged(db):
    dataset = foil_dataset()
    services.import_pairs(dataset, "video_id,correct,foil\nv1,Alpha,foil\n", "pairs.csv", pair_set="p")
    import_scores(dataset, "video_id,system,metric,score\nv1,Alpha,m,0.3\nv1,foil,m,0.2\n", "m.csv")
    body = json.loads(correlate("--format", "json"))
    assert body["metrics"]["m"]["accuracy"] == {"r": 1.0, "ci": [1.0, 1.0], "n": 1}
    assert body["human_pairs"]["pairs"] == 0
    assert "No caption of a human system among the pairs." in correlate()
    assert loaders.caption_pairs(dataset, "p")[["correct_human", "foil_human"]].to_numpy().tolist() == [[False, False]]


def test_pairs_clusters_compare_two_metrics_on_the_pairs_both_scored():
    """Metric a scored pairs 1-10 only (right on all: accuracy 1.0), metric b pairs 1-20 (right on 1-10, wrong on
    11-20: 0.5). On the ten pairs both scored they are equally right, so a is not significantly better than b and
    both are in cluster 1; the report cautions that their accuracies are over different pairs. Before, a's
    resamples (always 1.0) were compared with b's over its own twenty pairs (about 0.5): a cluster 1, b 2."""
    rows = [
        {"video_id": f"v{i}", "a:correct": 0.9 if i <= 10 else np.nan, "a:foil": 0.1 if i <= 10 else np.nan}
        for i in range(1, 21)
    ]
    for i, row in enumerate(rows, start=1):
        row["b:correct"], row["b:foil"] = (0.8, 0.2) if i <= 10 else (0.2, 0.8)
    result = analysis.analyse_pairs(pd.DataFrame(rows), ["a", "b"], analysis.Parameters(resamples=500))
    assert result["metrics"]["a"]["accuracy"]["r"] == 1.0 and result["metrics"]["a"]["accuracy"]["n"] == 10
    assert result["metrics"]["b"]["accuracy"]["r"] == 0.5 and result["metrics"]["b"]["accuracy"]["n"] == 20
    assert result["clusters"]["accuracy"] == {"a": 1, "b": 1}  # before: {"a": 1, "b": 2}
    caution = reports.different_n_caution(result)
    assert caution and "measured on different pairs (a 10, b 20)" in caution  # before: None
    same = pd.DataFrame(rows).assign(**{"a:correct": 0.9, "a:foil": 0.1})
    assert reports.different_n_caution(analysis.analyse_pairs(same, ["a", "b"], analysis.Parameters())) is None


def test_a_metric_computed_before_pair_scores_existed_is_told_apart(db):
    """A metric computed before this upgrade has no pair scores and no parameters["human_pairs"]: its human pairs
    are left out, and the report says it was computed before pair scores existed (not that the pairs were
    imported after it was computed, which is false for it)."""
    dataset = foil_dataset()
    services.import_pairs(dataset, PAIRS, "pairs.csv", pair_set="p")
    keys = services.caption_keys(dataset)
    scores = {pk: 0.5 for pk in keys.values()}
    old = {"tokenizer": "PTB", "reference_sets": ["gt_1", "gt_2"], "human_captions": services.HUMAN_LEAVE_ONE_OUT}
    services.store_scores(dataset, "bleu4", scores, source=models.Metric.Source.COMPUTED, parameters=old)
    body = json.loads(correlate("--format", "json", "--metrics", "bleu4"))
    assert body["human_pairs"]["computed_before_pair_scores"] == {"bleu4": 4}  # before: no such key
    assert body["human_pairs"]["not_scored"] == {}  # before: {"bleu4": 4}
    table = correlate("--metrics", "bleu4")
    assert "4 of them left out for bleu4: computed before pair scores existed, so not scored against those " in table
    assert "imported after" not in table
    # a metric computed with pair scores, the pairs imported later: still "imported after"
    new = {**old, "human_pairs": services.HUMAN_PAIRS_SAME_REFERENCES}
    services.store_scores(dataset, "bleu4", scores, source=models.Metric.Source.COMPUTED, parameters=new)
    later = json.loads(correlate("--format", "json", "--metrics", "bleu4"))
    assert later["human_pairs"]["not_scored"] == {"bleu4": 4}
    assert later["human_pairs"]["computed_before_pair_scores"] == {}


def test_cider_d_does_not_score_pairs_when_its_idf_corpus_has_one_video(java, db):
    """A dataset of one video: CIDEr-D's IDF would be log(1) = 0 for every n-gram (0 for both captions, a tie
    counted 1/2); its pair scores are left empty and the report says why, while BLEU-4 scores the pair."""
    dataset = foil_dataset({"v1": REFERENCES["v1"]})
    services.import_pairs(dataset, "video_id,correct,foil\nv1,gt_1,foil\n", "p.csv", pair_set="p")
    services.compute_scores(dataset, ["bleu4", "cider"])
    stored = stored_pair_scores("p")
    assert stored["cider"]["v1"] == (None, None)  # before: (0.0, 0.0)
    assert stored["bleu4"]["v1"][0] is not None
    body = json.loads(_correlate_set("p"))
    assert body["metrics"]["cider"]["accuracy"]["n"] == 0 and body["metrics"]["bleu4"]["accuracy"]["n"] == 1
    assert "not scored by cider: the video has no other reference, or the dataset has too few videos for CIDEr" in (
        reports.describe_human_pairs(body["human_pairs"])
    )
