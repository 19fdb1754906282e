"""z-scores against scipy.stats.zscore, caption and system scores against a hand computation."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assessment import scoring


def frame(rows):
    return pd.DataFrame(
        rows, columns=["worker", "item", "score", "item_type", "control_of", "caption", "system", "video"]
    )


def test_z_scores_are_scipy_zscore_with_ddof_1_per_worker():
    rng = np.random.default_rng(0)
    workers = np.repeat(np.arange(40), rng.integers(2, 60, 40))
    scores = rng.integers(0, 101, len(workers))
    data = pd.DataFrame({"worker": workers, "score": scores})
    z = scoring.standardise(data)
    for worker in np.unique(workers):
        mask = workers == worker
        np.testing.assert_allclose(z[mask], stats.zscore(scores[mask], ddof=1), rtol=1e-12)


def test_zero_variance_and_single_judgments_give_z_zero():
    data = pd.DataFrame({"worker": ["same"] * 4 + ["once"], "score": [50, 50, 50, 50, 80]})
    assert scoring.standardise(data).tolist() == [0.0] * 5


# A hand-worked example. Worker A (passed): X1 60, its repeat 40, X2 60, original 50, degraded 40: mean 50,
# sample SD sqrt(400 / 4) = 10. Worker B (passed): X1 90, X2 70, X3 100, original 80, degraded 60: mean 80,
# sample SD sqrt(1000 / 4) = sqrt(250). Worker C failed QC: its score does not count.
HAND = frame(
    [
        ("A", 1, 60, "system", -1, 11, "S1", "v1"),
        ("A", 2, 40, "repeat", 1, 11, "S1", "v1"),
        ("A", 3, 60, "system", -1, 12, "S2", "v1"),
        ("A", 4, 50, "original", 5, 13, "human", "v9"),
        ("A", 5, 40, "degraded", 4, 13, "human", "v9"),
        ("B", 1, 90, "system", -1, 11, "S1", "v1"),
        ("B", 3, 70, "system", -1, 12, "S2", "v1"),
        ("B", 6, 100, "system", -1, 14, "S1", "v2"),
        ("B", 4, 80, "original", 5, 13, "human", "v9"),
        ("B", 5, 60, "degraded", 4, 13, "human", "v9"),
        ("C", 3, 0, "system", -1, 12, "S2", "v1"),
        ("C", 7, 100, "system", -1, 15, "S3", "v3"),
    ]
)


def test_caption_scores_by_hand():
    captions = scoring.caption_scores(HAND, ["A", "B"]).set_index(["system", "video_id"])
    sb = math.sqrt(250)
    # X1: A's two showings merge first (raw 50, z 0), B gave 90 (z 10 / sqrt 250)
    assert captions.loc[("S1", "v1"), "raw"] == pytest.approx((50 + 90) / 2)
    assert captions.loc[("S1", "v1"), "z"] == pytest.approx((0 + 10 / sb) / 2)
    assert captions.loc[("S1", "v1"), "n"] == 3
    # X2: A 60 (z 1), B 70 (z -10 / sqrt 250); C's 0 is left out
    assert captions.loc[("S2", "v1"), "raw"] == pytest.approx(65)
    assert captions.loc[("S2", "v1"), "z"] == pytest.approx((1 - 10 / sb) / 2)
    assert captions.loc[("S2", "v1"), "n"] == 2
    assert captions.loc[("S1", "v2"), "z"] == pytest.approx(20 / sb)
    # the original is the human system's caption (Graham, Awad & Smeaton 2018): A 50 (z 0), B 80 (z 0)
    assert captions.loc[("human", "v9"), "raw"] == pytest.approx(65)
    assert captions.loc[("human", "v9"), "z"] == pytest.approx(0)
    assert captions.loc[("human", "v9"), "n"] == 2  # the degraded copies (40, 60) are not scored
    # degraded copies and failing workers' captions are not scored
    assert set(captions.index.get_level_values("system")) == {"S1", "S2", "human"}
    assert list(scoring.caption_scores(HAND, ["A"]).columns) == ["video_id", "system", "raw", "z", "n"]


def test_system_scores_by_hand():
    systems = scoring.system_scores(scoring.caption_scores(HAND, ["A", "B"]))
    sb = math.sqrt(250)
    assert systems["system"].tolist() == ["S1", "S2", "human"]  # sorted by z, descending
    s1, s2 = systems.iloc[0], systems.iloc[1]
    assert s1["raw"] == pytest.approx((70 + 100) / 2)
    assert s1["z"] == pytest.approx(((0 + 10 / sb) / 2 + 20 / sb) / 2)
    assert s1["n"] == 4 and s1["n_captions"] == 2
    assert s2["raw"] == pytest.approx(65) and s2["z"] == pytest.approx((1 - 10 / sb) / 2) and s2["n"] == 2
    human = systems.iloc[2]
    assert (human["raw"], human["z"], human["n"], human["n_captions"]) == (pytest.approx(65), pytest.approx(0), 2, 1)


def test_failing_workers_still_standardise_their_own_scores_only():
    # adding a failing worker's judgments changes nothing for the passing workers
    more = pd.concat([HAND, frame([("C", 1, 5, "system", -1, 11, "S1", "v1")])])
    pd.testing.assert_frame_equal(scoring.caption_scores(more, ["A", "B"]), scoring.caption_scores(HAND, ["A", "B"]))


def test_confidence_interval_is_the_t_interval_over_captions():
    captions = pd.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 2,
            "video_id": list("wxyzwx"),
            "raw": [1, 2, 3, 4, 5, 6],
            "z": [0.1, 0.3, -0.2, 0.6, 1.0, 1.0],
            "n": [1] * 6,
        }
    )
    systems = scoring.system_scores(captions)
    ci = scoring.confidence_interval(systems).set_index(systems["system"])
    z = np.array([0.1, 0.3, -0.2, 0.6])
    low, high = stats.t.interval(0.95, df=3, loc=z.mean(), scale=stats.sem(z))  # SciPy's own t interval
    assert ci.loc["a", "low"] == pytest.approx(low)
    assert ci.loc["a", "high"] == pytest.approx(high)
    assert ci.loc["b", "low"] == ci.loc["b", "high"] == pytest.approx(1.0)


def test_a_system_of_one_caption_has_no_interval():
    """Its sd was taken as 0: drawn as a point with no width, the surest system of all."""
    captions = pd.DataFrame(
        {"system": ["a", "a", "b"], "video_id": list("wxw"), "raw": [1, 2, 3], "z": [0.1, 0.5, 1.2], "n": [1] * 3}
    )
    systems = scoring.system_scores(captions)
    ci = scoring.confidence_interval(systems).set_index(systems["system"])
    assert np.isnan(ci.loc["b", "low"]) and np.isnan(ci.loc["b", "high"])
    assert np.isfinite(ci.loc["a", "low"])
