"""Downloads of a project: the file name of its raw labels and the download response the pages and the API
share. (The FactVC download of its aggregated labels is written by the interchange formats, which sit above
factuality: ``interchange.services.project_factvc_text``, served by ``datasets`` and ``interchange.api``.)"""
from django.http import HttpResponse


def raw_filename(project):
    return f"{project.name}-labels.jsonl"


def attachment(text, filename, content_type):
    """A download response (the pages and the API use the same)."""
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
