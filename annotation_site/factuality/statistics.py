"""Agreement statistics: pure functions over long DataFrames (one row per unit, annotator and value).

- Krippendorff's alpha (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011), computed by the
  ``krippendorff`` package from per-unit value counts; units with fewer than two values are not pairable and
  do not count.
- Fleiss' kappa (Fleiss, "Measuring nominal scale agreement among many raters", Psychological Bulletin 76(5),
  1971, equations 2-9): for a fixed number of ratings per unit.
- Mean pairwise rank correlation between annotators: Kendall's tau (variant ``b`` by default, as
  ``scipy.stats.kendalltau``) and Spearman's rho over the units both annotators rated.
"""

import math
from dataclasses import asdict, dataclass, field
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats

MIN_UNITS = 30  # fewer pairable units than this: the report warns that alpha is unreliable


@dataclass
class Alpha:
    alpha: float | None
    units: int  # pairable units (two values or more)
    annotators: int
    values: int  # pairable values
    level: str
    warnings: list = field(default_factory=list)

    def as_dict(self):
        return asdict(self)


def krippendorff_alpha(
    frame, *, unit="unit", annotator="annotator", value="value", level="nominal", value_domain=None, min_units=MIN_UNITS
):
    """Krippendorff's alpha of a long frame at ``level`` (nominal, ordinal, interval, ratio).

    ``value_domain``: the ordered possible values (ordinal/interval: e.g. 1..5); by default the values seen.
    Alpha is None when it is undefined: no pairable unit, or a single value throughout (no variation to agree
    on). Warnings say when it rests on fewer than ``min_units`` units or on one annotator."""
    frame = frame[[unit, annotator, value]].dropna()
    counts = frame.groupby([unit, value]).size().unstack(fill_value=0)
    if value_domain is not None:
        unknown = set(counts.columns) - set(value_domain)
        if unknown:
            raise ValueError(f"values outside the domain: {sorted(unknown)}")
        counts = counts.reindex(columns=list(value_domain), fill_value=0)
    else:
        counts = counts.reindex(columns=sorted(counts.columns))
    per_unit = counts.sum(axis=1)
    pairable = counts[per_unit >= 2]
    units = int(len(pairable))
    n_annotators = int(frame.loc[frame[unit].isin(pairable.index), annotator].nunique())
    result = Alpha(alpha=None, units=units, annotators=n_annotators, values=int(pairable.values.sum()), level=level)
    if units == 0:
        result.warnings.append("alpha is undefined: no unit was judged by two annotators or more")
        return result
    seen = (pairable.sum(axis=0) > 0).sum()
    if seen < 2:
        result.warnings.append("alpha is undefined: every judgment has the same value (no variation)")
        return result
    result.alpha = float(
        krippendorff.alpha(
            value_counts=pairable.to_numpy(dtype=float), value_domain=list(pairable.columns), level_of_measurement=level
        )
    )
    if units < min_units:
        result.warnings.append(
            f"alpha rests on only {units} units (fewer than {min_units}): treat it as a rough indication"
        )
    return result


def reliability_frame(matrix, units=None):
    """A coders x units matrix (NaN: no value) as the long frame the functions here take."""
    rows = []
    for coder, row in enumerate(np.asarray(matrix, dtype=float)):
        for index, value in enumerate(row):
            if not math.isnan(value):
                rows.append((units[index] if units is not None else index, coder, value))
    return pd.DataFrame(rows, columns=["unit", "annotator", "value"])


def fleiss_kappa(table):
    """Fleiss' kappa of a subjects x categories table of counts, every row summing to the same number of
    ratings n >= 2 (Fleiss 1971). None when expected agreement is 1 (a single category used)."""
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError("need a non-empty subjects x categories table")
    n = table.sum(axis=1)
    if not np.allclose(n, n[0]) or n[0] < 2:
        raise ValueError("every subject needs the same number (>= 2) of ratings")
    n = n[0]
    subjects = table.shape[0]
    p_j = table.sum(axis=0) / (subjects * n)
    p_i = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    p_bar, p_e = p_i.mean(), (p_j**2).sum()
    if math.isclose(p_e, 1.0):
        return None
    return float((p_bar - p_e) / (1 - p_e))


@dataclass
class Fleiss:
    kappa: float | None
    units: int
    raters: int  # ratings per unit
    dropped: int  # units left out for having another number of ratings


def fleiss_from_frame(frame, *, unit="unit", value="value", categories=None):
    """Fleiss' kappa of a long frame. Fleiss' kappa needs the same number of ratings for every unit: units
    with the most common number are used, the others are left out (and counted in ``dropped``)."""
    frame = frame[[unit, value]].dropna()
    counts = frame.groupby([unit, value]).size().unstack(fill_value=0)
    if categories is not None:
        counts = counts.reindex(columns=list(categories), fill_value=0)
    sizes = counts.sum(axis=1)
    sizes = sizes[sizes >= 2]
    if sizes.empty:
        return Fleiss(kappa=None, units=0, raters=0, dropped=int(len(counts)))
    modal = int(sizes.value_counts().sort_index(ascending=False).idxmax())
    used = counts.loc[sizes[sizes == modal].index]
    return Fleiss(
        kappa=fleiss_kappa(used.to_numpy()), units=int(len(used)), raters=modal, dropped=int(len(counts) - len(used))
    )


@dataclass
class PairwiseCorrelation:
    kendall_tau: float | None
    spearman_rho: float | None
    pairs: int  # annotator pairs with enough common units and some variation
    kendall_variant: str = "b"
    min_common: int = 3


def pairwise_correlation(
    frame, *, unit="unit", annotator="annotator", value="value", kendall_variant="b", min_common=3
):
    """Mean over annotator pairs of Kendall's tau and Spearman's rho between their values on the units both
    rated (at least ``min_common``). Pairs where either side is constant (correlation undefined) are skipped."""
    table = frame.pivot_table(index=unit, columns=annotator, values=value, aggfunc="first")
    taus, rhos = [], []
    for a, b in combinations(table.columns, 2):
        both = table[[a, b]].dropna()
        if len(both) < min_common or both[a].nunique() < 2 or both[b].nunique() < 2:
            continue
        tau = stats.kendalltau(both[a], both[b], variant=kendall_variant).statistic
        rho = stats.spearmanr(both[a], both[b]).statistic
        if not (math.isnan(tau) or math.isnan(rho)):
            taus.append(float(tau))
            rhos.append(float(rho))
    return PairwiseCorrelation(
        kendall_tau=float(np.mean(taus)) if taus else None,
        spearman_rho=float(np.mean(rhos)) if rhos else None,
        pairs=len(taus),
        kendall_variant=kendall_variant,
        min_common=min_common,
    )
