"""A simulated crowd on a planned campaign: quality control keeps the diligent workers (each with a personal
bias and scale, and noise) and drops random clickers, always-the-same clickers and reversed scorers; the system
ranking recovers the true order, the hidden human system included."""

import pytest

from assessment import simulation
from assessment.analysis import analyse
from assessment.campaigns import create_campaign
from assessment.models import System

from .conftest import make_dataset

TRUE_QUALITY = {"human": 88, "Alpha": 76, "Beta": 64, "Gamma": 52, "Delta": 40, "Epsilon": 28}
CROWD = {"diligent": 40, "random": 10, "constant": 6, "reversed": 6}


@pytest.fixture
def crowd_campaign(db):
    dataset = make_dataset("crowd", n_videos=80, systems=("Alpha", "Beta", "Gamma", "Delta", "Epsilon"))
    campaign = create_campaign(
        name="crowd",
        dataset=dataset,
        systems=System.objects.filter(dataset=dataset, is_human=False),
        human_system=System.objects.get(dataset=dataset, is_human=True),
        seed=11,
    )
    result = simulation.simulate_campaign(campaign, CROWD, TRUE_QUALITY, seed=5, hits_per_worker=2)
    return campaign, result


def test_qc_keeps_the_diligent_and_drops_the_rest(crowd_campaign):
    campaign, crowd = crowd_campaign
    analysis = analyse(campaign)
    qc = analysis.qc.merge(crowd.workers, on="worker")
    assert (qc["n_pairs"] == 20).all()  # two HITs of 10 pairs each
    by_kind = qc.groupby("kind")["passed"].agg(["sum", "size"])
    assert by_kind.loc["diligent", "sum"] == by_kind.loc["diligent", "size"] == 40
    assert by_kind.loc["constant", "sum"] == 0
    assert by_kind.loc["reversed", "sum"] == 0
    assert by_kind.loc["random", "sum"] <= 1  # at p < 0.05 a random clicker passes 1 time in 20
    assert analysis.pass_rate == pytest.approx(qc["passed"].mean())


def test_ranking_recovers_the_true_order_with_the_hidden_human_system(crowd_campaign):
    campaign, _ = crowd_campaign
    systems = analyse(campaign).systems
    assert systems["system"].tolist() == sorted(TRUE_QUALITY, key=TRUE_QUALITY.get, reverse=True)
    assert systems.loc[systems["system"] == "human", "is_human"].item()
    # 12 quality points apart with 5,000+ judgments: every system beats every lower one
    assert systems["cluster"].tolist() == [1, 2, 3, 4, 5, 6]


def test_without_qc_the_bad_workers_blur_the_scores(crowd_campaign):
    campaign, crowd = crowd_campaign
    from assessment import loading, scoring

    frame = loading.judgments_frame(campaign)
    everyone = scoring.system_scores(scoring.caption_scores(frame, frame["worker"].unique())).set_index("system")
    kept = analyse(campaign).systems.set_index("system")
    spread = lambda table: table.loc["human", "z"] - table.loc["Epsilon", "z"]  # noqa: E731
    assert spread(kept) > spread(everyone) * 1.2


def test_a_system_without_a_quality_is_named_before_anything_is_stored(db):
    from assessment.models import Judgment

    from .conftest import small_campaign

    campaign = small_campaign(make_dataset("partial", n_videos=18), "partial")
    with pytest.raises(ValueError, match="no quality given for systems Beta, Gamma"):
        simulation.simulate_campaign(campaign, {"diligent": 2}, {"human": 80, "Alpha": 60}, seed=1)
    assert not Judgment.objects.exists()
