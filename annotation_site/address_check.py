"""A request whose address holds a NUL character (``%00`` in its path or query string), or whose form fields do
(a urlencoded or multipart POST body; not the contents of uploaded files), is answered 400 before any view runs.

No name, id or filter value of the platform contains NUL, and PostgreSQL's text cannot hold it: psycopg2 refuses
such a value when a view looks it up, which was a 500 on PostgreSQL for dozens of views (a dataset, project or
task name in the path, a filter in the query string; a dataset or study named in a form field that a view looks
up without a Django form: 2026-11-27), where SQLite simply found nothing. One check here covers every view,
present and future. JSON bodies and uploaded files are checked where they are read (``safe_json``,
``uploads``).

The address is checked first thing; form fields after the rate limits (``NulInFormMiddleware``, late in
``MIDDLEWARE``), so a client over its limit is refused before its body is read.
"""

from django.http import HttpResponse, JsonResponse

MESSAGE = "The address holds a NUL character (%00), which no name, id or value of this site contains."
FORM_MESSAGE = "The form holds a NUL character, which no name, id or value of this site contains."
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _page(title, message, advice):
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width, initial-scale=1"><title>{title}</title></head><body>'
        f"<h1>{title}</h1><p>{message} {advice}</p></body></html>"
    )


PAGE = _page("Bad address", MESSAGE, "Check the link you followed.")
FORM_PAGE = _page("Bad form", FORM_MESSAGE, "Go back, type the values again without it and send the form again.")


def _refused(request, message, page):
    if request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"detail": message}, status=400)
    return HttpResponse(page, status=400, content_type="text/html; charset=utf-8")


def _holds_nul(query):
    """A name or value of a QueryDict (the query string, a form's fields) holds NUL."""
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in query.lists())


def holds_nul(request):
    if "\x00" in request.path:
        return True
    if "%00" not in request.META.get("QUERY_STRING", ""):  # the only spelling that decodes to NUL
        return False
    return _holds_nul(request.GET)


class NulInAddressMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not holds_nul(request):
            return self.get_response(request)
        return _refused(request, MESSAGE, PAGE)


def reads_raw_body(view):
    """Mark a view that reads ``request.body`` itself (a signed webhook): its form fields are not read here, which
    would use up a multipart body before the view reads it."""
    view.reads_raw_body = True
    return view


def form_holds_nul(request, view):
    if request.method != "POST" or request.content_type not in FORM_TYPES or getattr(view, "reads_raw_body", False):
        return False
    return _holds_nul(request.POST)


class NulInFormMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        return _refused(request, FORM_MESSAGE, FORM_PAGE) if form_holds_nul(request, view_func) else None
