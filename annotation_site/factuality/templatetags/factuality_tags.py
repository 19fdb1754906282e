"""Display helpers of the factuality pages. Everything is escaped before any markup is added."""

import re

from django import template
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
    three variables per word (issue #11, "Load"). Each word is escaped."""
    return mark_safe(
        " ".join(
            f'<span class="tok" data-t="{index}" tabindex="{0 if index == 0 else -1}">{conditional_escape(token)}</span>'
            for index, token in enumerate(tokens)
        )
    )
