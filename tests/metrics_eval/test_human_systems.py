"""Human systems in metric correlations (issue #9): a human system's captions are references, so they are never
scored against the reference they are (computed metrics score them leave-one-out against the other references),
and every correlation leaves them out unless the researcher includes them explicitly; the report says which.

On the code before this change a human system made from reference set gt_1 got BLEU-4 = METEOR = 1.0 and the DA
correlation counted its captions in n."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from scipy import stats as scipy_stats

from annotation_site.corpus.models import Reference, System
from assessment import campaigns, results, simulation
from metrics_eval import human, loaders, reports, services, text_metrics
from tests.assessment.conftest import make_dataset, sentence

from .conftest import stored_scores

pytestmark = pytest.mark.django_db


def test_human_captions_are_scored_leave_one_out(java, tiny_dataset):
    """The human system made of gt_1 (one caption per gt_1 reference) is scored against gt_2 only: exactly what
    pycocoevalcap gives for those captions against the gt_2 references; videos without a second reference leave
    their human caption unscored. The system captions keep every reference."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    campaigns.human_system_from_references(tiny_dataset, "gt_1")
    out = io.StringIO()
    call_command("metric_scores", "--dataset", "tiny", "--compute", "bleu4,meteor", stdout=out, stderr=io.StringIO())
    # (said "2 captions have no reference": they have one, the one they are)
    assert "(2 captions not scored: no reference to be scored against; 2 of them are human captions whose video " in (
        out.getvalue()
    )
    result = services.compute_scores(tiny_dataset, ["bleu4", "meteor"])
    assert result["captions"] == 16 and result["scored"] == {"bleu4": 14, "meteor": 14}
    assert result["human"] == {"captions": 4, "references_left_out": 4, "without_other_references": 2}
    assert result["pairs_with_human_captions"] == {"pairs": 0, "without_other_references": 0}
    # the job's message (the page) said "scored 16 captions (bleu4 14, meteor 14)"; it says what was not scored
    assert services.computed_summary(result) == (
        "bleu4 14, meteor 14 of 16 captions (2 captions not scored: no reference to be scored against; 2 of them "
        "are human captions whose video has no other reference)"
    )

    bleu4, meteor = stored_scores(tiny_dataset, "bleu4"), stored_scores(tiny_dataset, "meteor")
    human_keys = {key for key in bleu4 if key[1] == "gt_1"}
    assert human_keys == {("vid-a", "gt_1"), ("vid-d", "gt_1")}  # vid-b and vid-c have no other reference
    for key in human_keys:
        assert bleu4[key] < 1.0 and meteor[key] < 1.0  # was 1.0 and 1.0: scored against itself

    refs = {(r.video.external_id, r.reference_set): r.text for r in Reference.objects.select_related("video")}
    videos = sorted(video for video, _ in human_keys)
    gts = PTBTokenizer().tokenize({v: [{"caption": refs[(v, "gt_2")]}] for v in videos})
    res = PTBTokenizer().tokenize({v: [{"caption": refs[(v, "gt_1")]}] for v in videos})
    _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    scorer = Meteor()
    _, meteor_direct = scorer.compute_score(gts, res)
    for video, b, m in zip(gts, bleu[3], meteor_direct):
        assert bleu4[(video, "gt_1")] == pytest.approx(float(b), abs=1e-12)
        assert meteor[(video, "gt_1")] == pytest.approx(float(m), abs=1e-12)
    # a system caption still sees both references: vid-a / Alpha is scored as before this change
    assert len([k for k in bleu4 if k[1] != "gt_1"]) == 12
    assert tiny_dataset.metrics.get(name="bleu4").parameters["human_captions"] == "leave-one-out"


def test_self_references_by_set_name_or_text():
    refs = [("gt_1", "A man  rides a horse."), ("gt_2", "Someone on a horse."), ("gt_3", "a man rides a horse.")]
    assert text_metrics.self_references("gt_1", "A man rides a horse.", refs) == {0, 2}
    assert text_metrics.self_references("people", "someone ON a horse.", refs) == {1}
    assert text_metrics.self_references("people", "a dog", refs) == frozenset()


def test_a_reference_in_other_orthography_is_the_same_text():
    """FactVC's annotations are tokenised ("screen : red ,") where a human system's captions may be written as
    usual ("screen: red,"): the PTB tokenizer makes them identical tokens, so scored against that reference the
    caption would get BLEU-4 of 1.0. On the old code (lower case, whitespace collapsed) none of these was found."""
    reference = "three wide vertical stripes fill the screen : red on the left , blue on the right ."
    refs = [("gt_1", "a dog runs ."), ("gt_2", reference), ("gt_3", "Do n't stop the ( red ) car !")]
    caption = "Three wide vertical stripes fill the screen: red on the left, blue on the right."
    assert text_metrics.self_references("annotators", caption, refs) == {1}
    assert text_metrics.self_references("annotators", 'Don\'t stop the "red" car!', refs) == {2}
    # NFKC: full-width letters and a ligature are the letters they stand for
    assert text_metrics.self_references("annotators", "Ａ dog runs", refs) == {0}
    assert text_metrics.normalise("ﬁlm") == text_metrics.normalise("film")
    # other words are another text, however they are punctuated
    assert text_metrics.self_references("annotators", "three wide stripes fill the screen.", refs) == frozenset()
    # a caption with no letters or digits is no reference's text
    assert text_metrics.self_references("annotators", "...", [*refs, ("gt_4", "!")]) == frozenset()


def frame_with_human():
    return pd.DataFrame(
        {
            "caption_id": [1, 2, 3, 4, 5, 6],
            "video_id": ["a", "a", "a", "b", "b", "b"],
            "system": ["S1", "S2", "H", "S1", "S2", "H"],
            "is_human": [False, False, True, False, False, True],
            "z": [0.1, -0.2, 0.9, 0.3, -0.5, 1.1],
            "bleu4": [0.2, 0.1, 1.0, 0.3, 0.05, 1.0],
            "emscore": [0.5, 0.4, 0.7, 0.6, 0.3, 0.8],
        }
    )


def test_selection_leaves_human_captions_out_unless_included():
    frame, description = human.select_human_systems(frame_with_human(), ["bleu4", "emscore"])
    assert list(frame["system"]) == ["S1", "S2", "S1", "S2"] and "is_human" not in frame
    assert description == {
        "systems": ["H"],
        "captions": 2,
        "included": False,
        "metrics_with_them": [],
        "metrics_without_them": [],
        "metrics_fewer_references": [],
        "metrics_unscored": [],
    }
    frame, description = human.select_human_systems(
        frame_with_human(), ["bleu4", "emscore"], include=True, valid={"emscore"}
    )
    assert len(frame) == 6 and frame["emscore"].notna().sum() == 6
    assert frame["bleu4"].notna().sum() == 4  # not known to be leave-one-out: the human captions' scores dropped
    assert description["included"] and description["metrics_with_them"] == ["emscore"]
    assert description["metrics_without_them"] == ["bleu4"]
    assert "left out for bleu4" in reports.describe_human_systems(description)


def test_a_human_system_no_metric_scored_is_not_said_to_be_included():
    """Leave-one-out leaves a human caption unscored where its video has no other reference (the demo's single
    reference set): asked to include such a system, the report said it was included and scored by every metric,
    while n did not change. Now it says that none of its captions has a score, and a metric that scored none of
    them is named apart from those that did."""
    frame = frame_with_human()
    frame.loc[frame["is_human"], "bleu4"] = np.nan
    valid = {"bleu4", "emscore"}
    _, description = human.select_human_systems(frame, ["bleu4"], include=True, valid=valid, fewer_references={"bleu4"})
    assert not description["included"]
    assert (description["metrics_with_them"], description["metrics_unscored"]) == ([], ["bleu4"])
    sentence = reports.describe_human_systems(description)
    assert sentence.startswith("Human system H (2 captions) asked for but not included: none of its captions has a ")
    assert "score of bleu4" in sentence and "included," not in sentence
    _, both = human.select_human_systems(
        frame, ["bleu4", "emscore"], include=True, valid=valid, fewer_references={"bleu4"}
    )
    assert both["included"] and both["metrics_with_them"] == ["emscore"] and both["metrics_unscored"] == ["bleu4"]
    assert "leave-one-out" not in reports.describe_human_systems(both)
    # asked for, but no metric may score them: left out of the frame (counts, hash) and the sentence says why
    kept, none = human.select_human_systems(frame_with_human(), ["bleu4"], include=True, valid=set())
    assert not none["included"] and len(kept) == 4 and set(kept["system"]) == {"S1", "S2"}
    assert reports.describe_human_systems(none) == (
        "Human system H (2 captions) asked for but not included: bleu4 is not known to score its captions "
        "leave-one-out or without references."
    )
    assert reports.describe_human_systems(both).endswith(
        "scored without references by emscore; not scored by bleu4 (none of its captions has a score of it)."
    )


def test_an_included_human_system_scored_leave_one_out_is_said_to_be_on_another_scale():
    """Human captions scored leave-one-out see one reference fewer (n - 1) than the system captions (n); BLEU,
    METEOR and ROUGE-L tend to score higher with more references, CIDEr-D averages over them with another IDF:
    either way the human scores are not comparable with the systems'. (The sentence said all four score higher
    with more references, "on a lower scale": false for CIDEr-D, and BLEU's brevity penalty can go either way.)"""
    frame = frame_with_human().assign(meteor=[0.3, 0.2, 0.25, 0.35, 0.1, 0.3])
    _, description = human.select_human_systems(
        frame,
        ["bleu4", "meteor", "emscore"],
        include=True,
        valid={"bleu4", "meteor", "emscore"},
        fewer_references={"bleu4", "meteor"},
    )
    assert description["metrics_with_them"] == ["bleu4", "meteor", "emscore"]
    assert description["metrics_fewer_references"] == ["bleu4", "meteor"]
    sentence = reports.describe_human_systems(description)
    assert sentence.startswith("Human system H (2 captions) included, scored leave-one-out against the other ")
    assert "by bleu4, meteor (never the reference a caption is): one reference fewer than the system captions" in (
        sentence
    )
    assert "(n - 1 of a video's n); BLEU, METEOR and ROUGE-L tend to score higher with more references, CIDEr-D " in (
        sentence
    )
    assert "averages over them with another IDF, and either way the human captions' scores" in sentence
    assert "are not comparable with the systems'" in sentence and "lower scale" not in sentence
    assert sentence.endswith("; scored without references by emscore.")
    _, free_only = human.select_human_systems(frame, ["emscore"], include=True, valid={"emscore"})
    assert (
        reports.describe_human_systems(free_only)
        == "Human system H (2 captions) included, scored without references by emscore."
    )


def correlate(*args):
    out = io.StringIO()
    call_command("correlate", *args, "--format", "json", "--resamples", "200", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


@pytest.fixture
def reference_campaign(java):
    """A DA campaign whose human system is reference set gt_1 (the dataset also has gt_2), judged by the
    simulated crowd; BLEU-4 and METEOR computed by the platform."""
    dataset = make_dataset("da-refs", n_videos=24, human=None, references="gt_1")
    rng = np.random.default_rng(3)
    Reference.objects.bulk_create(
        [Reference(video=v, reference_set="gt_2", text=sentence(rng, 9)) for v in dataset.videos.all()]
    )
    human_system = campaigns.human_system_from_references(dataset, "gt_1")
    campaign = campaigns.create_campaign(
        name="da-refs",
        dataset=dataset,
        human_system=human_system,
        systems=System.objects.filter(dataset=dataset, is_human=False),
        hit_size=20,
        pairs_per_hit=3,
        repeats_per_hit=2,
        min_control_distance=5,
        qc_min_pairs=6,
        seed=7,
    )
    simulation.simulate_campaign(
        campaign, {"diligent": 12}, {"gt_1": 85, "Alpha": 70, "Beta": 50, "Gamma": 45}, seed=5, hits_per_worker=3
    )
    services.compute_scores(dataset, ["bleu4", "meteor"])
    return campaign


def test_da_correlation_leaves_the_human_system_out_by_default(reference_campaign):
    captions = results.caption_scores(reference_campaign)
    system_captions = captions.loc[~captions["is_human"]]
    assert captions["is_human"].any() and len(system_captions) < len(captions)
    bleu = stored_scores(reference_campaign.dataset, "bleu4")
    metric = np.array([bleu[(v, s)] for v, s in zip(system_captions["video_id"], system_captions["system"])])

    default = correlate("--campaign", "da-refs", "--human", "da", "--metrics", "bleu4,meteor")
    cell = default["metrics"]["bleu4"]["z"]
    assert cell["n"] == len(system_captions)  # was len(captions): the human captions were counted
    assert cell["r"] == pytest.approx(scipy_stats.pearsonr(system_captions["z"], metric)[0])
    assert default["human_systems"]["systems"] == ["gt_1"] and not default["human_systems"]["included"]
    system_level = correlate("--campaign", "da-refs", "--human", "da", "--metrics", "bleu4", "--level", "system")
    assert system_level["metrics"]["bleu4"]["z"]["n"] == 3

    included = correlate("--campaign", "da-refs", "--human", "da", "--metrics", "bleu4,meteor", "--include-human")
    assert included["report"] != default["report"]
    assert included["human_systems"]["included"]
    assert included["human_systems"]["metrics_with_them"] == ["bleu4", "meteor"]
    assert included["metrics"]["bleu4"]["z"]["n"] == len(captions)
    human_bleu = [bleu[(v, "gt_1")] for v in captions.loc[captions["is_human"], "video_id"]]
    assert max(human_bleu) < 1.0  # leave-one-out against gt_2, never against itself
    everything = np.array([bleu[(v, s)] for v, s in zip(captions["video_id"], captions["system"])])
    assert included["metrics"]["bleu4"]["z"]["r"] == pytest.approx(scipy_stats.pearsonr(captions["z"], everything)[0])
    system_level = correlate(
        "--campaign", "da-refs", "--human", "da", "--metrics", "bleu4", "--level", "system", "--include-human"
    )
    assert system_level["metrics"]["bleu4"]["z"]["n"] == 4


def test_api_and_page_take_include_human(reference_campaign, staff_client):
    dataset = reference_campaign.dataset.name
    response = staff_client.post(
        f"/api/metrics/datasets/{dataset}/correlate/",
        {"human": "da", "campaign": "da-refs", "metrics": ["bleu4"], "resamples": 100, "include_human": True},
        content_type="application/json",
    )
    assert response.status_code == 201 and response.json()["human_systems"]["included"]
    page = staff_client.get("/metrics/campaigns/da-refs/?resamples=100")
    assert b"Human system gt_1" in page.content and b"left out" in page.content
    page = staff_client.get("/metrics/campaigns/da-refs/?resamples=100&include_human=on")
    assert b"included, scored leave-one-out" in page.content
    assert b"one reference fewer than the system captions" in page.content
    assert b'name="include_human"' in page.content


def test_loaders_mark_human_captions(tiny_dataset):
    campaigns.human_system_from_references(tiny_dataset, "gt_2")
    frame = loaders.captions(tiny_dataset)
    assert frame.loc[frame["is_human"], "system"].unique().tolist() == ["gt_2"]
    assert (~frame["is_human"]).sum() == 12
