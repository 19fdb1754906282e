"""Downloads every protocol serves the same way: the attachment response of the pages and the API, and the
``anonymise`` switch of raw-answer downloads (on unless ``0``, ``false`` or ``no``)."""

from django.http import HttpResponse


def attachment(text, filename, content_type):
    """A download response (the pages and the API use the same)."""
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def anonymise_requested(params):
    """Whether a download should anonymise annotators: ``params`` is ``request.GET`` or ``query_params``."""
    return params.get("anonymise", "1") not in ("0", "false", "no")
