"""Display helpers of the factuality pages. Everything is escaped before any markup is added."""

import functools
import html
import re

from django import template
from django.utils.formats import localize
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe

register = template.Library()

_BRACKETS = re.compile(r"\[([^\[\]\n]+)\]")


def _inline(text):
    return _BRACKETS.sub(r'<mark class="error-span">\1</mark>', escape(text))


@register.filter
def instructions(text):
    """Render instructions text: '## ' headings, '- ' list items (continued by indented lines), paragraphs
    separated by blank lines, and [bracketed words] shown as marked error spans."""
    html, paragraph, items = [], [], []

    def flush():
        if paragraph:
            html.append("<p>" + _inline(" ".join(paragraph)) + "</p>")
            paragraph.clear()
        if items:
            html.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
            items.clear()

    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("## "):
            flush()
            html.append(f"<h2>{_inline(line[3:])}</h2>")
        elif line.startswith("- "):
            if paragraph:
                flush()
            items.append(line[2:])
        elif items and raw[:1].isspace():
            items[-1] += " " + line
        else:
            if items:
                flush()
            paragraph.append(line)
    flush()
    return mark_safe("\n".join(html))


@register.filter
def seconds(value):
    """Seconds as "1 min 05 s" / "42 s"; an em dash for None."""
    if value is None:
        return "—"
    value = int(round(float(value)))
    minutes, secs = divmod(value, 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


@register.filter
def share(value, digits=0):
    if value is None:
        return "—"
    return f"{float(value) * 100:.{int(digits)}f}%"


@register.filter
def alpha(value):
    return "—" if value is None else f"{value:.3f}"


@register.filter
def token_spans(tokens):
    """A sentence's words as the annotation page's ``<span class="tok">`` elements, separated by spaces (the
    first in the tab order): made in Python, one string per sentence, instead of a template loop that rendered
    three variables per word (issue #11, "Load"). Each word is escaped. The markup of recent sentences is kept
    (every annotator of a video sees the same sentences). Words are escaped with the standard library's
    ``html.escape``, which Django's ``escape`` wraps: the same text, four times faster per word without the
    wrappers (a word from the database is never already-safe markup)."""
    return _token_markup(tuple(tokens))


@functools.lru_cache(maxsize=4096)
def _token_markup(tokens):
    return mark_safe(
        " ".join(
            f'<span class="tok" data-t="{index}" tabindex="{0 if index == 0 else -1}">{html.escape(token)}</span>'
            for index, token in enumerate(tokens)
        )
    )


# The annotation page's per-paragraph markup, made in Python (issue #11, "Load": the template loops rendered
# about 170 variables per page). Each returns exactly what the template loop it replaced rendered, whitespace
# included (tests/factuality/test_pages.py compares them). What depends only on the project's scale is made once
# per scale and kept.
_INDEX = "\x00paragraph\x00"  # where the paragraph's index goes in the kept scale markup (no label holds NUL)


@functools.lru_cache(maxsize=256)
def _likert_markup(scale):
    return "".join(
        '\n                <label class="fact-likert__option">'
        f'\n                  <input type="radio" name="score-{_INDEX}" value="{conditional_escape(localize(value))}">'
        f'\n                  <span class="fact-likert__value">{conditional_escape(localize(value))}</span>'
        f'\n                  <span class="fact-likert__anchor">{conditional_escape(label)}</span>'
        "\n                </label>\n              "
        for value, label in scale
    )


@register.filter
def likert_options(scale, index):
    """The radio buttons of one paragraph's score: ``scale`` is ``[(value, label), ...]``, ``index`` the
    paragraph's index (the buttons' name)."""
    markup = _likert_markup(tuple((value, label) for value, label in scale))
    return mark_safe(markup.replace(_INDEX, conditional_escape(localize(index))))


@register.filter
def sentence_items(paragraph):
    """The ``<li>`` of each sentence of a paragraph (``{"letter", "sentences": [{"index", "tokens"}]}``): the
    flag button, the words (``token_spans``) and the list of marked words."""
    letter = conditional_escape(paragraph["letter"])
    out = []
    for number, sentence in enumerate(paragraph["sentences"], start=1):
        where = f"{letter}, sentence {number}"
        out.append(
            f'\n                <li class="fact-sentence" data-sentence="{conditional_escape(localize(sentence["index"]))}">'
            '\n                  <button type="button" class="fact-flag" data-action="flag" aria-pressed="false">'
            f'\n                    <span class="visually-hidden">Paragraph {where}: </span><span data-role="flag-text">Error?</span>'
            "\n                  </button>"
            '\n                  <div class="fact-sentence__body">'
            f'\n                    <p class="fact-tokens" role="group" aria-label="Words of paragraph {where}" aria-describedby="span-hint">'
            f"{token_spans(sentence['tokens'])}</p>"
            f'\n                    <ul class="fact-spans" data-role="spans" aria-label="Marked words of paragraph {where}"></ul>'
            "\n                  </div>"
            "\n                </li>\n              "
        )
    return mark_safe("".join(out))
