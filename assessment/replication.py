"""Replication: how well two runs of a campaign agree on the systems (Graham, Awad & Smeaton 2018, Table 5).

The Pearson correlation of the system scores of two runs (raw means and mean z-scores), over the systems both
runs scored (matched by name), with the two-sided p-value of the t-test of r (n - 2 degrees of freedom) —
the same as ``scipy.stats.pearsonr``.
"""

import numpy as np
from scipy import stats


def pearson(x, y):
    """(r, p) of two equally long sequences; (nan, nan) with fewer than 3 values or a constant sequence."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    r = float(np.clip((dx @ dy) / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0))
    if abs(r) == 1.0:
        return r, 0.0
    t = r * np.sqrt((n - 2) / (1 - r * r))
    return r, float(2 * stats.t.sf(abs(t), n - 2))


class ReplicationError(ValueError):
    """Two runs that cannot be compared, said in the researcher's words (never a library's internals)."""


def correlate(systems_a, systems_b, names=("a", "b")):
    """Agreement of two system-score tables (columns ``system``, ``raw``, ``z``). ``r`` and ``p_value`` are None
    (JSON null) when they are undefined (fewer than 3 common systems, or constant scores); ReplicationError
    when a run has no scored systems at all."""
    for name, systems in zip(names, (systems_a, systems_b)):
        if systems is None or len(systems) == 0 or not {"system", "raw", "z"} <= set(systems.columns):
            raise ReplicationError(
                f"campaign {name!r} has no judgments yet (no system has a score): nothing to "
                "compare. Rate or import judgments first."
            )
    merged = systems_a[["system", "raw", "z"]].merge(
        systems_b[["system", "raw", "z"]], on="system", suffixes=("_a", "_b")
    )
    raw_r, raw_p = pearson(merged["raw_a"], merged["raw_b"])
    z_r, z_p = pearson(merged["z_a"], merged["z_b"])

    def finite(value):
        return None if value is None or not np.isfinite(value) else float(value)

    result = {
        "n_systems": int(len(merged)),
        "systems": merged["system"].tolist(),
        "raw": {"r": finite(raw_r), "p_value": finite(raw_p)},
        "z": {"r": finite(z_r), "p_value": finite(z_p)},
    }
    if result["raw"]["r"] is None or result["z"]["r"] is None:
        result["note"] = (
            "the correlation is undefined: it needs at least 3 systems scored by both campaigns, with "
            "scores that are not all equal"
        )
    return result
