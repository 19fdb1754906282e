"""A request whose address holds a NUL character (``%00`` in its path or query string) is answered 400 before
any view runs.

No name, id or filter value of the platform contains NUL, and PostgreSQL's text cannot hold it: psycopg2 refuses
such a value when a view looks it up, which was a 500 on PostgreSQL for dozens of views (a dataset, project or
task name in the path, a filter in the query string), where SQLite simply found nothing. One check here covers
every view, present and future. Request bodies are checked where they are read (``safe_json``, ``uploads``,
Django's form fields).
"""

from django.http import HttpResponse, JsonResponse

MESSAGE = "The address holds a NUL character (%00), which no name, id or value of this site contains."
PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
    'content="width=device-width, initial-scale=1"><title>Bad address</title></head><body>'
    f"<h1>Bad address</h1><p>{MESSAGE} Check the link you followed.</p></body></html>"
)


def holds_nul(request):
    if "\x00" in request.path:
        return True
    if "%00" not in request.META.get("QUERY_STRING", ""):  # the only spelling that decodes to NUL
        return False
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists())


class NulInAddressMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not holds_nul(request):
            return self.get_response(request)
        if request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", ""):
            return JsonResponse({"detail": MESSAGE}, status=400)
        return HttpResponse(PAGE, status=400, content_type="text/html; charset=utf-8")
