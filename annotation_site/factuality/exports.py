"""Downloads of a project: the file name of its raw labels and the download response the pages and the API
share. (The FactVC download of its aggregated labels is written by the interchange formats, which sit above
factuality: ``interchange.services.project_factvc_text``, served by ``datasets`` and ``interchange.api``.)"""

from annotation_site.workflow.downloads import attachment as attachment  # the pages' and the API's downloads


def raw_filename(project):
    return f"{project.name}-labels.jsonl"
