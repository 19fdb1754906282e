"""Significance of differences between systems, the win matrix and the clustered ranking.

Source: Graham, Awad & Smeaton (PLoS ONE 2018), section "Results" (Fig. 4, the win matrix) and WMT's clusters
(Bojar et al., WMT 2016-2019 findings): for every ordered pair of systems (a, b), a one-sided Wilcoxon rank-sum
test (Mann-Whitney U, ``scipy.stats.mannwhitneyu(z_a, z_b, alternative="greater")``, SciPy's defaults: tie and
continuity corrections) on the per-caption mean z-scores; a beats b when p < alpha.

Clusters: systems are ranked by mean z; a cluster boundary lies between ranks i and i+1 exactly when every
system above it significantly beats every system below it. Systems inside one cluster are therefore not
separated by the tests.
"""

import numpy as np
import pandas as pd
from scipy import stats


def win_matrix(captions, systems):
    """p-values (DataFrame, rows a, columns b, in the order of ``systems``) of "a scores higher than b"
    from per-caption z-scores (columns ``system``, ``z``). The diagonal is NaN."""
    samples = {name: group.to_numpy(dtype=float) for name, group in captions.groupby("system")["z"]}
    p = np.full((len(systems), len(systems)), np.nan)
    for i, a in enumerate(systems):
        for j, b in enumerate(systems):
            if i != j and len(samples.get(a, ())) and len(samples.get(b, ())):
                p[i, j] = stats.mannwhitneyu(samples[a], samples[b], alternative="greater").pvalue
    return pd.DataFrame(p, index=list(systems), columns=list(systems))


def clusters(p_values, alpha=0.05):
    """Cluster number (1, 2, ...) of every system of ``p_values`` (rows in rank order, best first)."""
    beats = p_values.to_numpy() < alpha
    k = len(beats)
    cluster, numbers = 1, []
    for i in range(k):
        numbers.append(cluster)
        if i + 1 < k and beats[: i + 1, i + 1 :].all():
            cluster += 1
    return pd.Series(numbers, index=p_values.index, name="cluster")


def wins(p_values, alpha=0.05):
    """Significant wins ``[a, b, p]`` (a beats b), in rank order of a, then of b."""
    names = list(p_values.index)
    p = p_values.to_numpy()
    return [
        [names[i], names[j], float(p[i, j])]
        for i in range(len(names))
        for j in range(len(names))
        if i != j and p[i, j] < alpha
    ]
