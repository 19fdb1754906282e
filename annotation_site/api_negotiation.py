"""Content negotiation of every API: never 406.

The API's file downloads (a dataset export, a project's or a task's labels, a campaign's judgments) are written by
their views as files (CSV, JSON lines, ...), not by a REST framework renderer, and the only renderers are JSON and
the browsable page. With the framework's negotiation a client that asks for what it will get (``Accept:
text/csv``) was refused with 406 before the view ran. Here an Accept header that no renderer matches gets the first
renderer (JSON): a download answers its file, anything rendered (an error, a JSON answer) answers JSON, as HTTP
allows a server to do when it cannot honour Accept."""

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class NeverNotAcceptable(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type
