"""Degraded copies of human captions, the known-bad half of the quality-control pairs.

Source: Graham, Awad & Smeaton, "Evaluation of automatic video captioning using direct assessment", PLoS ONE
2018, section "Quality control" (after Graham et al. 2017 for MT): a non-initial, non-final run of words of the
human caption is replaced by a run of words of the same length taken from the human caption of a *different*
video, so that the result stays fluent but no longer describes the video. The run length depends on the
caption's number of words N:

    N:      1    2-5   6-8   9-15   16-20   > 20
    run:    1    2     3     4      5       floor(N / 4)

Decisions where the paper is silent (docs/direct-assessment.md, "Degradation"):

- Captions are whitespace tokens (as stored by the corpus). Punctuation tokens ("." "," ...) are not words: N
  counts *word* tokens (tokens with a letter or digit), and both the replaced run and the replacement are runs of
  consecutive word tokens, so a run never crosses a sentence end and punctuation stays in place.
- Non-initial, non-final: the run leaves the caption's first and last word in place.
- Short captions (where the rule cannot hold): when no run of the table's length fits strictly between the first
  and the last word (N <= length + 1, or punctuation splits the interior), the run is shortened to the longest run
  of interior words. A caption of fewer than 3 words has no interior word and cannot be degraded; it is never
  used as a QC original. If no other caption has a run of words as long as the chosen run, the run is shortened
  to the longest run the best donor has.
- The replacement is never the same words as the replaced run (compared case-insensitively).

A degraded copy keeps the original's token count, so the replaced token range ``[start, end)`` indexes both.
"""

from dataclasses import dataclass


def run_length(n_words):
    """Length of the replaced run for a caption of ``n_words`` words (the paper's table)."""
    if n_words < 1:
        return 0
    if n_words == 1:
        return 1
    if n_words <= 5:
        return 2
    if n_words <= 8:
        return 3
    if n_words <= 15:
        return 4
    if n_words <= 20:
        return 5
    return n_words // 4


def is_word(token):
    return any(ch.isalnum() for ch in token)


def _word_runs(tokens, lo=0, hi=None):
    """Maximal runs of consecutive word tokens within tokens[lo:hi], as (start, end) pairs."""
    hi = len(tokens) if hi is None else hi
    runs, start = [], None
    for i in range(lo, hi):
        if is_word(tokens[i]):
            if start is None:
                start = i
        elif start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, hi))
    return runs


def _interior(tokens):
    """(lo, hi): the token range strictly between the first and the last word, or None for < 3 words."""
    words = [i for i, token in enumerate(tokens) if is_word(token)]
    if len(words) < 3:
        return None
    return words[0] + 1, words[-1]


def n_words(tokens):
    return sum(1 for token in tokens if is_word(token))


def degradable_length(tokens):
    """The run length this caption's degraded copy replaces (0: the caption cannot be degraded)."""
    interior = _interior(tokens)
    if interior is None:
        return 0
    longest = max((end - start for start, end in _word_runs(tokens, *interior)), default=0)
    return min(run_length(n_words(tokens)), longest)


def longest_word_run(tokens):
    return max((end - start for start, end in _word_runs(tokens)), default=0)


def run_starts(tokens, length, interior_only=False):
    """Start indices of runs of ``length`` consecutive words (inside the interior when ``interior_only``)."""
    if length < 1:
        return []
    bounds = _interior(tokens) if interior_only else (0, len(tokens))
    if bounds is None:
        return []
    return [s for start, end in _word_runs(tokens, *bounds) for s in range(start, end - length + 1)]


@dataclass(frozen=True)
class Degradation:
    tokens: list
    start: int
    end: int

    @property
    def text(self):
        return " ".join(self.tokens)


def degrade(tokens, donor_tokens, rng, length=None):
    """Replace a run of ``length`` (default: ``degradable_length``) interior words of ``tokens`` with a run of
    as many consecutive words of ``donor_tokens``. ``rng`` is a numpy Generator. Returns a Degradation, or None
    when it cannot be done with this donor (no run that long, or only identical words)."""
    length = degradable_length(tokens) if length is None else length
    starts = run_starts(tokens, length, interior_only=True)
    donor_starts = run_starts(donor_tokens, length)
    if not starts or not donor_starts:
        return None
    for start in rng.permutation(starts):
        start = int(start)
        replaced = [t.lower() for t in tokens[start : start + length]]
        for donor_start in rng.permutation(donor_starts):
            replacement = donor_tokens[int(donor_start) : int(donor_start) + length]
            if [t.lower() for t in replacement] != replaced:
                return Degradation(
                    tokens=tokens[:start] + list(replacement) + tokens[start + length :],
                    start=start,
                    end=start + length,
                )
    return None
