"""Reading files that people upload or name on the command line (issue #11, "Resource limits" and "clear
errors"). Every importer reads its bytes through here, so the limits are checked before any work is done and
every refusal names the file (and the line where there is one):

- ``CAPTIONEVAL_MAX_UPLOAD_BYTES`` (default 50 MiB): a larger file is refused from its declared size, before it
  is read or parsed (Django has already spooled it to a temporary file, never to memory);
- zip archives (``open_zip``): refused from the central directory alone, before anything is decompressed, when
  they hold more than ``CAPTIONEVAL_ZIP_MAX_FILES`` members (1,000) or would expand to more than
  ``CAPTIONEVAL_ZIP_MAX_BYTES`` (200 MiB), or when a member's compression ratio is above
  ``CAPTIONEVAL_ZIP_MAX_RATIO`` (200: a zip bomb); a corrupt archive is a clear error, not a 500; reading a
  member stops at its declared size (a lying header cannot make it expand further);
- text must be UTF-8 (a byte-order mark is dropped): otherwise the line and byte are named;
- NUL characters are refused (PostgreSQL text cannot hold them, and no legitimate caption has one).
"""

import collections
import io
import lzma
import zipfile
import zlib
from pathlib import Path

from django.conf import settings

MiB = 1024 * 1024
DEFAULTS = {
    "CAPTIONEVAL_MAX_UPLOAD_BYTES": 50 * MiB,
    "CAPTIONEVAL_MAX_DA_UPLOAD_BYTES": 10 * MiB,
    "CAPTIONEVAL_MAX_VIDEO_BYTES": 2048 * MiB,
    "CAPTIONEVAL_ZIP_MAX_BYTES": 200 * MiB,
    "CAPTIONEVAL_ZIP_MAX_FILES": 1000,
    "CAPTIONEVAL_ZIP_MAX_RATIO": 200,
}


class UploadRefused(ValueError):
    """A file refused as a whole: ``file``, ``line`` (or None) and ``reason``; ``str()`` is "FILE, line N: reason"."""

    def __init__(self, file, reason, line=None):
        self.file, self.reason, self.line = file, reason, line
        super().__init__(f"{file}{f', line {line}' if line else ''}: {reason}")

    def as_json(self, outcome="nothing was imported"):
        """The API's 400 body for it (every upload endpoint answers a refused file with this one shape);
        ``outcome``: what the refusal means for the user when the upload is not an import."""
        return {"detail": f"{self}; {outcome}", "problems": [str(self)]}


def limit(name):
    return int(getattr(settings, name, DEFAULTS[name]))


def _size_text(size):
    return f"{size / MiB:.1f} MiB" if size >= MiB else f"{size} bytes"


def check_size(name, size, setting="CAPTIONEVAL_MAX_UPLOAD_BYTES"):
    """Refuse a file from its declared size. ``setting``: the limit that applies (imported files by default;
    ``CAPTIONEVAL_MAX_VIDEO_BYTES`` for video files, which are stored, not parsed)."""
    maximum = limit(setting)
    if size is not None and size > maximum:
        raise UploadRefused(
            name, f"the file has {_size_text(size)}; at most {_size_text(maximum)} are accepted ({setting})"
        )


# Files people upload by mistake where text is expected, told by their first bytes: what they are and what to do
# instead (a zip and a spreadsheet were refused as "not UTF-8 text (invalid start byte at byte 10)").
NOT_TEXT = (
    (
        (b"PK\x03\x04", b"PK\x05\x06"),
        "a zip archive (a spreadsheet saved as .xlsx or .ods is one too), not a text file: upload the text file "
        "itself, saved as UTF-8 (a spreadsheet: as CSV UTF-8), or choose a format that reads an archive",
    ),
    ((b"\x1f\x8b",), "a gzip-compressed file, not a text file: unpack it and upload the text file"),
    ((b"%PDF",), "a PDF document, not a text file"),
    ((b"\xd0\xcf\x11\xe0",), "an old-style Excel or Word file, not a text file: save it as CSV UTF-8"),
    ((b"\xff\xfe", b"\xfe\xff"), "UTF-16 text: save the file as UTF-8"),
)


def decode(data, name):
    """UTF-8 text of ``data`` without NUL characters, else UploadRefused naming line (and byte / column), or what
    the file is instead when its first bytes tell (``NOT_TEXT``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        for starts, what in NOT_TEXT:
            if data.startswith(starts):
                raise UploadRefused(name, f"this is {what}") from None
        line = data.count(b"\n", 0, exc.start) + 1
        raise UploadRefused(
            name, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save the file as UTF-8", line
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    position = text.find("\x00")
    if position >= 0:
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        raise UploadRefused(name, f"a NUL character (column {column}); NUL is not allowed in text", line)
    return text


def read_upload(upload, name=None):
    """The bytes of an uploaded file (Django ``UploadedFile``), size checked first."""
    name = name or getattr(upload, "name", "upload")
    check_size(name, getattr(upload, "size", None))
    upload.seek(0)
    data = upload.read(limit("CAPTIONEVAL_MAX_UPLOAD_BYTES") + 1)
    check_size(name, len(data))
    return data


def upload_text(upload, name=None):
    """The text of an uploaded file: size, UTF-8 and NUL checked."""
    name = name or getattr(upload, "name", "upload")
    return decode(read_upload(upload, name), name)


def decode_file(path, name):
    """The text of a file in a folder being imported, reported under ``name`` (its path in the dataset)."""
    try:
        check_size(name, Path(path).stat().st_size)
        return decode(Path(path).read_bytes(), name)
    except OSError as exc:
        raise UploadRefused(name, f"cannot read the file ({exc.strerror or exc})") from None


def path_text(path):
    """The text of a file named on the command line: size, UTF-8 and NUL checked."""
    path = Path(path)
    try:
        check_size(str(path), path.stat().st_size)
        data = path.read_bytes()
    except OSError as exc:
        raise UploadRefused(str(path), f"cannot read the file ({exc.strerror or exc})") from None
    return decode(data, str(path))


# What reading a damaged member raises: a failed CRC, a bad header (BadZipFile); a broken compressed stream, which
# the decompressors report with exceptions of their own (zlib.error for deflate, LZMAError; bz2 raises OSError);
# an encrypted member (RuntimeError); an unknown compression method (NotImplementedError).
_UNREADABLE_MEMBER = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    RuntimeError,
)


class SafeZip:
    """A zip archive checked before use; ``read_text(member)`` is size-capped, UTF-8 and NUL checked."""

    def __init__(self, fileobj, name="archive.zip"):
        self.name = name
        try:
            self.zip = zipfile.ZipFile(fileobj)
            members = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            # (NotImplementedError: a directory entry of a zip version Python cannot read, "zip file version 7.5")
            raise UploadRefused(name, f"not a readable zip archive ({exc})") from None
        files = [m for m in members if not m.is_dir()]
        if len(files) > limit("CAPTIONEVAL_ZIP_MAX_FILES"):
            raise UploadRefused(
                name,
                f"the archive holds {len(files)} files; at most "
                f"{limit('CAPTIONEVAL_ZIP_MAX_FILES')} are accepted (CAPTIONEVAL_ZIP_MAX_FILES)",
            )
        expanded = sum(m.file_size for m in files)
        if expanded > limit("CAPTIONEVAL_ZIP_MAX_BYTES"):
            raise UploadRefused(
                name,
                f"the archive would expand to {_size_text(expanded)}; at most "
                f"{_size_text(limit('CAPTIONEVAL_ZIP_MAX_BYTES'))} are accepted "
                "(CAPTIONEVAL_ZIP_MAX_BYTES)",
            )
        ratio = limit("CAPTIONEVAL_ZIP_MAX_RATIO")
        for member in files:
            factor = member.file_size // max(member.compress_size, 1)
            if member.file_size > 1 * MiB and factor > ratio:
                raise UploadRefused(
                    name,
                    f"{member.filename} expands {factor} times (at most {ratio}: "
                    "CAPTIONEVAL_ZIP_MAX_RATIO); this looks like a zip bomb",
                )
        # some Windows tools write a member's folders with backslashes, which the zip format does not allow: read
        # them as the folders they are ("ActivityNet-Fact\\factuality_annotation.json" was "not found")
        self.members = {m.filename.replace("\\", "/"): m for m in files}
        if len(self.members) < len(files):
            counts = collections.Counter(m.filename.replace("\\", "/") for m in files)
            twice = next(member for member, count in counts.items() if count > 1)
            raise UploadRefused(name, f"two members are named {twice!r} (a backslash counts as a folder separator)")

    def namelist(self):
        return list(self.members)

    def read_text(self, member):
        info = self.members[member]
        label = f"{self.name}: {member}"  # the file named inside its archive
        try:
            with self.zip.open(info) as handle:
                data = handle.read(info.file_size + 1)
        except _UNREADABLE_MEMBER as exc:
            raise UploadRefused(label, f"cannot be read from the archive ({exc})") from None
        if len(data) > info.file_size:
            raise UploadRefused(label, "holds more than its declared size; the archive is corrupt")
        return decode(data, label)


def open_zip(fileobj, name="archive.zip"):
    if isinstance(fileobj, (bytes, bytearray)):
        fileobj = io.BytesIO(fileobj)
    return SafeZip(fileobj, name)
