"""Planning a Direct Assessment campaign into HITs: a pure function over ids (and the human captions' tokens)
and a seeded numpy Generator, so the same inputs and seed give the same plan.

Layout of a HIT (Graham et al. 2017/2018; defaults for a HIT of 100): ``pairs_per_hit`` hidden originals (human
captions) with their degraded copies (10 + 10), ``repeats_per_hit`` exact repeats (10) of system items of the
same HIT, and system captions in the remaining slots (70, of which 10 are the repeated ones). The human caption
set is one of the systems, hidden among the others. Each control item is at least ``min_distance`` positions
from its partner (so never next to it); a repeat always comes after the item it repeats; the order inside an
original/degraded pair is random.

Every system caption is planned once. The last HIT is filled up with system captions drawn from the other
HITs, so every HIT has the same size; only a campaign with fewer captions than one HIT's system slots gets a
single shorter HIT. Originals score the human system (see scoring.py), so they are spread over the human
captions: per HIT the least used degradable human captions are drawn (random among equals), preferring videos
whose captions are not already in that HIT; every human caption is an original once before any is used twice.

``check`` tells whether a layout lets a worker reach the QC minimum of pairs at all (and which values would),
``suggest`` proposes a layout for a dataset's size: both pure, used by ``campaigns`` for every entry point.
"""

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from . import degradation


@dataclass(frozen=True)
class Layout:
    hit_size: int = 100
    pairs_per_hit: int = 10
    repeats_per_hit: int = 10
    min_distance: int = 25

    @property
    def system_slots(self):
        return self.hit_size - 2 * self.pairs_per_hit - self.repeats_per_hit

    def validate(self):
        """Raise ValueError unless a HIT of this layout can always be built."""
        if self.pairs_per_hit < 1:
            raise ValueError("a HIT needs at least one original/degraded pair")
        if self.system_slots < max(1, self.repeats_per_hit):
            raise ValueError(
                f"a HIT of {self.hit_size} items has {self.system_slots} system slots after "
                f"{self.pairs_per_hit} pairs and {self.repeats_per_hit} repeats: it needs at least "
                f"{max(1, self.repeats_per_hit)} (repeats copy system items of the same HIT)"
            )
        if self.min_distance < 2:
            raise ValueError("the minimum distance between a control item and its partner must be at least 2")
        if self.min_distance > self.hit_size // 2:
            raise ValueError(
                f"a minimum distance of {self.min_distance} cannot be kept in a HIT of "
                f"{self.hit_size} items (at most {self.hit_size // 2})"
            )
        return self


@dataclass
class PlannedItem:
    item_type: str
    caption_id: int
    partner: int | None = None  # position (in the same HIT) of the item this control pairs with
    tokens: list | None = None  # degraded copies: the text shown
    degraded_range: tuple | None = None
    donor_caption_id: int | None = None


@dataclass
class PlannedHIT:
    items: list = field(default_factory=list)  # PlannedItem per position


def place_pairs(hit_size, ordered, min_distance, rng, attempts=10):
    """Positions ``(first, second)`` for pairs in a HIT of ``hit_size``, all distinct, each pair at least
    ``min_distance`` apart. ``ordered[i]`` True keeps pair i's first member first (a repeat after its
    original); otherwise the order is random. Random greedy placement; if it ever gets stuck, a shuffled
    half-shift layout (partner exactly hit_size // 2 later) that always exists when 2 * pairs <= hit_size."""
    k = len(ordered)
    if 2 * k > hit_size:
        raise ValueError(f"{k} pairs do not fit in {hit_size} positions")
    for _ in range(attempts):
        free = np.ones(hit_size, dtype=bool)
        placed: list[tuple[int, int] | None] = [None] * k
        for i in rng.permutation(k):
            free_positions = np.flatnonzero(free)
            # number of free positions at or after p, for every p (0 past the end)
            after = np.concatenate([np.cumsum(free[::-1])[::-1], [0]])
            firsts = free_positions[after[np.minimum(free_positions + min_distance, hit_size)] > 0]
            firsts = firsts[firsts + min_distance < hit_size]
            if firsts.size == 0:
                break
            a = int(rng.choice(firsts))
            b = int(rng.choice(free_positions[free_positions >= a + min_distance]))
            free[a] = free[b] = False
            if not ordered[i] and rng.random() < 0.5:
                a, b = b, a
            placed[i] = (a, b)
        else:
            return placed
    half = hit_size // 2
    firsts = rng.permutation(half)[:k]
    placed = []
    for i, a in enumerate(firsts):
        a, b = int(a), int(a) + half
        if not ordered[i] and rng.random() < 0.5:
            a, b = b, a
        placed.append((a, b))
    return placed


def _choose_donor(video, length, video_ids, longest, rng):
    """A donor video (not ``video``) whose caption has a run of ``length`` words; else the one with the longest
    run (the caller shortens the run). Tries random donors first, then scans in a random order."""
    n = len(video_ids)
    for _ in range(20):
        candidate = video_ids[int(rng.integers(n))]
        if candidate != video and longest[candidate] >= length:
            return candidate
    best = None
    for index in rng.permutation(n):
        candidate = video_ids[int(index)]
        if candidate == video:
            continue
        if longest[candidate] >= length:
            return candidate
        if best is None or longest[candidate] > longest[best]:
            best = candidate
    return best


def _degraded_copy(video, human, video_ids, longest, rng):
    caption_id, tokens = human[video]
    length = degradation.degradable_length(tokens)
    donor = _choose_donor(video, length, video_ids, longest, rng)
    if donor is None:
        raise ValueError("degrading a human caption needs the human caption of at least one other video")
    length = min(length, longest[donor])
    result = degradation.degrade(tokens, human[donor][1], rng, length=length) if length else None
    if result is None:  # this donor only offers the very same words: try the others in turn
        for index in rng.permutation(len(video_ids)):
            other = video_ids[int(index)]
            if other != video and longest[other] >= 1:
                result = degradation.degrade(tokens, human[other][1], rng, length=min(length or 1, longest[other]))
                if result is not None:
                    donor = other
                    break
    if result is None:
        raise ValueError(f"no other human caption offers replacement words for the caption of video {video}")
    return caption_id, result, human[donor][0]


def plan(system_captions, human, layout, rng):
    """Plan HITs.

    ``system_captions``: sequence of ``(caption_id, video_id)`` of every caption shown as a system item (the
    campaign service leaves the human system's out: its originals score it). ``human``: mapping ``video_id -> (caption_id, tokens)`` of the human captions (the
    source of originals and degraded copies). ``rng``: a numpy Generator (seeded by the caller).
    Returns a list of PlannedHIT."""
    layout.validate()
    captions = np.asarray(sorted(system_captions), dtype=np.int64).reshape(-1, 2)
    if len(captions) == 0:
        raise ValueError("there are no system captions to plan")
    video_ids = sorted(human)
    degradable = [v for v in video_ids if degradation.degradable_length(human[v][1]) > 0]
    if len(degradable) < layout.pairs_per_hit:
        raise ValueError(
            f"{len(degradable)} human captions can be degraded (3 words or more), but a HIT needs "
            f"{layout.pairs_per_hit} originals"
        )
    longest = {v: degradation.longest_word_run(human[v][1]) for v in video_ids}
    slots = layout.system_slots
    order = captions[rng.permutation(len(captions))]
    chunks = [order[i : i + slots] for i in range(0, len(order), slots)]
    if len(chunks) > 1 and len(chunks[-1]) < slots:
        last = chunks[-1]
        others = order[: len(order) - len(last)]
        extra = others[rng.choice(len(others), slots - len(last), replace=False)]
        chunks[-1] = np.concatenate([last, extra])
    degradable_array = np.asarray(degradable, dtype=np.int64)
    uses = np.zeros(len(degradable_array), dtype=np.int64)
    return [_plan_hit(chunk, degradable_array, uses, human, video_ids, longest, layout, rng) for chunk in chunks]


def _choose_originals(degradable, uses, chunk_videos, n_pairs, rng):
    """``n_pairs`` distinct videos of ``degradable`` for a HIT's originals: the least used first, then videos
    whose captions are not in the HIT, random among equals. Updates ``uses``."""
    order = np.lexsort((rng.random(len(degradable)), np.isin(degradable, chunk_videos), uses))
    chosen = order[:n_pairs]
    uses[chosen] += 1
    return degradable[chosen]


def _plan_hit(chunk, degradable, uses, human, video_ids, longest, layout, rng):
    n_pairs, n_repeats = layout.pairs_per_hit, min(layout.repeats_per_hit, len(chunk))
    size = len(chunk) + 2 * n_pairs + n_repeats
    distance = min(layout.min_distance, size // 2)
    originals = _choose_originals(degradable, uses, chunk[:, 1], n_pairs, rng)
    repeated = rng.choice(len(chunk), n_repeats, replace=False)

    pairs = [(False, "pair", int(video)) for video in originals] + [(True, "repeat", int(i)) for i in repeated]
    positions = place_pairs(size, [ordered for ordered, _, _ in pairs], distance, rng)
    items: list[PlannedItem | None] = [None] * size
    for (_, kind, ref), (first, second) in zip(pairs, positions):
        if kind == "pair":
            caption_id, degraded, donor_caption_id = _degraded_copy(ref, human, video_ids, longest, rng)
            items[first] = PlannedItem("original", caption_id, partner=second)
            items[second] = PlannedItem(
                "degraded",
                caption_id,
                partner=first,
                tokens=degraded.tokens,
                degraded_range=(degraded.start, degraded.end),
                donor_caption_id=donor_caption_id,
            )
        else:
            caption_id = int(chunk[ref, 0])
            items[first] = PlannedItem("system", caption_id)
            items[second] = PlannedItem("repeat", caption_id, partner=first)
    repeated_set = set(repeated.tolist())
    rest = iter(int(c) for i, c in enumerate(chunk[:, 0]) if i not in repeated_set)
    for position in range(size):
        if items[position] is None:
            items[position] = PlannedItem("system", next(rest))
    return PlannedHIT(items=items)


# --- Can a worker reach the QC minimum? --------------------------------------------------------------------

PAPER_LAYOUT = Layout()  # 100 items: 10 pairs, 10 repeats, 70 system slots, controls at least 25 apart
MIN_WORKERS_PER_HIT = 3  # judgments per caption when every worker does the HITs they need (see suggest)


def n_hits(n_captions, layout):
    """HITs the planner makes for ``n_captions`` system captions (as ``plan`` chunks them)."""
    return max(1, math.ceil(n_captions / layout.system_slots))


@functools.lru_cache(maxsize=64)
def pairs_to_pass(test, threshold):
    """The fewest pairs with which ``test`` can give p < ``threshold`` at all: a worker whose every original
    scores far above its degraded copy (distinct differences, SciPy's own p-value). 5 for the one-sided
    Wilcoxon signed-rank test at 0.05 (p = 2^-n), 3 for Mann-Whitney (every degraded copy scored alike: SciPy's
    tie-corrected normal approximation), 2 for the paired t-test."""
    from .rank_tests import TESTS

    function = TESTS[test]
    for n in range(1, 200):
        x = (100.0 + np.arange(n) * 3)[None, :]
        _, p = function(x, np.zeros((1, n)), alternative="greater")
        if np.isfinite(p[0]) and p[0] < threshold:
            return n
    raise ValueError(f"the {test} test never reaches p < {threshold}")


@dataclass(frozen=True)
class Reach:
    """What a worker can reach with a layout: HITs, pairs per HIT, pairs over every HIT of the plan."""

    n_hits: int
    pairs_per_hit: int
    reachable_pairs: int
    needed_pairs: int  # max(QC minimum, pairs the test needs to pass at all)

    @property
    def ok(self):
        return self.reachable_pairs >= self.needed_pairs

    @property
    def hits_per_worker(self):
        """HITs a worker must do to reach the needed pairs."""
        return math.ceil(self.needed_pairs / self.pairs_per_hit)


def reach(layout, n_captions, needed_pairs):
    hits = n_hits(n_captions, layout)
    return Reach(
        n_hits=hits,
        pairs_per_hit=layout.pairs_per_hit,
        reachable_pairs=hits * layout.pairs_per_hit,
        needed_pairs=needed_pairs,
    )


def default_workers_per_hit(hits_per_worker):
    """At least MIN_WORKERS_PER_HIT judgments of every caption (a caption keeps scores when one of its workers
    fails QC), and a multiple of the HITs a worker needs, so that the assignments of a campaign divide into
    workers who each do enough HITs to be assessed."""
    k = max(1, hits_per_worker)
    return k * math.ceil(MIN_WORKERS_PER_HIT / k)


def suggest(n_captions, n_degradable, needed_pairs):
    """A layout (and workers per HIT) for ``n_captions`` system captions and ``n_degradable`` degradable human
    captions in which a worker can reach ``needed_pairs`` pairs. The paper's HIT of 100 when the dataset allows
    it; otherwise as many pairs per HIT as there are degradable human captions (at most 10), HITs small enough
    that there are as many as a worker needs, and the paper's proportion of repeats (1 per 7 system slots).
    Returns ``(Layout, workers_per_hit)``; raises ValueError when no layout can work."""
    if n_captions < 1:
        raise ValueError("there are no system captions to plan")
    if n_degradable < 1:
        raise ValueError("no human caption can be degraded (3 words or more): there can be no QC pairs")
    if n_degradable >= PAPER_LAYOUT.pairs_per_hit:
        paper = reach(PAPER_LAYOUT, n_captions, needed_pairs)
        if paper.ok:
            return PAPER_LAYOUT, default_workers_per_hit(paper.hits_per_worker)
    pairs = min(PAPER_LAYOUT.pairs_per_hit, n_degradable)
    k = math.ceil(needed_pairs / pairs)
    slots = min(PAPER_LAYOUT.system_slots, n_captions // k)
    if slots < 1:
        raise ValueError(
            f"{n_captions} system captions and {n_degradable} degradable human captions cannot give a "
            f"worker {needed_pairs} pairs (at most {n_captions * pairs} with HITs of one system "
            "caption)"
        )
    repeats = min(pairs, max(1, round(slots / 7)), slots)
    hit_size = slots + 2 * pairs + repeats
    layout = Layout(
        hit_size=hit_size, pairs_per_hit=pairs, repeats_per_hit=repeats, min_distance=max(2, hit_size // 4)
    ).validate()
    return layout, default_workers_per_hit(reach(layout, n_captions, needed_pairs).hits_per_worker)


def alternatives(layout, n_captions, n_degradable, needed_pairs, qc_min_pairs, test_minimum):
    """Changes of ``layout`` (one value at a time, with the minimum distance when it must follow) that would let a
    worker reach the needed pairs: a list of ``(text, {field: value})``."""
    found = []
    for pairs in range(layout.pairs_per_hit + 1, n_degradable + 1):
        candidate = Layout(layout.hit_size, pairs, layout.repeats_per_hit, layout.min_distance)
        try:
            candidate.validate()
        except ValueError:
            break
        if reach(candidate, n_captions, needed_pairs).ok:
            found.append((f"{pairs} or more original/degraded pairs per HIT", {"pairs_per_hit": pairs}))
            break
    for size in range(layout.hit_size - 1, 2 * layout.pairs_per_hit + max(1, layout.repeats_per_hit) - 1, -1):
        distance = min(layout.min_distance, size // 2)
        candidate = Layout(size, layout.pairs_per_hit, layout.repeats_per_hit, distance)
        try:
            candidate.validate()
        except ValueError:
            break
        result = reach(candidate, n_captions, needed_pairs)
        if result.ok:
            change = {"hit_size": size}
            text = f"at most {size} items per HIT ({result.n_hits} HITs"
            if distance != layout.min_distance:
                change["min_control_distance"] = distance
                text += f", controls at most {distance} apart"
            found.append((text + ")", change))
            break
    reachable = reach(layout, n_captions, needed_pairs).reachable_pairs
    if qc_min_pairs > reachable >= test_minimum:
        found.append((f"a QC minimum of at most {reachable} pairs", {"qc_min_pairs": reachable}))
    return found
