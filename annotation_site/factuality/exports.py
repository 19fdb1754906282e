"""Downloads of a project: its aggregated labels as the FactVC ``factuality_annotation.json`` (through the
interchange writer, so the file is exactly what ``export_dataset --format factvc --labels NAME`` writes), and
the file name of each download."""
from django.http import HttpResponse

from annotation_site.interchange import factvc
from annotation_site.interchange.services import export_bundle


class NothingToExport(Exception):
    pass


def factvc_text(project):
    """The aggregated labels of a project in the FactVC layout (brackets around error spans)."""
    if project.label_set_id is None:
        raise NothingToExport(f"project {project.name} has no aggregated labels yet: aggregate it first")
    return factvc.write_annotation(export_bundle(project.dataset, label_set=project.label_set))


FACTVC_FILENAME = factvc.ANNOTATION


def raw_filename(project):
    return f"{project.name}-labels.jsonl"


def attachment(text, filename, content_type):
    """A download response (the pages and the API use the same)."""
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
