"""Degradation (Graham, Awad & Smeaton 2018): the run-length table, the non-initial/non-final rule, words from
another caption, the short-caption rule and the stored token range."""

import numpy as np
import pytest

from assessment import degradation

# The paper's table, N words -> replaced run length, including every boundary.
TABLE = [
    (1, 1),
    (2, 2),
    (3, 2),
    (5, 2),
    (6, 3),
    (8, 3),
    (9, 4),
    (15, 4),
    (16, 5),
    (20, 5),
    (21, 5),
    (23, 5),
    (24, 6),
    (27, 6),
    (28, 7),
    (40, 10),
    (41, 10),
]


@pytest.mark.parametrize("n_words,length", TABLE)
def test_run_length_table(n_words, length):
    assert degradation.run_length(n_words) == length


def words(n):
    return [f"w{i}" for i in range(n)]


DONOR = "the donor caption talks about something else entirely with many different words here".split()


@pytest.mark.parametrize("n", [4, 5, 6, 8, 9, 12, 15, 16, 20, 21, 30, 44])
def test_replaces_a_non_initial_non_final_run_of_the_table_length(n):
    tokens = words(n)
    for seed in range(30):
        result = degradation.degrade(tokens, DONOR, np.random.default_rng(seed))
        length = degradation.run_length(n)
        assert result.end - result.start == length
        assert result.start >= 1 and result.end <= n - 1  # first and last word stay
        assert len(result.tokens) == n
        assert result.tokens[: result.start] == tokens[: result.start]
        assert result.tokens[result.end :] == tokens[result.end :]
        replacement = result.tokens[result.start : result.end]
        # the replacement is a run of consecutive words of the donor
        assert any(DONOR[i : i + length] == replacement for i in range(len(DONOR) - length + 1))
        assert replacement != tokens[result.start : result.end]


def test_every_admissible_start_is_used():
    tokens = words(12)  # run 4, starts 1..7
    starts = {degradation.degrade(tokens, DONOR, np.random.default_rng(s)).start for s in range(300)}
    assert starts == set(range(1, 8))


@pytest.mark.parametrize("n,expected", [(1, 0), (2, 0), (3, 1), (4, 2), (5, 2)])
def test_short_captions_shorten_the_run_or_cannot_be_degraded(n, expected):
    # N=3: the table says 2, but only 1 word lies between the first and the last: run of 1.
    # N=1, 2: no interior word: not degradable (never used as an original).
    tokens = words(n)
    assert degradation.degradable_length(tokens) == expected
    result = degradation.degrade(tokens, DONOR, np.random.default_rng(0))
    if expected == 0:
        assert result is None
    else:
        assert (result.start, result.end - result.start) == (1, expected)


def test_punctuation_is_not_a_word_and_runs_do_not_cross_it():
    tokens = "a man rides . the horse jumps high , then stops .".split()
    # words: a man rides the horse jumps high then stops = 9 words -> run 4; interior words between 'a' and
    # 'stops': "man rides" | "the horse jumps high" | "then": the only run of 4 is tokens 4-7
    assert degradation.n_words(tokens) == 9
    assert degradation.degradable_length(tokens) == 4
    for seed in range(20):
        result = degradation.degrade(tokens, DONOR, np.random.default_rng(seed))
        assert (result.start, result.end) == (4, 8)
        assert result.tokens[3] == "." and result.tokens[8] == "," and result.tokens[-1] == "."


def test_interior_punctuation_shortens_the_run_to_the_longest_interior_run():
    tokens = "a , b , c , d , e , f .".split()  # 6 words -> run 3, but no two interior words are adjacent
    assert degradation.degradable_length(tokens) == 1


def test_donor_without_a_long_enough_run_is_refused():
    assert degradation.degrade(words(12), "too . short .".split(), np.random.default_rng(0)) is None


def test_identical_replacement_words_are_never_used():
    tokens = "x the cat sat y".split()  # run 2 over interior "the cat sat"
    donor = "The Cat".split()  # the only donor run equals one original run (case-insensitively)
    for seed in range(20):
        result = degradation.degrade(tokens, donor, np.random.default_rng(seed))
        assert (result.start, result.end) == (2, 4)  # "cat sat" -> "The Cat", never "the cat" -> "The Cat"


def test_same_seed_same_degradation():
    a = degradation.degrade(words(30), DONOR, np.random.default_rng(5))
    b = degradation.degrade(words(30), DONOR, np.random.default_rng(5))
    assert a == b
