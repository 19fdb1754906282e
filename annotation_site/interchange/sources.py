"""Where a dataset's files come from: a folder, a zip archive of the folder, or one uploaded file.

Each source answers ``read(relative_path)`` (text or None when absent) and ``list(folder)``, so readers
work the same on the command line (a folder) and over HTTP (an uploaded zip or a single JSON file).
"""

import posixpath
import zipfile
from pathlib import Path

from annotation_site import uploads


class DirectorySource:
    def __init__(self, path):
        self.root = Path(path)

    def read(self, relpath):
        path = self.root / relpath
        return uploads.decode_file(path, relpath) if path.is_file() else None

    def list(self, folder):
        path = self.root / folder
        if not path.is_dir():
            return []
        return sorted(f"{folder}/{p.name}" for p in path.iterdir() if p.is_file())


class ZipSource:
    """A zip archive of the folder; the folder may be the archive's root or its single top-level directory."""

    def __init__(self, fileobj, name="archive.zip"):
        self.zip = uploads.open_zip(fileobj, name)  # limits checked before anything is decompressed
        names = self.zip.namelist()
        self.names = set(names)
        self.prefix = ""
        marker = "factuality_annotation.json"
        candidates = sorted((n for n in names if posixpath.basename(n) == marker), key=lambda n: (len(n), n))
        if candidates:
            self.prefix = candidates[0][: -len(marker)]
        # more than one dataset folder: reading the first would import it alone, without a word about the rest
        self.other_folders = [n[: -len(marker)] or "(the archive's root)" for n in candidates[1:]]

    def read(self, relpath):
        name = self.prefix + relpath
        if name not in self.names:
            return None
        return self.zip.read_text(name)

    def list(self, folder):
        start = self.prefix + folder.rstrip("/") + "/"
        return sorted(n[len(self.prefix) :] for n in self.names if n.startswith(start) and "/" not in n[len(start) :])


class SingleFileSource:
    """One file given on its own (e.g. an uploaded factuality_annotation.json)."""

    def __init__(self, relpath, text):
        self.relpath = relpath
        self.text = text

    def read(self, relpath):
        return self.text if relpath == self.relpath else None

    def list(self, folder):
        return []


def open_source(path):
    path = Path(path)
    if path.is_dir():
        return DirectorySource(path)
    if zipfile.is_zipfile(path):
        uploads.check_size(str(path), path.stat().st_size)
        return ZipSource(path, str(path))
    return SingleFileSource("factuality_annotation.json", uploads.path_text(path))
