"""Tokens and error spans of caption sentences.

Sentences are tokenised on whitespace, as in the FactVC release (its captions are lower-cased and already
space-tokenised, punctuation split off). A span is a pair ``(start, end)`` of token indices, end exclusive.
The FactVC files mark erroneous words inline with square brackets around whole tokens:
``"the girls end by [holding a pose] ."`` is the tokens of the plain sentence with the span (5, 8).
"""


class BracketError(ValueError):
    """A bracketed sentence that cannot be read as tokens plus spans."""


def tokenize(text):
    return text.split()


def parse_bracketed(text):
    """Split a bracket-marked sentence into ``(tokens, spans)``; raise BracketError when malformed."""
    tokens, spans = [], []
    open_at = None
    for raw in text.split():
        token = raw
        opens = token.startswith("[")
        if opens:
            token = token[1:]
        closes = token.endswith("]")
        if closes:
            token = token[:-1]
        if "[" in token or "]" in token:
            raise BracketError(f"bracket inside the word {raw!r}: brackets must enclose whole words")
        if not token:
            raise BracketError("empty brackets '[]'")
        if opens:
            if open_at is not None:
                raise BracketError(f"nested '[' at word {len(tokens) + 1} ({raw!r})")
            open_at = len(tokens)
        tokens.append(token)
        if closes:
            if open_at is None:
                raise BracketError(f"']' without '[' at word {len(tokens)} ({raw!r})")
            spans.append((open_at, len(tokens)))
            open_at = None
    if open_at is not None:
        raise BracketError(f"unbalanced brackets: '[' at word {open_at + 1} is never closed")
    return tokens, spans


def validate_spans(spans, n_tokens):
    """Return the spans as sorted tuples; raise ValueError unless they are a list of pairs in range that do not
    overlap."""
    if not isinstance(spans, (list, tuple)):  # a number was a TypeError (a 500), text was read as its characters
        raise ValueError(f"spans must be a list of [start, end] pairs, not {spans!r}")
    cleaned = []
    for span in spans:
        if not isinstance(span, (list, tuple)) or len(span) != 2 or not all(type(i) is int for i in span):
            raise ValueError(f"span {span!r} is not a pair of integers [start, end]")
        start, end = span
        if not 0 <= start < end <= n_tokens:
            raise ValueError(f"span {list(span)} is outside the sentence's {n_tokens} tokens (need 0 <= start < end)")
        cleaned.append((start, end))
    cleaned.sort()
    for (_, end_a), (start_b, _) in zip(cleaned, cleaned[1:]):
        if start_b < end_a:
            raise ValueError(f"spans overlap: {cleaned}")
    return cleaned


def render_bracketed(tokens, spans):
    """The inverse of parse_bracketed: tokens joined by spaces, each span wrapped in brackets."""
    words = list(tokens)
    for start, end in spans:
        words[start] = "[" + words[start]
        words[end - 1] = words[end - 1] + "]"
    return " ".join(words)
