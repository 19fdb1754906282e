"""Reading untrusted JSON (issue #11, "Server errors instead of clear errors").

Every JSON body and file the platform reads goes through :func:`loads`: the REST API's parser
(:class:`SafeJSONParser`, the default of every API view), the Prolific webhook, the MTurk answers column and the
importers (JSONL datasets, FactVC files, raw labels, task items and answers, metric scores and pairs). Python's
``json`` accepts things the rest of the platform cannot store or would crash on; they are refused here, before
any work is done, with a message that says what and where:

- nesting deeper than ``CAPTIONEVAL_JSON_MAX_DEPTH`` (default 32; the interpreter's recursion limit would
  otherwise turn a deep document into a 500);
- numbers longer than ``CAPTIONEVAL_JSON_MAX_NUMBER_LENGTH`` characters (default 40; Python refuses integers of
  more than 4300 digits with a ValueError, and big ones cost quadratic time), and ``NaN`` / ``Infinity``;
- strings (values and keys) holding a lone UTF-16 surrogate (``"\\ud800"``: no UTF-8 spelling, PostgreSQL and
  every encoder refuse it) or a NUL character (PostgreSQL text cannot hold it);
- bytes that are not UTF-8;
- an object that names a key twice (``json`` keeps the last silently: a score file's record with ``"score"``
  twice was stored with whichever came last). A caller passing its own ``object_pairs_hook`` decides itself.

:class:`JSONInputError` is a ``json.JSONDecodeError``, so importers that report ``exc.msg`` with a line and
column keep working; ``exc.path`` names the field (``$.sentences[2].text``).
"""

import json
import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

DEFAULT_MAX_DEPTH = 32
DEFAULT_MAX_NUMBER_LENGTH = 40
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|"
    r"(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class JSONInputError(json.JSONDecodeError):
    def __init__(self, msg, doc="", pos=0, path="$"):
        super().__init__(msg, doc if isinstance(doc, str) else "", max(0, pos))
        self.path = path

    def __reduce__(self):
        return self.__class__, (self.msg, self.doc, self.pos, self.path)


def max_depth():
    return int(getattr(settings, "CAPTIONEVAL_JSON_MAX_DEPTH", DEFAULT_MAX_DEPTH))


def max_number_length():
    return int(getattr(settings, "CAPTIONEVAL_JSON_MAX_NUMBER_LENGTH", DEFAULT_MAX_NUMBER_LENGTH))


class _NumberTooLong(Exception):
    pass


def loads(data, **options):
    """``json.loads`` for untrusted input; raises :class:`JSONInputError` (a ``json.JSONDecodeError``)."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", "", 0) from None
    limit = max_number_length()

    def number(kind):
        def parse(text):
            if len(text) > limit:
                raise _NumberTooLong(text)
            return kind(text)

        return parse

    def constant(name):
        raise JSONInputError(f"{name} is not a number JSON allows", data, data.find(name))

    unique_keys = "object_pairs_hook" not in options and "object_hook" not in options
    if unique_keys:
        options["object_pairs_hook"] = no_duplicate_keys
    try:
        value = json.loads(data, parse_int=number(int), parse_float=number(float), parse_constant=constant, **options)
    except DuplicateKey as exc:
        if not unique_keys:
            raise
        raise JSONInputError(
            f"key {exc.args[0]!r} appears more than once in an object", data, _duplicate_key_position(data)
        ) from None
    except _NumberTooLong as exc:
        text = exc.args[0]
        raise JSONInputError(
            f"a number of {len(text)} characters (at most {limit})", data, data.find(text[:limit])
        ) from None
    except RecursionError:
        raise JSONInputError(
            f"nested more than {max_depth()} levels deep", data, _deep_position(data, max_depth())
        ) from None
    check(value, data)
    return value


def check(value, doc=""):
    """Refuse too deep nesting, lone surrogates and NUL characters anywhere in a parsed value."""
    depth_limit = max_depth()
    stack = [(value, 1, "$")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict):
            if depth > depth_limit:
                raise JSONInputError(
                    f"nested more than {depth_limit} levels deep", doc, _deep_position(doc, depth_limit), path
                )
            for key, child in item.items():
                child_path = f"{path}.{key}" if _plain_key(key) else f"{path}[{json.dumps(key)[:60]}]"
                _check_string(key, doc, child_path, "key")
                stack.append((child, depth + 1, child_path))
        elif isinstance(item, list):
            if depth > depth_limit:
                raise JSONInputError(
                    f"nested more than {depth_limit} levels deep", doc, _deep_position(doc, depth_limit), path
                )
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str):
            _check_string(item, doc, path, "value")


def _plain_key(key):
    return isinstance(key, str) and key.isidentifier() and key.isascii()


def _check_string(text, doc, path, what):
    if "\x00" in text:
        match = _NUL_ESCAPE.search(doc) if doc else None
        raise JSONInputError(
            f"the {what} at {path} holds a NUL character (\\u0000)", doc, match.end() - 6 if match else 0, path
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        match = _LONE_SURROGATE_ESCAPE.search(doc) if doc else None
        raise JSONInputError(
            f"the {what} at {path} holds a lone UTF-16 surrogate (not a character)",
            doc,
            match.start() if match else 0,
            path,
        ) from None


def _duplicate_key_position(doc):
    """Where the (innermost) object that names a key twice starts; only computed on the error path, by parsing
    again with ``json``'s Python scanner, which knows positions (the C one does not)."""
    found = []

    def parse_object(s_and_end, *args, **kwargs):
        try:
            return json.decoder.JSONObject(s_and_end, *args, **kwargs)
        except DuplicateKey:
            if not found:
                found.append(s_and_end[1] - 1)  # (the scanner passes the position after the "{")
            raise

    decoder = json.JSONDecoder(object_pairs_hook=no_duplicate_keys)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(doc)
    except (DuplicateKey, ValueError, RecursionError):
        pass
    return found[0] if found else 0


def _deep_position(doc, limit):
    """Where nesting first goes deeper than ``limit`` (only computed on the error path)."""
    depth, in_string, escaped = 0, False, False
    for position, char in enumerate(doc or ""):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return position
        elif char in "]}":
            depth -= 1
    return 0


class DuplicateKey(ValueError):
    """An object of the JSON names a key twice (``args[0]``)."""


def no_duplicate_keys(pairs):
    """``object_pairs_hook`` refusing an object that names a key twice: ``json`` keeps the last silently, so a
    line with two ``paragraph_score`` fields was stored with whichever came last."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


_LINE_END = re.compile(r"\r\n|\r|\n")


def text_lines(text):
    """The lines of a text file as an editor numbers them: split at CRLF, LF or a lone CR (old Mac files) only.
    ``str.splitlines`` also splits at U+2028, U+2029, NEL, form feed and more, which JSON writers leave raw
    inside strings (``ensure_ascii=False``, as the platform's own exports write): a line was cut in two there,
    refused as invalid JSON, and every later line number was off by one. (JSON never holds a raw CR or LF
    inside a string.)"""
    return _LINE_END.split(text)


def object_lines(text, problem):
    """``(line number, object)`` of each line of JSONL text that holds a JSON object (blank lines are skipped);
    ``problem(line number, message)`` is told of every other line (invalid JSON, not an object). The one reading
    of JSONL for every importer (datasets, raw labels, task items and model answers)."""
    for number, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        try:
            obj = loads(line, object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as exc:
            problem(number, f"key {exc.args[0]!r} appears more than once")
            continue
        except json.JSONDecodeError as exc:
            problem(number, f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            problem(number, "each line must be a JSON object")
            continue
        yield number, obj


def describe(exc):
    """A one-line message for an error of :func:`loads` (what, then line and column)."""
    return f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, reading through :func:`loads` (a clear 400 for everything it refuses); the body must be
    a JSON object, as every request body of the API is."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text ({exc})") from None
        try:
            value = loads(text)
        except JSONInputError as exc:
            raise ParseError(f"JSON parse error - {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        except json.JSONDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        if not isinstance(value, dict):
            # every request body of the API is an object (the schema says so); views read it with .get()
            kind = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(
                type(value), "a number"
            )
            raise ParseError(f"JSON parse error - the body must be a JSON object ({{...}}), not {kind}")
        return value
