"""Serving local media (videos, thumbnails) with HTTP Range support, through WhiteNoise.

Browsers seek in a video with Range requests; WhiteNoise answers them (206 Partial Content) and streams the
file, which Django's own static view does not do well. Media arrive after start-up (uploads), so files are
looked up on each request rather than indexed once. Only video and image files are served, never anything a
browser would run as a page. When media live on S3 this middleware steps aside: pages link to presigned S3
URLs and S3 answers the Range requests itself.
"""

import os
from pathlib import PurePosixPath

from django.conf import settings
from whitenoise.base import WhiteNoise
from whitenoise.middleware import WhiteNoiseMiddleware

SERVED_SUFFIXES = {".mp4", ".m4v", ".webm", ".ogv", ".ogg", ".mov", ".mkv", ".jpg", ".jpeg", ".png", ".webp"}


def _media_headers(headers, path, url):
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Accept-Ranges"] = "bytes"  # WhiteNoise answers Range requests but does not advertise it


class MediaFilesMiddleware(WhiteNoise):
    def __init__(self, get_response):
        self.get_response = get_response
        self.prefix = settings.MEDIA_URL
        self.active = not settings.USE_S3
        super().__init__(
            application=None,
            autorefresh=True,
            max_age=3600,
            allow_all_origins=False,
            add_headers_function=_media_headers,
        )
        if self.active:
            os.makedirs(settings.MEDIA_ROOT, exist_ok=True)
            self.add_files(str(settings.MEDIA_ROOT), prefix=self.prefix)

    def __call__(self, request):
        path = request.path_info
        if self.active and path.startswith(self.prefix) and PurePosixPath(path).suffix.lower() in SERVED_SUFFIXES:
            static_file = self.find_file(path)
            if static_file is not None:
                return WhiteNoiseMiddleware.serve(static_file, request)
        return self.get_response(request)
