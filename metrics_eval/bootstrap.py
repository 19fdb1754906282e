"""Bootstrap confidence intervals for the correlations, resampling videos (vectorised over the resamples).

A resample draws the dataset's videos with replacement (Efron & Tibshirani 1993; resampling the inputs
rather than single outputs, as Deutsch, Dror & Roth 2021 recommend for metric correlations, because the captions
of one video are not independent). All captions of a drawn video come along, as many times as it was drawn.
A resample is therefore a vector of counts per video, and every statistic of the expanded sample is computed
from those counts without building it:

- Pearson: weighted sums (each caption weighted by its video's count), i.e. matrix products counts @ per-video
  sums.
- Spearman: average ranks of the expanded sample from cumulative weights along the sorted values, then the
  weighted Pearson of the ranks (computed from the exact rank sums).
- Pair statistics (Kendall tau-b/-c, pairwise accuracy): each pair count of the expanded sample is a quadratic
  form c' A c / 2 in the video counts c, where A[v, u] sums the pair indicator over the ordered pairs of distinct
  captions of videos v and u. Pairs of a caption with its own copy carry no information and are left out (for
  tau-b and tau-c this changes nothing: they would be ties in both scores; for accuracy it avoids counting
  them as correct). The discordant pairs can also be counted without that matrix, by a sweep over the human
  levels (few distinct human scores) or a merge sort (about one caption per video); ``pair_path`` picks the
  cheapest, and the human side of a group is shared by all metrics (``_HumanSide``).
- Grouped by video: each video's correlation is fixed, so a resample's value is the count-weighted mean of the
  per-video values.
- System level: per-system means from count-weighted sums, then the statistic per resample row.

The tie-calibrated accuracy keeps the epsilon calibrated on the full data in every resample.
Percentile intervals (Efron & Tibshirani 1993, ch. 13) ignore resamples where the statistic is undefined.
"""

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import sparse

from . import correlation, stats

CHUNK_CELLS = 1 << 21  # resample x caption cells handled at once (Spearman)


def video_resamples(n_videos: int, n_resamples: int, seed: int) -> np.ndarray:
    """Counts (n_resamples x n_videos): how often each video is drawn in each resample (same seed, same draws)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_videos, size=(n_resamples, n_videos))
    flat = (picks + (np.arange(n_resamples) * n_videos)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * n_videos).reshape(n_resamples, n_videos)


def percentile_interval(samples: npt.ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """The (lower, upper) percentile interval of the defined bootstrap values."""
    values = np.asarray(samples, dtype=float)
    defined = values[np.isfinite(values)]
    if not len(defined):
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(defined, [tail, 100.0 - tail])
    return float(low), float(high)


# --- weighted statistics of one group of captions ------------------------------------------------------------


def _weighted_pearson_by_video(counts: np.ndarray, vid: np.ndarray, h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Pearson r of the expanded samples, from per-video sums (h and m are centred for accuracy)."""
    n_videos = counts.shape[1]
    hc, mc = h - h.mean(), m - m.mean()

    def per_video(values):
        return counts @ np.bincount(vid, weights=values, minlength=n_videos)

    n = counts @ np.bincount(vid, minlength=n_videos).astype(float)
    sh, sm = per_video(hc), per_video(mc)
    shh, smm, shm = per_video(hc * hc), per_video(mc * mc), per_video(hc * mc)
    with np.errstate(invalid="ignore", divide="ignore"):
        vh = shh / n - (sh / n) ** 2
        vm = smm / n - (sm / n) ** 2
        r = (shm / n - sh * sm / n**2) / np.sqrt(vh * vm)
    tiny_h, tiny_m = 1e-12 * max(hc.var(), 1e-300), 1e-12 * max(mc.var(), 1e-300)
    r[(n < 2) | ~(vh > tiny_h) | ~(vm > tiny_m)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _sorted_weighted_ranks(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Average ranks in the expanded samples (weights: resamples x items), in the stable order of ``values``:
    (that order, the ranks of the items in that order, and 12 times the weighted sum of squared deviations of
    the ranks, N (N^2 - 1) - sum over tied groups of (W^3 - W), N the sample size and W a group's weight - the
    sum of squares of average ranks 1..N with ties). Integer weights give half-integer ranks: all exact."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    w = weights[:, order]
    cum = np.cumsum(w, axis=1)
    new = np.ones(len(values), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    if new.all():  # every value its own group: rank = weight before + (own weight + 1) / 2
        ranks = cum - 0.5 * (w - 1.0)
        totals = w
    else:
        group = np.cumsum(new) - 1
        first = np.flatnonzero(new)
        last = np.append(first[1:] - 1, len(values) - 1)
        before = cum[:, first] - w[:, first]
        totals = cum[:, last] - before
        ranks = (before + (totals + 1.0) / 2.0)[:, group]
    n = cum[:, -1] if len(values) else np.zeros(len(w))
    twelve_ss = n * (n * n - 1.0) - (totals * (totals * totals - 1.0)).sum(axis=1)
    return order, ranks, twelve_ss


def _weighted_spearman(counts: np.ndarray, vid: np.ndarray, h: np.ndarray, m: npt.ArrayLike) -> np.ndarray:
    """Spearman's rho of each resample; ``m`` may be a matrix (items x metrics): the human ranks of a resample
    are then computed once for all metrics. Returns (resamples,) or (resamples, metrics).

    rho = 12 cov / sqrt(12 SS_h x 12 SS_m) over the expanded sample of size N, where the ranks' sums are known
    (N (N + 1) / 2 on both sides), so 12 cov = 12 sum w r_h r_m - 3 N (N + 1)^2, and 12 SS comes with the ranks
    (_sorted_weighted_ranks). Per metric that is one pass over the items in the metric's order; with integer
    weights every sum is exact in double precision (below 2^53) up to the final square root and division."""
    many = np.ndim(m) == 2
    columns = np.asarray(m, dtype=float).reshape(len(h), -1)
    step = max(1, CHUNK_CELLS // max(1, len(h)))
    orders = [np.argsort(columns[:, k], kind="stable") for k in range(columns.shape[1])]
    distinct = [bool((np.diff(columns[order, k]) != 0).all()) for k, order in enumerate(orders)]
    out = []
    for start in range(0, counts.shape[0], step):
        chunk = counts[start : start + step]
        w = chunk[:, vid]
        n = w.sum(axis=1)
        order_h, ranks_h, ss_h = _sorted_weighted_ranks(h, w)
        weighted_h = np.empty_like(w)
        weighted_h[:, order_h] = ranks_h
        weighted_h *= w  # w r_h, in the items' order
        # A metric whose values are all distinct has ranks cum - (w - 1) / 2 (cum: the cumulative weight in its
        # order), so sum w r_h r_m = sum (w r_h) cum - (sum w r_h w - sum w r_h) / 2, and 12 SS_m = N (N^2 - 1)
        # - sum (w^3 - w): all but the first sum are the same for every such metric.
        shared_cross = 0.5 * (np.einsum("bi,bi->b", weighted_h, w) - weighted_h.sum(axis=1))
        distinct_ss = n * (n * n - 1.0) - (w * (w * w - 1.0)).sum(axis=1)
        block = np.empty((len(w), columns.shape[1]))
        with np.errstate(invalid="ignore", divide="ignore"):
            for k in range(columns.shape[1]):
                order_m = orders[k]
                if distinct[k]:
                    cum = np.cumsum(chunk[:, vid[order_m]], axis=1)  # (gathered from the smaller video counts)
                    cross = np.einsum("bi,bi->b", weighted_h[:, order_m], cum) - shared_cross
                    ss_m = distinct_ss
                else:
                    order_m, ranks_m, ss_m = _sorted_weighted_ranks(columns[:, k], w)
                    cross = np.einsum("bi,bi->b", weighted_h[:, order_m], ranks_m)
                r = (12.0 * cross - 3.0 * n * (n + 1.0) ** 2) / np.sqrt(ss_h * ss_m)
                r[(n < 2) | ~(ss_h > 0) | ~(ss_m > 0)] = np.nan
                block[:, k] = np.clip(r, -1.0, 1.0)
        out.append(block)
    result = np.vstack(out)
    return result if many else result[:, 0]


def dense_ranks(values: npt.ArrayLike) -> np.ndarray:
    """Integer ranks preserving order and ties exactly (0 = smallest), as compact as the size allows."""
    _, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int16 if len(inverse) < 32_000 else np.int32)


class _Layout:
    """Captions of one group arranged by video: a padded grid (videos x the largest video) when that wastes
    little, so the video sums of a pair matrix are strided sums; otherwise contiguous video runs."""

    def __init__(self, vid: np.ndarray) -> None:
        self.videos, self.local, sizes = np.unique(vid, return_inverse=True, return_counts=True)
        self.sizes = sizes.astype(float)
        self.n, self.k = len(vid), len(self.videos)
        self.width = int(sizes.max())
        position = np.zeros(self.n, dtype=int)
        order = np.argsort(self.local, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        position[order] = np.arange(self.n) - np.repeat(starts, sizes)
        self.padded = self.k * self.width <= 1.5 * self.n + 16
        if self.padded:
            self.slot = self.local * self.width + position
            self.cells = self.k * self.width
        else:
            self.slot = np.empty(self.n, dtype=int)
            self.slot[order] = np.arange(self.n)
            self.starts = starts
            self.cells = self.n
        self.valid = np.zeros(self.cells, dtype=np.int16)
        self.valid[self.slot] = 1

    def place(self, values: np.ndarray, fill: float = 0) -> np.ndarray:
        out = np.full(self.cells, fill, dtype=values.dtype)
        out[self.slot] = values
        return out

    def video_blocks(self) -> Iterator[tuple[int, int, slice]]:
        """(first video, last video + 1, cell rows) blocks of whole videos within the memory budget."""
        budget = max(1, stats.MAX_CELLS // max(1, self.cells))
        first = 0
        while first < self.k:
            if self.padded:
                last = min(self.k, first + max(1, budget // self.width))
                yield first, last, slice(first * self.width, last * self.width)
            else:
                last = first + 1
                while last < self.k and self.starts[last] - self.starts[first] < budget:
                    last += 1
                end = self.starts[last] if last < self.k else self.n
                yield first, last, slice(self.starts[first], end)
            first = last

    def video_sums(self, cell: np.ndarray, first: int, last: int) -> np.ndarray:
        """Sum a (cell rows x cells) block over the captions of each video pair -> (last - first) x k."""
        if self.padded:
            w = self.width
            rows = cell[0::w].astype(np.int32)
            for a in range(1, w):
                rows += cell[a::w]
            out = rows[:, 0::w].copy()
            for b in range(1, w):
                out += rows[:, b::w]
            return out
        starts = self.starts[first:last] - self.starts[first]
        return np.add.reduceat(np.add.reduceat(cell, self.starts, axis=1, dtype=np.int64), starts, axis=0)


def _gram(layout: _Layout, ranks: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Sparse (values x videos) counts: how many captions of each video have each value - for the values held by
    two captions or more (a value held once only pairs a caption with its own copies, which are not pairs)."""
    repeated = np.bincount(ranks)[ranks] > 1
    values = np.unique(ranks[repeated], return_inverse=True)[1].ravel()
    return (
        sparse.csr_matrix(
            (np.ones(len(values)), (values, layout.local[repeated])), shape=(int(values.max(initial=-1)) + 1, layout.k)
        ),
        np.bincount(layout.local[repeated], minlength=layout.k).astype(float),
    )


def _distinct_drawn(layout: _Layout, ranks: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """How many distinct values the captions of the drawn videos have, per resample (for tau-c). When every
    caption has a value of its own (continuous scores), that is the number of captions of the drawn videos."""
    if int(ranks.max()) + 1 == layout.n:
        return drawn @ layout.sizes
    presence = sparse.csr_matrix((np.ones(layout.n), (ranks, layout.local)), shape=(int(ranks.max()) + 1, layout.k))
    return np.asarray((presence @ np.ascontiguousarray(drawn.T)) > 0).sum(axis=0)


def _concordance_matrices(layout: _Layout, rh: np.ndarray, m: np.ndarray, epsilon: float | None) -> np.ndarray:
    """Video-by-video sums over caption pairs of sign(dh) sign(dm) ("cd"); with epsilon > 0 a metric difference
    of at most epsilon counts as no difference (compared through the integer thresholds of margin_thresholds)."""
    ranks = dense_ranks(m)
    h_cells = layout.place(rh)
    m_cells = layout.place(ranks)
    valid = layout.valid
    if epsilon:
        up, _ = margin_thresholds(np.unique(m), epsilon)
        t_cells = layout.place(up.astype(ranks.dtype)[ranks])
    cd = np.zeros((layout.k, layout.k))
    for first, last, rows in layout.video_blocks():
        sh = np.sign(h_cells[rows, None] - h_cells[None, :]) * valid[rows, None]
        if epsilon:  # +1 when m_i - m_j > epsilon, -1 when m_j - m_i > epsilon, else 0
            sm = (
                (m_cells[rows, None] >= t_cells[None, :]).astype(np.int16) - (m_cells[None, :] >= t_cells[rows, None])
            ) * valid[None, :]
        else:
            sm = np.sign(m_cells[rows, None] - m_cells[None, :]) * valid[None, :]
        cd[first:last] = layout.video_sums(sh * sm, first, last)
    return cd


margin_thresholds = stats.margin_thresholds
_window_ties = stats.window_ties

SORTED_BLOCK = 64  # items per block whose pairs sorted_discordant_weight counts as a small dense form
#: The sorted count replaces the videos x videos forms when n log n (times the cost of a memory-bound pass relative
#: to a BLAS flop, ~64 here) is below videos^2: groups of about one caption per video (grouped by system).
SORTED_COST = 64


#: The level sweep (stats.level_discordant_weight) costs about (captions + the captions above each human level)
#: memory-bound passes, ~32 BLAS flops each: it serves human scores with few distinct values (a Likert scale).
LEVEL_COST = 32
#: None: the cheapest path by the costs above; "matrix", "sorted" or "levels" forces one (tests).
PAIR_PATH = None


def use_sorted_pairs(n_captions: int, n_videos: int) -> bool:
    return n_captions * max(1.0, np.log2(max(n_captions, 2) / SORTED_BLOCK)) * SORTED_COST < n_videos**2


def pair_path(rh: np.ndarray, n_videos: int) -> str:
    """How _weighted_pairs counts discordant pairs: "levels" (few human levels), "sorted" (about one caption per
    video) or "matrix" (the videos x videos forms), whichever costs least per resample."""
    if PAIR_PATH:
        return PAIR_PATH
    n = len(rh)
    above = n - np.cumsum(np.bincount(rh))[:-1]  # captions above each human level but the top one
    costs = {
        "matrix": float(n_videos) ** 2,
        "sorted": n * max(1.0, np.log2(max(n, 2) / SORTED_BLOCK)) * SORTED_COST,
        "levels": (n + float(above.sum())) * LEVEL_COST,
    }
    return min(costs, key=lambda path: costs[path])


weighted_inversions = stats.weighted_inversions


def sorted_discordant_weight(
    rh: np.ndarray, m: np.ndarray, rm: np.ndarray, weights: np.ndarray, epsilon: float | None
) -> np.ndarray:
    """D: the weighted number of pairs of distinct captions with h_i < h_j and m_i - m_j > epsilon (epsilon 0:
    m_i > m_j), per resample. In the order of (h, m), a pair i < j always has h_i <= h_j, and when h_i = h_j
    then m_i <= m_j; so D is the weighted count of pairs i < j in that order with m_i - m_j > epsilon, i.e.
    rm_i >= up[rm_j] (margin_thresholds; rm_j + 1 for epsilon 0). The other pairs untied in h are tied in m
    (within epsilon) or concordant, so C - D = pairs - T_h - T_m + T_hm - 2 D."""
    order = np.lexsort((m, rh))
    if epsilon:
        up, _ = margin_thresholds(np.unique(m), epsilon)
        tau = up[rm]
    else:
        tau = rm.astype(np.int64) + 1
    return weighted_inversions(rm[order], tau[order], weights[order], block=SORTED_BLOCK)


class _HumanSide:
    """What the pair counts of one group need from the resamples and the human scores only - the same for every
    metric that covers the same captions, so bootstrap_segment_many computes it once per group."""

    def __init__(self, counts: np.ndarray, vid: np.ndarray, h: np.ndarray) -> None:
        self.layout = layout = _Layout(vid)
        every_video = layout.k == counts.shape[1] and layout.videos[-1] == layout.k - 1
        self.c = c = counts if every_video else counts[:, layout.videos]
        self.squares = c * c
        self.n_items = c @ layout.sizes
        self.pairs = 0.5 * (self.n_items**2 - self.squares @ layout.sizes)
        self.rh = dense_ranks(h)
        self._columns: np.ndarray | None = None
        self._weights: np.ndarray | None = None
        self._th: np.ndarray | None = None
        self._drawn: np.ndarray | None = None
        self._classes_h: np.ndarray | None = None
        self._captions_drawn: np.ndarray | None = None

    def tied(self, gram_and_sizes: tuple[sparse.csr_matrix, np.ndarray]) -> np.ndarray:
        """Pairs tied on a repeated value, less each caption paired with itself."""
        gram, sizes = gram_and_sizes
        if not sizes.any():  # no value is held twice
            return np.zeros(len(self.c))
        if self._columns is None:
            self._columns = np.ascontiguousarray(self.c.T)  # (scipy would copy the transposed view every time)
        return 0.5 * (np.asarray(np.square(gram @ self._columns)).sum(axis=0) - self.squares @ sizes)

    def human_ties(self) -> np.ndarray:
        if self._th is None:
            self._th = self.tied(_gram(self.layout, self.rh))
        return self._th

    def weights(self) -> np.ndarray:
        """(captions x resamples); single precision is exact while sums stay below 2^24."""
        if self._weights is None:
            exact32 = self.n_items.max(initial=0) < 2**24
            self._weights = np.ascontiguousarray(self.c[:, self.layout.local].T, dtype=np.float32 if exact32 else float)
        return self._weights

    def drawn(self) -> np.ndarray:
        if self._drawn is None:
            self._drawn = (self.c > 0).astype(float)
        return self._drawn

    def human_classes(self) -> np.ndarray:
        if self._classes_h is None:
            self._classes_h = _distinct_drawn(self.layout, self.rh, self.drawn())
        return self._classes_h

    def captions_drawn(self) -> np.ndarray:
        """Distinct captions of the drawn videos: the tau-c classes of any metric whose scores are all distinct."""
        if self._captions_drawn is None:
            self._captions_drawn = self.drawn() @ self.layout.sizes
        return self._captions_drawn


def _weighted_pairs(
    counts: np.ndarray,
    vid: np.ndarray,
    h: np.ndarray,
    m: np.ndarray,
    method: str,
    epsilon: float | None,
    side: _HumanSide | None = None,
) -> np.ndarray:
    """Kendall tau-b / tau-c / pairwise accuracy of each resample, from quadratic forms in the video counts.

    Ties come from sparse Gram matrices: the pairs tied on a value within videos v and u number
    sum_a cnt_a[v] cnt_a[u], so the count over a resample is (|G c|^2 - sum_v c_v^2 n_v) / 2. ``side``: the
    group's _HumanSide, when already computed for another metric."""
    side = side or _HumanSide(counts, vid, h)
    layout, c, n_items, pairs, rh, tied = side.layout, side.c, side.n_items, side.pairs, side.rh, side.tied

    def form(matrix):
        # The products c @ matrix are integers; when every partial sum stays below 2^24 single precision is
        # exact and twice as fast, so it is used then (the final sum is taken in double precision).
        if np.abs(matrix).max(initial=0) * c.sum(axis=1).max(initial=0) < 2**24:
            product = (c.astype(np.float32) @ matrix.astype(np.float32)).astype(float)
        else:
            product = c @ matrix
        return 0.5 * np.einsum("bv,bv->b", product, c)

    rm = dense_ranks(m)
    caption_weights = side.weights
    path = pair_path(rh, layout.k)
    # the captions by (human, metric) with their weights' prefix sums, shared by the level sweep and the ties
    shared = stats.human_metric_order(rh, rm, caption_weights()) if path == "levels" else None

    def ties():
        th = side.human_ties()
        if epsilon:
            tm, thm = _window_ties(caption_weights(), rh, m, epsilon, shared)
        else:
            tm = tied(_gram(layout, rm))
            joint = np.unique(np.stack([rh, rm], axis=1), axis=0, return_inverse=True)[1].ravel()
            thm = tied(_gram(layout, joint))
        return th, tm, thm

    if path != "matrix":
        # few human levels or few captions per video: count the discordant pairs D by a sweep or a sort whose
        # order is the same for every resample, rather than through a videos x videos matrix:
        # cd = pairs - T_h - T_m + T_hm - 2 D (see sorted_discordant_weight)
        th, tm, thm = ties()
        if path == "levels":
            tau = margin_thresholds(np.unique(m), epsilon)[0][rm] if epsilon else rm.astype(np.int64) + 1
            discordant = stats.level_discordant_weight(rh, rm, tau, caption_weights(), shared)
        else:
            discordant = sorted_discordant_weight(rh, m, rm, caption_weights(), epsilon)
        cd = pairs - th - tm + thm - 2.0 * discordant
    else:
        cd = form(_concordance_matrices(layout, rh, m, epsilon))
        th = tm = thm = None
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "kendall_c":
            all_distinct = int(rm.max(initial=-1)) + 1 == layout.n
            classes_m = side.captions_drawn() if all_distinct else _distinct_drawn(layout, rm, side.drawn())
            classes = np.minimum(side.human_classes(), classes_m)
            value = 2.0 * cd / (n_items**2 * (classes - 1.0) / classes)
            value[classes < 2] = np.nan
            return np.where(np.isfinite(value), value, np.nan)
        if th is None:
            th, tm, thm = ties()
        if method == "kendall_b":
            value = cd / np.sqrt((pairs - th) * (pairs - tm))
        else:
            value = (0.5 * (pairs - th - tm + thm + cd) + thm) / pairs
    return np.where(np.isfinite(value), value, np.nan)


def _weighted_group(
    counts: np.ndarray,
    vid: np.ndarray,
    h: np.ndarray,
    m: np.ndarray,
    method: str,
    epsilon: float | None,
    sides: dict | None = None,
) -> np.ndarray:
    if method == "pearson":
        return _weighted_pearson_by_video(counts, vid, h, m)
    if method == "spearman":
        return _weighted_spearman(counts, vid, h, m)
    side = None
    if sides is not None:  # one _HumanSide per group of captions (their videos and human scores)
        key = (vid.tobytes(), h.tobytes())
        side = sides.get(key)
        if side is None:
            side = sides[key] = _HumanSide(counts, vid, h)
    return _weighted_pairs(counts, vid, h, m, method, epsilon, side)


# --- public entry points --------------------------------------------------------------------------------------


def _video_codes(data: pd.DataFrame, videos: Sequence[str]) -> np.ndarray:
    codes = pd.Index(videos).get_indexer(data["video_id"])
    if (codes < 0).any():
        raise ValueError("the frame has videos that are not in the resampled video list")
    return codes


def bootstrap_segment(
    frame: pd.DataFrame,
    human: str,
    metric: str,
    method: str,
    group_by: str,
    counts: npt.ArrayLike,
    videos: Sequence[str],
    epsilon: float | None = None,
    sides: dict | None = None,
) -> np.ndarray:
    """Bootstrap values (one per resample) of the segment-level correlation of ``metric`` with ``human``.

    ``counts`` comes from ``video_resamples(len(videos), ...)``; ``videos`` lists the video ids of its columns.
    ``sides``: a dict shared by calls on the same counts, where the human side of each group is kept.
    """
    correlation.check_method(method)
    data = frame.loc[frame[human].notna() & frame[metric].notna()]
    counts = np.asarray(counts, dtype=float)
    if not len(data):  # no caption with both scores: undefined in every resample, as an undefined point estimate
        return np.full(counts.shape[0], np.nan)
    codes = _video_codes(data, videos)
    h, m = data[human].to_numpy(dtype=float), data[metric].to_numpy(dtype=float)
    if method == "accuracy_tc" and epsilon is None:
        epsilon, _ = stats.tie_calibration(*correlation.group_rows(data, [human, metric], group_by))
    if group_by == "video":
        per_video = np.full(counts.shape[1], np.nan)
        hv, mv = correlation.group_rows(data, [human, metric], "video")
        values = correlation.rowwise(method, hv, mv, epsilon)
        group_ids = pd.factorize(data["video_id"], sort=True)[1]  # the row order of group_rows
        per_video[pd.Index(videos).get_indexer(group_ids)] = values
        defined = np.isfinite(per_video)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts[:, defined] @ per_video[defined]) / counts[:, defined].sum(axis=1)
    if group_by == "none":
        return _weighted_group(counts, codes, h, m, method, epsilon, sides)
    systems = data["system"].to_numpy()
    per_group = [
        _weighted_group(counts, codes[systems == s], h[systems == s], m[systems == s], method, epsilon, sides)
        for s in sorted(set(systems))
    ]
    stacked = np.vstack(per_group)
    defined = np.isfinite(stacked)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined, stacked, 0.0).sum(axis=0) / defined.sum(axis=0)


def bootstrap_segment_many(
    frame: pd.DataFrame,
    human: str,
    metrics: Sequence[str],
    method: str,
    group_by: str,
    counts: npt.ArrayLike,
    videos: Sequence[str],
    epsilons: dict[str, float | None] | None = None,
) -> dict[str, np.ndarray]:
    """{metric: bootstrap values} for several metrics against one human column, on the same resamples.

    Same values as bootstrap_segment metric by metric; Spearman shares the human side's ranks across metrics
    that cover the same captions."""
    epsilons = epsilons or {}
    results = {}
    if method == "spearman" and group_by != "video":
        present = frame[human].notna()
        patterns: dict[bytes, list[str]] = {}
        for metric in metrics:
            key = (present & frame[metric].notna()).to_numpy().tobytes()
            patterns.setdefault(key, []).append(metric)
        counts_f = np.asarray(counts, dtype=float)
        for names in patterns.values():
            data = frame.loc[present & frame[names[0]].notna()]
            if not len(data):  # no caption with both scores: undefined in every resample
                results.update({name: np.full(counts_f.shape[0], np.nan) for name in names})
                continue
            codes = _video_codes(data, videos)
            h, m = data[human].to_numpy(dtype=float), data[names].to_numpy(dtype=float)
            if group_by == "none":
                values = _weighted_spearman(counts_f, codes, h, m)
            else:
                systems = data["system"].to_numpy()
                stacked = np.stack(
                    [
                        _weighted_spearman(counts_f, codes[systems == s], h[systems == s], m[systems == s])
                        for s in sorted(set(systems))
                    ]
                )
                defined = np.isfinite(stacked)
                with np.errstate(invalid="ignore", divide="ignore"):
                    values = np.where(defined, stacked, 0.0).sum(axis=0) / defined.sum(axis=0)
            for k, name in enumerate(names):
                results[name] = values[:, k]
        return {metric: results[metric] for metric in metrics}
    counts = np.asarray(counts, dtype=float)
    sides: dict = {}
    return {
        metric: bootstrap_segment(
            frame, human, metric, method, group_by, counts, videos, epsilon=epsilons.get(metric), sides=sides
        )
        for metric in metrics
    }


def bootstrap_system(
    frame: pd.DataFrame,
    human: str,
    metric: str,
    method: str,
    counts: npt.ArrayLike,
    videos: Sequence[str],
    *,
    human_weight: str | None = None,
    epsilon: float | None = None,
) -> np.ndarray:
    """Bootstrap values of the system-level correlation: per resample, each system's mean scores over the
    captions of the drawn videos (the human mean weighted by ``human_weight`` if given)."""
    correlation.check_method(method)
    data = frame.loc[frame[human].notna() & frame[metric].notna()]
    counts = np.asarray(counts, dtype=float)
    codes = _video_codes(data, videos)
    system_codes, systems = pd.factorize(data["system"], sort=True)
    shape = (counts.shape[1], len(systems))
    weights = data[human_weight].to_numpy(dtype=float) if human_weight else np.ones(len(data))

    def per_video_system(values):
        table = np.zeros(shape)
        np.add.at(table, (codes, system_codes), values)
        return counts @ table

    with np.errstate(invalid="ignore", divide="ignore"):
        human_means = per_video_system(weights * data[human].to_numpy(dtype=float)) / per_video_system(weights)
        metric_means = per_video_system(data[metric].to_numpy(dtype=float)) / per_video_system(np.ones(len(data)))
    if method == "accuracy_tc" and epsilon is None:
        means = correlation.system_means(data, human, metric, human_weight=human_weight)
        epsilon, _ = stats.tie_calibration(means["human"].to_numpy(), means["metric"].to_numpy())
    return correlation.rowwise(method, human_means, metric_means, epsilon)
