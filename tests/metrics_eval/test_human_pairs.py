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
import pytest
from django.core.management import call_command

from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle
from metrics_eval import loaders, models, reports, services

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


def foil_dataset():
    lines = [{"type": "video", "video_id": v} for v in REFERENCES]
    for video, refs in REFERENCES.items():
        lines += [
            {"type": "reference", "video_id": video, "reference_set": f"gt_{i + 1}", "text": text}
            for i, text in enumerate(refs)
        ]
        lines.append({"video_id": video, "system": "gt_1", "is_human": True, "sentences": [{"text": refs[0]}]})
        lines.append({"video_id": video, "system": "foil", "sentences": [{"text": FOILS[video]}]})
        if video in ALPHA:
            lines.append({"video_id": video, "system": "Alpha", "sentences": [{"text": ALPHA[video]}]})
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


def expected_accuracies():
    """Accuracy per metric counted pair by pair from pycocoevalcap's own scores: the human pairs with both
    captions against gt_2 only (one result file of the correct captions, one of the foils: the same references,
    so the same CIDEr-D IDF); the Alpha/foil pair with the stored scores' result files (each system's captions
    against all their videos' references); the v4 pair has no reference once gt_1 is out and is not counted."""
    gts = {v: REFERENCES[v][1:] for v in HUMAN_PAIRS}
    correct = direct_scores(gts, {v: REFERENCES[v][0] for v in HUMAN_PAIRS})
    foil = direct_scores(gts, {v: FOILS[v] for v in HUMAN_PAIRS})
    alpha = direct_scores({v: REFERENCES[v] for v in ALPHA}, ALPHA)
    foils = direct_scores(REFERENCES, FOILS)
    expected = {}
    for metric in METRICS:
        outcomes = [outcome(c, f) for c, f in zip(correct[metric], foil[metric])]
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
