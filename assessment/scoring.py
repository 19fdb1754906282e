"""Scores of captions and systems from Direct Assessment judgments (pure functions over DataFrames).

Source: Graham, Awad & Smeaton (PLoS ONE 2018), section "Results", following Graham et al. (2017):

1. Standardise: each worker's raw scores become z-scores with the worker's own mean and *sample* standard
   deviation (ddof=1) over all the worker's scores in the campaign (every item type), removing personal biases
   (a harsh or lenient worker, a narrow or wide use of the scale). Zero variance (every score the same, or a
   single judgment): the worker's z-scores are all 0, as the worker expressed no preference.
2. Keep only workers who passed quality control.
3. Average per worker per caption first (so a worker's repeat of an item counts once, merged with the first
   showing), then per caption across workers, then per system across its captions.

Judgments of system items, their repeats and of originals count towards scores; degraded copies never do. An
original is an unmodified caption of the human caption set, so its judgments are the human system's scores: in
the paper the human set A is "an additional system" whose captions are the originals of the original/degraded
pairs, and Table 4 ranks it among the systems (Human-b, 88.2 %, z 0.895). ``n`` counts judgments.

Input frame columns: ``worker``, ``score``, ``item_type``, ``caption``, ``system``, ``video``.
"""

import numpy as np
import pandas as pd

SCORED_TYPES = ("system", "repeat", "original")
CAPTION_COLUMNS = ["video_id", "system", "raw", "z", "n"]
SYSTEM_COLUMNS = ["system", "raw", "z", "n"]


def standardise(frame):
    """z-score of every judgment within its worker (sample SD, ddof=1; zero variance gives 0)."""
    scores = frame["score"].astype(float)
    grouped = scores.groupby(frame["worker"].to_numpy())
    mean = grouped.transform("mean")
    sd = grouped.transform("std")  # ddof=1; NaN for a single judgment
    z = (scores - mean) / sd
    return z.where(sd > 0, 0.0).rename("z")


def caption_scores(frame, passing_workers):
    """Per caption: video_id, system, raw (mean of per-worker means, 0-100), z, n (judgments)."""
    if "z" not in frame:
        frame = frame.assign(z=standardise(frame))
    keep = frame["item_type"].isin(SCORED_TYPES) & frame["worker"].isin(np.asarray(passing_workers))
    scored = frame.loc[keep, ["worker", "caption", "video", "system", "score", "z"]]
    per_worker = scored.groupby(["caption", "worker"], sort=False).agg(
        raw=("score", "mean"), z=("z", "mean"), n=("score", "size")
    )
    per_caption = per_worker.groupby(level="caption", sort=False).agg(
        raw=("raw", "mean"), z=("z", "mean"), n=("n", "sum")
    )
    names = scored.drop_duplicates("caption").set_index("caption")[["video", "system"]]
    per_caption = per_caption.join(names).rename(columns={"video": "video_id"})
    per_caption["n"] = per_caption["n"].astype(int)
    per_caption = per_caption.sort_values(["system", "video_id"], kind="stable")
    return per_caption[CAPTION_COLUMNS].reset_index(drop=True)


def system_scores(captions):
    """Per system from caption scores: raw (mean over captions), z, n (judgments), n_captions, z_sd; sorted by
    z descending."""
    grouped = captions.groupby("system", sort=False)
    systems = grouped.agg(
        raw=("raw", "mean"), z=("z", "mean"), n=("n", "sum"), n_captions=("z", "size"), z_sd=("z", "std")
    ).reset_index()
    systems["n"] = systems["n"].astype(int)
    systems = systems.sort_values(["z", "system"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return systems


def confidence_interval(systems, level=0.95):
    """Student's t interval of each system's mean z over its captions: z +- t(n - 1) * sd / sqrt(n), for n
    captions. Undefined (NaN) for a system with one caption: its sd was taken as 0, which drew it as the most
    precise system of all; and the normal quantile (1.96) made a system of few captions look far surer than it
    is (t(1) is 12.7). For the hundreds of captions of a campaign the two agree."""
    from scipy import stats

    n = systems["n_captions"].astype(float)
    q = stats.t.ppf(0.5 + level / 2, df=(n - 1).where(n >= 2))
    half = q * systems["z_sd"] / np.sqrt(n)
    return pd.DataFrame({"low": systems["z"] - half, "high": systems["z"] + half})
