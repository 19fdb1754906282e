"""Numeric core of the correlation engine: statistics computed row by row over 2-D arrays.

Every function takes arrays of shape (rows, items) - a 1-D array is one row - where NaN marks a missing value
(an item missing on either side is left out of that row). Rows are independent: they are the groups of a
grouped correlation (one row per video or per system), the resamples of a bootstrap, or the permutations of a
permutation test, so one vectorised call serves them all.

Definitions (the tests check each against SciPy or a hand-counted example):

- Pearson's r: the sample correlation coefficient (two-pass, centred sums).
- Spearman's rho: Pearson's r of the average ranks (ties get the mean of the ranks they span).
- Pair counts for n items: C concordant, D discordant, T_h tied only in the human scores, T_m tied only in the
  metric scores, T_hm tied in both (Deutsch, Foster & Freitag 2023, "Ties Matter: Meta-Evaluating Modern Metrics
  with Pairwise Accuracy and Tie Calibration", EMNLP; the same sufficient statistics as ``TauSufficientStats``
  in google-research/mt-metrics-eval).
- Kendall tau-b = (C - D) / sqrt((C + D + T_h) (C + D + T_m))  (Kendall 1945; scipy ``variant='b'``).
- Kendall tau-c = 2 (C - D) / (n^2 (m - 1) / m), m = min(distinct human values, distinct metric values)
  (Stuart 1953; scipy ``variant='c'``).
- Pairwise accuracy with ties, acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm)  (Deutsch et al. 2023):
  a pair counts as correct when the metric orders it like the humans or ties it where they tie.
  With ``epsilon`` > 0 the metric scores of a pair count as tied when they differ by at most epsilon
  (the tie calibration of Deutsch et al. 2023).
"""

import functools
from dataclasses import dataclass

import numpy as np

#: Cells of the (rows x block x items) comparison cubes built at once; bounds the memory of pair counting.
MAX_CELLS = 1 << 22


def as_rows(values):
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[None, :]
    if values.ndim != 2:
        raise ValueError("expected a 1-D or 2-D array")
    return values


def joint(x, y):
    """Both arrays as rows, each with NaN wherever either is missing, and the mask of present items."""
    x, y = as_rows(x), as_rows(y)
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {x.shape} and {y.shape}")
    present = ~(np.isnan(x) | np.isnan(y))
    return np.where(present, x, np.nan), np.where(present, y, np.nan), present


def _constant(values, present):
    """Per row: True where the present values do not differ (none or one of them included): such a row has no
    defined correlation. A row of no items is constant too (NumPy's maximum of nothing would be an error)."""
    if values.shape[1] == 0:
        return np.ones(values.shape[0], dtype=bool)
    with np.errstate(invalid="ignore"):
        high = np.nanmax(np.where(present, values, -np.inf), axis=1)
        low = np.nanmin(np.where(present, values, np.inf), axis=1)
    return ~(high > low)


def pearson_rows(x, y):
    """Pearson's r per row, and the number of items used. NaN where undefined (n < 2 or a constant side)."""
    x, y, present = joint(x, y)
    n = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(present, x - np.nansum(x, axis=1, keepdims=True) / n[:, None], 0.0)
        dy = np.where(present, y - np.nansum(y, axis=1, keepdims=True) / n[:, None], 0.0)
        r = (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    undefined = (n < 2) | _constant(x, present) | _constant(y, present)
    r = np.clip(np.where(undefined, np.nan, r), -1.0, 1.0)
    return r, n


def ranks_rows(x):
    """Average ranks (1-based) within each row; NaN stays NaN and takes no rank."""
    x = as_rows(x)
    n = x.shape[1]
    order = np.argsort(x, axis=1, kind="stable")  # NaN sorts last
    ordered = np.take_along_axis(x, order, axis=1)
    positions = np.broadcast_to(np.arange(n), x.shape)
    starts = np.ones(x.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones(x.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, positions, n)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(x.shape)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return np.where(np.isnan(x), np.nan, ranks)


def spearman_rows(x, y):
    """Spearman's rho per row (Pearson's r of the average ranks of the jointly present items)."""
    x, y, _ = joint(x, y)
    return pearson_rows(ranks_rows(x), ranks_rows(y))


@dataclass
class PairCounts:
    """Pair statistics per row (arrays of shape (rows,))."""

    con: np.ndarray
    dis: np.ndarray
    ties_human: np.ndarray  # tied only in the human scores
    ties_metric: np.ndarray  # tied only in the metric scores
    ties_both: np.ndarray
    n: np.ndarray  # items present
    classes: np.ndarray  # min(distinct human values, distinct metric values), for tau-c

    @property
    def pairs(self):
        return self.con + self.dis + self.ties_human + self.ties_metric + self.ties_both


def _distinct(values, present):
    ordered = np.sort(np.where(present, values, np.nan), axis=1)
    changes = np.ones(ordered.shape, dtype=bool)
    changes[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return (changes & ~np.isnan(ordered)).sum(axis=1)


def _blocks(rows, items):
    """Yield (row slice, item slice) blocks whose comparison cubes stay within MAX_CELLS."""
    per_row = max(1, items * items)
    row_step = max(1, MAX_CELLS // per_row)
    if row_step > 1 or items * items <= MAX_CELLS:
        for r0 in range(0, rows, row_step):
            yield slice(r0, min(rows, r0 + row_step)), slice(0, items)
        return
    item_step = max(1, MAX_CELLS // max(1, items))
    for r0 in range(rows):
        for i0 in range(0, items, item_step):
            yield slice(r0, r0 + 1), slice(i0, min(items, i0 + item_step))


#: Rows with more items than this use the sort-based count (epsilon 0), which is O(n log^2 n).
SORTED_FROM = 300


def _tied_pairs(*columns):
    """Pairs of items equal in all the given columns: sum over groups of t (t - 1) / 2."""
    _, sizes = np.unique(np.stack(columns, axis=1), axis=0, return_counts=True)
    return int((sizes * (sizes - 1) // 2).sum())


def strict_inversions(values):
    """Pairs i < j with values[i] > values[j], by a bottom-up merge sort vectorised over the runs of each pass
    (each element of a right run counts the elements of its left run that exceed it)."""
    _, ranks = np.unique(values, return_inverse=True)
    n = len(ranks)
    if n < 2:
        return 0
    size = 1 << (n - 1).bit_length()
    sentinel = int(ranks.max()) + 1
    a = np.concatenate([ranks.astype(np.int64), np.full(size - n, sentinel, dtype=np.int64)])
    spacing = sentinel + 1
    total, width = 0, 1
    while width < size:
        runs = a.reshape(-1, 2 * width)
        offsets = (np.arange(len(runs), dtype=np.int64) * spacing)[:, None]
        left = (runs[:, :width] + offsets).ravel()
        right = (runs[:, width:] + offsets).ravel()
        not_greater = np.searchsorted(left, right, side="right") - np.repeat(np.arange(len(runs)) * width, width)
        total += int((width - not_greater).sum())
        a = np.sort(runs, axis=1).ravel()
        width *= 2
    return total


def _pair_counts_sorted(h, m, epsilon=0.0):
    """Exact pair counts of one row without comparing every pair (Knight 1966): after sorting by (h, m), the
    discordant pairs are the strict inversions of m; ties come from group sizes. With epsilon > 0 the discordant
    pairs (h_i < h_j, m_i - m_j > epsilon) are the weighted inversions of the metric ranks against their
    thresholds (margin_thresholds) and the metric ties within epsilon come from window_ties, all with unit
    weights (integers, exact)."""
    order = np.lexsort((m, h))
    n = len(h)
    if epsilon:
        values, rm = np.unique(m, return_inverse=True)
        rm = rm.ravel()
        rh = np.unique(h, return_inverse=True)[1].ravel()
        up, _ = margin_thresholds(values, epsilon)
        ones = np.ones((n, 1))
        dis = int(weighted_inversions(rm[order], up[rm][order], ones)[0])
        ties_m, ties_both = (int(t[0]) for t in window_ties(ones, rh, m, epsilon))
        ties_h = _tied_pairs(h)
    else:
        dis = strict_inversions(m[order])
        ties_h, ties_m, ties_both = _tied_pairs(h), _tied_pairs(m), _tied_pairs(h, m)
    untied = n * (n - 1) // 2 - ties_h - ties_m + ties_both
    return untied - dis, dis, ties_h - ties_both, ties_m - ties_both, ties_both


def pair_counts_rows(h, m, epsilon=0.0):
    """Concordant/discordant/tied pair counts per row, comparing every pair of present items once (rows longer
    than SORTED_FROM items are counted by sorting instead)."""
    h, m, present = joint(h, m)
    rows, items = h.shape
    counts = {key: np.zeros(rows, dtype=np.int64) for key in ("con", "dis", "th", "tm", "thm")}
    long_rows = np.flatnonzero(present.sum(axis=1) > SORTED_FROM)
    for row in long_rows:
        keep = present[row]
        for key, value in zip(
            ("con", "dis", "th", "tm", "thm"), _pair_counts_sorted(h[row, keep], m[row, keep], epsilon)
        ):
            counts[key][row] = value
    short = np.ones(rows, dtype=bool)
    short[long_rows] = False
    j = np.arange(items)
    for rs, block in _blocks(rows, items):
        if not short[rs].any():
            continue
        i = j[block]
        later = (j[None, :] > i[:, None])[None, :, :]  # each unordered pair once
        valid = later & present[rs, block, None] & present[rs, None, :] & short[rs, None, None]
        dh = h[rs, block, None] - h[rs, None, :]
        dm = m[rs, block, None] - m[rs, None, :]
        with np.errstate(invalid="ignore"):
            tie_h = dh == 0
            tie_m = np.abs(dm) <= epsilon
            agree = (dh * dm) > 0
        counts["thm"][rs] += (valid & tie_h & tie_m).sum(axis=(1, 2))
        counts["th"][rs] += (valid & tie_h & ~tie_m).sum(axis=(1, 2))
        counts["tm"][rs] += (valid & ~tie_h & tie_m).sum(axis=(1, 2))
        untied = valid & ~tie_h & ~tie_m
        counts["con"][rs] += (untied & agree).sum(axis=(1, 2))
        counts["dis"][rs] += (untied & ~agree).sum(axis=(1, 2))
    classes = np.minimum(_distinct(h, present), _distinct(m, present))
    return PairCounts(
        counts["con"], counts["dis"], counts["th"], counts["tm"], counts["thm"], present.sum(axis=1), classes
    )


def tau_b(c):
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (c.con - c.dis) / np.sqrt((c.con + c.dis + c.ties_human) * (c.con + c.dis + c.ties_metric))
    return np.where(np.isfinite(value), value, np.nan)


def tau_c(c):
    n = c.n.astype(float)
    m = c.classes.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 2.0 * (c.con - c.dis) / (n * n * (m - 1.0) / m)
    return np.where(np.isfinite(value) & (m > 1), value, np.nan)


def accuracy(c):
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (c.con + c.ties_both) / c.pairs
    return np.where(c.pairs > 0, value, np.nan)


# --- exact pair counts without comparing every pair (weighted: one column per resample) ----------------------


def margin_thresholds(values: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """For sorted distinct ``values``: ``up[k]``, the first index u with values[u] - values[k] > epsilon, and
    ``low[k]``, the first index u with values[k] - values[u] <= epsilon, both by the very float subtraction
    |m_i - m_j| <= epsilon uses (a search on values +- epsilon, then corrected where rounding differs). Two metric
    scores of distinct-value ranks a <= b are then tied within epsilon exactly when b < up[a]."""
    values = np.asarray(values, dtype=float)
    k = len(values)
    index = np.arange(k)
    up = np.searchsorted(values, values + epsilon, side="right")
    low = np.searchsorted(values, values - epsilon, side="left")
    while True:  # rounding can put the search one place off: move until the exact predicate holds
        under = (up < k) & ~(values[np.minimum(up, k - 1)] - values > epsilon)
        over = (up > index + 1) & (values[np.maximum(up - 1, 0)] - values > epsilon)
        low_over = (low < index) & ~(values - values[np.minimum(low, k - 1)] <= epsilon)
        low_under = (low > 0) & (values - values[np.maximum(low - 1, 0)] <= epsilon)
        if not (under.any() or over.any() or low_over.any() or low_under.any()):
            return up, low
        up = up + under - over
        low = low + low_over - low_under


INVERSION_BLOCK = 64  # items per block whose pairs weighted_inversions counts as a small dense form


def weighted_inversions(r: np.ndarray, tau: np.ndarray, weights: np.ndarray, block: int | None = None) -> np.ndarray:
    """sum over i < j (in sequence order) of weights[i] * weights[j] * [r[i] >= tau[j]], for every column of
    ``weights`` (items x resamples) at once.

    A bottom-up merge sort whose comparisons do not depend on the weights: items are sorted within runs once
    (per level) and every resample reuses those orders. Pairs inside a block of ``block`` items are a small
    dense form (BLAS); at each further level, every item j of a right run adds its weight times the weight of
    the items of the left run with r >= tau[j], read from prefix sums of the left run sorted by r.
    O(items x resamples x log(items / block)). Integer weights give exact sums."""
    n, resamples = weights.shape
    if n < 2:
        return np.zeros(resamples)
    block = block or INVERSION_BLOCK
    blocks = 1 << max(0, (-(-n // block) - 1).bit_length())  # a power of two of blocks
    size = blocks * block
    big = int(max(r.max(), tau.max())) + 3
    r = np.concatenate([np.asarray(r, dtype=np.int64), np.full(size - n, -1, dtype=np.int64)])  # padding: no pairs
    tau = np.concatenate([np.asarray(tau, dtype=np.int64), np.full(size - n, big, dtype=np.int64)])
    w = np.zeros((size, resamples), dtype=weights.dtype)
    w[:n] = weights
    upper = np.triu(np.ones((block, block), dtype=bool), 1)
    inside = (r.reshape(blocks, block)[:, :, None] >= tau.reshape(blocks, block)[:, None, :]) & upper
    wb = w.reshape(blocks, block, resamples)
    total = np.einsum("kjb,kjb->b", np.matmul(inside.astype(w.dtype).transpose(0, 2, 1), wb), wb, dtype=np.float64)
    position = np.arange(size)
    width = block
    while width < size:
        runs = size // (2 * width)
        order = np.lexsort((r, position // width))
        left = order.reshape(runs, 2, width)[:, 0, :].ravel()
        right = position.reshape(runs, 2, width)[:, 1, :].ravel()  # contiguous: the weights are a view
        offsets = np.repeat(np.arange(runs, dtype=np.int64) * big, width)
        below = np.searchsorted(r[left] + offsets, tau[right] + offsets, side="left") - np.repeat(
            np.arange(runs) * width, width
        )
        np.clip(below, 0, width, out=below)  # left items with r < tau[j]
        prefix = np.zeros((runs, width + 1, resamples), dtype=w.dtype)
        np.cumsum(w[left].reshape(runs, width, resamples), axis=1, out=prefix[:, 1:])
        right_w = w.reshape(runs, 2, width, resamples)[:, 1]
        # weight of the left items with r >= tau[j] = the left run's total - the weight of its `below` smallest
        total += np.einsum("kb,kb->b", prefix[:, width], right_w.sum(axis=1, dtype=np.float64))
        flat = prefix.reshape(runs * (width + 1), resamples)
        kept = np.take(flat, np.repeat(np.arange(runs) * (width + 1), width) + below, axis=0)
        total -= np.einsum("jb,jb->b", kept, right_w.reshape(runs * width, resamples), dtype=np.float64)
        width *= 2
    return total


def prefix_sums(weights: np.ndarray) -> np.ndarray:
    """Prefix sums of the rows of ``weights`` (items x resamples): row p of the result is the sum of the first p
    rows (row 0 is zero). With many resamples the rows are added one at a time, each a vector operation over the
    resamples: numpy's cumsum along the first axis walks each column with a stride and is several times slower.
    The additions are the same, in the same order, so the sums are identical."""
    n, resamples = weights.shape
    out = np.zeros((n + 1, resamples), dtype=weights.dtype)
    if resamples < 64:
        np.cumsum(weights, axis=0, out=out[1:])
        return out
    for i in range(n):
        np.add(out[i], weights[i], out=out[i + 1])
    return out


def human_metric_order(rh: np.ndarray, r: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The items sorted by (human rank, metric rank) (stable), their weights in that order and the prefix sums of
    those weights - shared by level_discordant_weight and the human-group pass of window_ties."""
    order = np.lexsort((np.asarray(r), np.asarray(rh)))
    ordered = np.ascontiguousarray(weights[order])
    return order, ordered, prefix_sums(ordered)


def level_discordant_weight(
    rh: np.ndarray,
    r: np.ndarray,
    tau: np.ndarray,
    weights: np.ndarray,
    sorted_weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """sum over pairs with rh[i] < rh[j] and r[i] >= tau[j] of weights[i] * weights[j], for every column of
    ``weights`` (items x resamples) at once; ``rh`` are dense ranks (0 .. levels - 1).

    For human scores with few distinct values (a Likert scale): the items are sorted by (human level, r) once,
    with prefix sums C of their weights; every item j of a level above g adds its weight times the weight of the
    level-g items with r >= tau[j] - C at the level's end less C at the first of them, found by a search that does
    not depend on the weights, so all resamples share it. O(items x resamples x levels / 2). Integer weights give
    exact sums (the products and the total are taken in double precision). ``sorted_weights``: the result of
    human_metric_order, if already computed."""
    rh = np.asarray(rh, dtype=np.int64)
    n, resamples = weights.shape
    total = np.zeros(resamples)
    if n < 2:
        return total
    order, w, prefix = sorted_weights if sorted_weights is not None else human_metric_order(rh, r, weights)
    levels = np.bincount(rh)
    ends = np.cumsum(levels)
    r_sorted, tau_sorted = np.asarray(r)[order], np.asarray(tau)[order]
    step = max(1, MAX_CELLS // max(1, resamples))
    all_weight = prefix[n].astype(np.float64)
    for g in range(len(levels) - 1):
        start, end = ends[g] - levels[g], ends[g]
        if start == end:
            continue
        # sum over the items j above level g of w_j (C[end] - C[start + below_j]), below_j: level-g items r < tau_j
        total += prefix[end].astype(np.float64) * (all_weight - prefix[end])
        below = start + np.searchsorted(r_sorted[start:end], tau_sorted[end:], side="left")
        for j0 in range(0, n - end, step):  # in bounded blocks
            j1 = min(n - end, j0 + step)
            total -= np.einsum(
                "jb,jb->b", np.take(prefix, below[j0:j1], axis=0), w[end + j0 : end + j1], dtype=np.float64
            )
    return total


def window_ties(
    weights: np.ndarray,
    rh: np.ndarray,
    m: np.ndarray,
    epsilon: float,
    sorted_weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Pairs of distinct captions whose metric scores differ by at most epsilon - all of them ("tm") and those
    also tied in the human score ("thm") - weighted by the products of the captions' weights, per resample.

    ``weights``: (captions x resamples). Sorted by (human rank, metric), the captions after position k that are
    tied with it within epsilon (in its human group, or in all) are one contiguous run k + 1 .. end_k - 1, so each
    pair is counted once, from its first caption, as a difference of prefix sums: O(captions x resamples) instead
    of comparing every pair. ``sorted_weights``: human_metric_order(rh, dense ranks of m, weights), if already
    computed (the order of the human-group pass)."""
    values = np.unique(m)
    ranks = np.searchsorted(values, m)
    up, _ = margin_thresholds(values, epsilon)
    out = []
    for groups in (np.zeros(len(m), dtype=np.int64), rh.astype(np.int64)):
        key = groups * (len(values) + 1) + ranks
        if sorted_weights is not None and groups.any():
            order, ordered, cumulative = sorted_weights  # the same stable order of (human, metric)
        else:
            order = np.argsort(key, kind="stable")
            ordered = weights[order]
            cumulative = prefix_sums(ordered)
        sorted_key = key[order]
        end = np.searchsorted(sorted_key, (groups * (len(values) + 1) + up[ranks])[order], side="left")
        # sum_k w_k (C[end_k] - C[k + 1])
        out.append(
            np.einsum("ib,ib->b", ordered, np.take(cumulative, end, axis=0), dtype=np.float64)
            - np.einsum("ib,ib->b", ordered, cumulative[1:], dtype=np.float64)
        )
    return out


#: Above this many pairs, tie calibration searches epsilon on a random sample of pairs (see tie_calibration).
CALIBRATION_PAIRS = 4_000_000


def _calibration_pairs(n_items, rate, rng):
    """Index pairs of one row: all of them, or (rate < 1) a uniform sample with replacement of distinct pairs."""
    if rate >= 1:
        return np.triu_indices(n_items, k=1)
    size = max(1, int(round(rate * n_items * (n_items - 1) / 2)))
    a = rng.integers(0, n_items, size)
    b = rng.integers(0, n_items - 1, size)
    return a, b + (b >= a)


@functools.lru_cache(maxsize=1)
def _sampled_pairs(sizes: tuple[int, ...], rate: float, seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The index pairs of each row (of the given sizes) drawn from one seeded generator, as tie_calibration draws
    them. They depend on the sizes, the rate and the seed only, so every metric of an analysis over the same
    captions reuses them (the last draw is kept: at most CALIBRATION_PAIRS pairs, 64 MB)."""
    rng = np.random.default_rng(seed)
    out = []
    for n_items in sizes:
        a, b = _calibration_pairs(n_items, rate, rng)
        a.flags.writeable = b.flags.writeable = False
        out.append((a, b))
    return tuple(out)


def stable_argsort(values: np.ndarray, with_values: bool = False):
    """np.argsort(values, kind="stable") - the same permutation - by an unstable (vectorised) sort, then, within
    each run of equal values, the original positions sorted (one integer sort of (run, position) keys over the
    tied entries only). Several times faster on millions of floats. ``with_values``: also the sorted values."""
    values = np.asarray(values)
    order = np.argsort(values)
    ordered = values[order]
    tie = ordered[1:] == ordered[:-1]
    if ordered.dtype.kind == "f":  # NaNs sort last; the stable order keeps them in their original order too
        tie |= np.isnan(ordered[1:]) & np.isnan(ordered[:-1])
    if not tie.any():
        return (order, ordered) if with_values else order
    n = len(values)
    in_run = np.zeros(n, dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    tied = np.flatnonzero(in_run)
    run = np.concatenate([[0], np.cumsum(~tie)])[tied].astype(np.int64)
    keys = run * n + order[tied]
    keys.sort()
    order[tied] = keys - (keys // n) * n
    return (order, ordered) if with_values else order


#: Tie calibration sorts only the pairs below the largest difference that can still win (_calibration_prefix)
#: when there are more pairs than this.
PRUNE_FROM = 100_000


def _calibration_prefix(diff, gain, base):
    """Which pairs the epsilon search must sort: those whose difference lies below every threshold that cannot
    reach the best accuracy, or None (all of them).

    The differences are put in buckets by the leading bits of their float representation (order-preserving for
    non-negative floats; 128 buckets per octave). The accuracy after a whole bucket is base plus the gains up to
    it - a value the search also reaches - and inside a bucket it is at most the value before it plus the
    bucket's positive gains. The buckets after the last one whose bound comes within a margin of the best value
    reached cannot hold the chosen threshold: their values are below it by more than any rounding error of the
    running sums (at most pairs x 2^-52 here, against a margin of 1e-8). The pairs kept are the smallest
    differences, so sorting them gives the beginning of the full sorted order and the same running sums."""
    key = (diff.view(np.int64) >> 45).astype(np.int64)
    low = int(key.min())
    bucket = key - low
    net = np.bincount(bucket, weights=gain)
    rises = np.bincount(bucket, weights=np.maximum(gain, 0.0), minlength=len(net))
    after = base + np.cumsum(net)
    before = np.concatenate([[base], after[:-1]])
    best = max(base, float(after.max()))
    margin = max(1e-8, 8.0 * len(diff) * 2.0**-52)
    reachable = np.flatnonzero(before + rises >= best - margin)
    last = int(reachable[-1]) if len(reachable) else -1
    if last >= len(net) - 1:
        return None
    return bucket <= last


def tie_calibration(h, m, *, max_pairs=None, seed=0):
    """The epsilon that maximises the mean pairwise accuracy (acc_eq) over the rows, and that accuracy.

    Deutsch, Foster & Freitag 2023 ("tie calibration"): every pair's metric difference is a candidate
    threshold; pairs whose metric scores differ by at most epsilon count as tied. Like ``tau_optimization`` in
    mt-metrics-eval, the objective is the average of the per-row accuracies and, among equal accuracies, the
    smallest epsilon wins (epsilon 0 - no added ties - is always a candidate). When there are more than
    ``max_pairs`` pairs (default CALIBRATION_PAIRS) the search runs on a uniform random sample of pairs (seeded),
    as mt-metrics-eval's ``sample_rate`` does; the returned accuracy is then the sample's, and callers compute
    the exact accuracy at the chosen epsilon.
    """
    h, m, present = joint(h, m)
    sizes = present.sum(axis=1)
    total = float((sizes * (sizes - 1) / 2).sum())
    limit = CALIBRATION_PAIRS if max_pairs is None else max_pairs
    rate = min(1.0, limit / total) if total else 1.0
    rows = [(row, idx) for row in range(h.shape[0]) for idx in [np.flatnonzero(present[row])] if len(idx) >= 2]
    sizes = tuple(len(idx) for _, idx in rows)
    if isinstance(seed, (int, np.integer)):
        samples = _sampled_pairs(sizes, rate, int(seed))
    else:  # a generator or None: draw afresh
        rng = np.random.default_rng(seed)
        samples = tuple(_calibration_pairs(n_items, rate, rng) for n_items in sizes)
    diffs, gains, bases = [], [], []
    for (row, idx), (a, b) in zip(rows, samples):
        hv, mv = h[row, idx], m[row, idx]
        dh, dm = hv[a], mv[a]
        dh -= hv[b]
        dm -= mv[b]
        tie_h = dh == 0
        concordant = np.multiply(dh, dm, out=dh) > 0  # implies untied on both sides
        # A pair is correct when concordant or tied on both sides. Becoming a metric tie changes its accuracy
        # only if it is tied by people and not by the metric (+1) or concordant (-1); the others would add
        # exactly 0.0 to the running sum below, so leaving them out changes none of its values, and the
        # thresholds they alone would add repeat the value of a smaller threshold (the smallest epsilon wins
        # among equal values), so they are never chosen.
        tie_moves = tie_h & (dm != 0)
        moves = tie_moves | concordant
        diffs.append(np.abs(dm[moves]))
        gains.append(np.where(tie_moves[moves], 1.0, -1.0))
        gains[-1] *= 1.0 / len(a)  # the row's weight: its accuracy is a mean over pairs
        correct = int(np.count_nonzero(concordant)) + int(np.count_nonzero(tie_h)) - int(np.count_nonzero(tie_moves))
        bases.append(correct / len(a))
    if not bases:
        return 0.0, float("nan")
    diff = np.concatenate(diffs) if len(diffs) > 1 else diffs[0]
    gain = np.concatenate(gains) / len(bases) if len(gains) > 1 else gains[0]  # (x / 1 is x)
    base = float(np.mean(bases))
    if len(diff) > PRUNE_FROM:
        keep = _calibration_prefix(diff, gain, base)
        if keep is not None:
            diff, gain = diff[keep], gain[keep]
    order, diff = stable_argsort(diff, with_values=True)
    last_of_value = np.ones(len(diff), dtype=bool)
    last_of_value[:-1] = diff[1:] != diff[:-1]
    thresholds = np.concatenate([[0.0], diff[last_of_value]])
    values = np.concatenate([[base], base + np.cumsum(gain[order])[last_of_value]])
    best = int(np.argmax(np.round(values, 12)))
    return float(thresholds[best]), float(values[best])
