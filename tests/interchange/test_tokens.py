import pytest

from annotation_site.corpus.tokens import BracketError, parse_bracketed, render_bracketed, validate_spans


@pytest.mark.parametrize(
    "text, tokens, spans",
    [
        ("a man is standing .", ["a", "man", "is", "standing", "."], []),
        ("he [cuts an onion] with a knife .", ["he", "cuts", "an", "onion", "with", "a", "knife", "."], [(1, 4)]),
        ("[UNK] plays .", ["UNK", "plays", "."], [(0, 1)]),
        ("the [camera] [man] waves", ["the", "camera", "man", "waves"], [(1, 2), (2, 3)]),
        (
            "ends [with one another] and ends [with one another] .",
            ["ends", "with", "one", "another", "and", "ends", "with", "one", "another", "."],
            [(1, 4), (6, 9)],
        ),
    ],
)
def test_parse_bracketed(text, tokens, spans):
    assert parse_bracketed(text) == (tokens, spans)
    assert render_bracketed(tokens, spans) == text


@pytest.mark.parametrize(
    "text, message",
    [
        ("a [man is here .", "never closed"),
        ("a man] is here", "without '['"),
        ("a [man [is] here]", "nested"),
        ("a m[a]n", "inside the word"),
        ("a [] man", "empty brackets"),
    ],
)
def test_parse_bracketed_rejects(text, message):
    with pytest.raises(BracketError, match=message.replace("[", r"\[")):
        parse_bracketed(text)


def test_validate_spans():
    assert validate_spans([[3, 4], [0, 2]], 5) == [(0, 2), (3, 4)]
    for bad in ([[0, 6]], [[2, 2]], [[-1, 1]], [[0, 3], [2, 4]], [[0, "1"]], [[1]]):
        with pytest.raises(ValueError):
            validate_spans(bad, 5)


@pytest.mark.parametrize("bad", [7, True, 1.5, "02", {"0": 2}])
def test_spans_that_are_not_a_list_are_refused_with_a_clear_error(bad):
    """A number was a TypeError (the factuality submit and the raw-label import answered 500); text and an object
    were read item by item, with an error about their characters or keys."""
    with pytest.raises(ValueError, match=r"^spans must be a list of \[start, end\] pairs, not "):
        validate_spans(bad, 5)
