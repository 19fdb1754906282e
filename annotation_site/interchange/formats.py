"""The dataset formats by name: how to read one into a bundle and write a bundle out.

``factvc``: the ActivityNet-Fact / YouCook2-Fact folder layout (see ``factvc``); export writes its
``factuality_annotation.json``. ``jsonl``: one caption per line (see ``jsonl``).
"""

import re

from annotation_site import uploads

from . import factvc, jsonl
from .sources import SingleFileSource, ZipSource, open_source

FORMATS = ("factvc", "jsonl")
_YOUTUBE_CLIP = re.compile(r"^(?:v_)?([A-Za-z0-9_-]{11})$")


def youtube_url(video_id):
    """ActivityNet and YouCook2 videos are YouTube clips named by their YouTube id (ActivityNet adds ``v_``)."""
    match = _YOUTUBE_CLIP.match(video_id)
    return f"https://www.youtube.com/watch?v={match.group(1)}" if match else ""


def read_path(fmt, path, *, youtube=True):
    """Read a dataset from a path (a FactVC folder, zip or annotation file; or a JSONL file)."""
    if fmt == "factvc":
        return factvc.read_folder(open_source(path), video_url=youtube_url if youtube else None)
    if fmt == "jsonl":
        return jsonl.read(uploads.path_text(path), filename=str(path))
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def read_upload(fmt, uploaded, *, youtube=True):
    """Read a dataset from an uploaded file (Django UploadedFile): a zip or JSON for factvc, JSONL for jsonl."""
    if fmt == "factvc":
        uploads.check_size(uploaded.name, uploaded.size)  # before anything is read
        head = uploaded.read(4)
        uploaded.seek(0)
        if head.startswith(b"PK"):
            source = ZipSource(uploaded, uploaded.name)
        else:
            source = SingleFileSource(factvc.ANNOTATION, uploads.upload_text(uploaded))
        return factvc.read_folder(source, video_url=youtube_url if youtube else None)
    if fmt == "jsonl":
        return jsonl.read(uploads.upload_text(uploaded), filename=uploaded.name)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


Unwritable = factvc.Unwritable  # what ``render`` raises for a bundle its format cannot say


def render(fmt, bundle):
    if fmt == "factvc":
        return factvc.write_annotation(bundle)
    if fmt == "jsonl":
        return jsonl.write(bundle)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def filename(fmt, dataset_name):
    return "factuality_annotation.json" if fmt == "factvc" else f"{dataset_name}.jsonl"


def content_type(fmt):
    return "application/json" if fmt == "factvc" else "application/x-ndjson"
