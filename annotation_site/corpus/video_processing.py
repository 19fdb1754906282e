"""Probing videos and making thumbnails with ffmpeg (placeholder, being written)."""


def process_video(video):
    raise NotImplementedError
