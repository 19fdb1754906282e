"""Short generated videos (ffmpeg test patterns) for the demo dataset and the tests: no downloads needed.

Uses the ffmpeg binary shipped in the imageio-ffmpeg wheel. Videos are WebM (VP8), which every Chromium
build plays, with a silent audio track so players behave as with real clips.
"""

import subprocess

import imageio_ffmpeg

PATTERNS = ("testsrc2", "smptebars", "mandelbrot", "rgbtestsrc", "cellauto", "life")


def ffmpeg_exe():
    return imageio_ffmpeg.get_ffmpeg_exe()


def make_video(path, *, seconds=3.0, pattern="testsrc2", size="320x180", rate=25):
    """Write a ``seconds`` long WebM test-pattern video to ``path`` and return the path."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}")
    source = f"{pattern}=size={size}:rate={rate}"
    if pattern in ("cellauto", "life"):
        source = f"{pattern}=size={size}:rate={rate},format=yuv420p"
    command = [
        ffmpeg_exe(),
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        source,
        "-f",
        "lavfi",
        "-i",
        "anullsrc=channel_layout=mono:sample_rate=22050",
        "-t",
        f"{seconds:.3f}",
        "-c:v",
        "libvpx",
        "-b:v",
        "300k",
        "-deadline",
        "realtime",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "libvorbis",
        "-shortest",
        str(path),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return path
