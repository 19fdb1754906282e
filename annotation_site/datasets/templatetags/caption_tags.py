"""Display helpers for the dataset pages. They return plain values; the templates escape everything."""

from django import template

register = template.Library()


@register.filter
def token_runs(tokens):
    """Group a sentence's ``[(token, is_error), ...]`` into runs ``[{"text", "error"}]`` of consecutive tokens with
    the same marking, so an error span of several words is one highlighted stretch of text."""
    runs = []
    for token, is_error in tokens:
        is_error = bool(is_error)
        if runs and runs[-1]["error"] == is_error:
            runs[-1]["words"].append(token)
        else:
            runs.append({"error": is_error, "words": [token]})
    return [{"error": run["error"], "text": " ".join(run["words"])} for run in runs]


@register.filter
def clock(seconds):
    """Seconds as ``m:ss.s`` (``h:mm:ss.s`` from an hour on); empty for None."""
    if seconds is None or seconds == "":
        return ""
    try:
        tenths = round(float(seconds) * 10)
    except (TypeError, ValueError):
        return ""
    sign = "-" if tenths < 0 else ""
    tenths = abs(tenths)
    total, tenth = divmod(tenths, 10)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}.{tenth}"
    return f"{sign}{minutes}:{secs:02d}.{tenth}"


@register.filter
def percent(value, digits=0):
    """A share 0..1 as a percentage string; empty for None."""
    if value is None:
        return ""
    return f"{float(value) * 100:.{int(digits)}f}%"
