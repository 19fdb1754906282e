"""The demo dataset: generated test-pattern videos, three made-up captioning systems, references and labels.

Everything is deterministic and made locally (ffmpeg test patterns, no downloads), so a fresh installation
has something to look at and to annotate. The content is built as an interchange ``DatasetBundle`` and written
by ``import_bundle`` (the same code path as any import); the video files are then stored in media storage
(local or S3) and probed so that durations and thumbnails exist. ``manage.py load_demo`` is the command.

Then the apps that work on a dataset add their part through **demo steps** (``DEMO_STEPS``), each kept next to
the code it exercises: ``factuality/demo.py`` a project with simulated annotators and its agreement report,
``assessment/demo.py`` a DA campaign with a simulated crowd. This package sits above all of them (import-linter
checks that no app imports it), so the corpus imports neither. A step gets the new dataset and a progress
callback, and returns one line for the command's output (a step that cannot run on a tiny demo says why instead
of failing).
"""

import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import transaction

from annotation_site.corpus import synthetic, video_processing
from annotation_site.corpus.models import Caption, Dataset, Reference, Video
from annotation_site.corpus.tokens import parse_bracketed
from annotation_site.factuality.demo import add_project
from annotation_site.factuality.models import ErrorSpan, ParagraphLabel, SentenceLabel
from annotation_site.interchange.bundle import CaptionData, DatasetBundle, ReferenceData, SentenceData, VideoData
from annotation_site.interchange.services import import_bundle
from assessment.demo import add_campaign

logger = logging.getLogger(__name__)

DEMO_NAME = "demo"
DEMO_DESCRIPTION = (
    "Generated test-pattern videos with made-up captions from three fictional systems, one human reference "
    "set and factuality labels, for trying CaptionEval out."
)
REFERENCE_SET = "gt_demo"
LABEL_SET = "imported"
SYSTEMS = ("ClipTrans", "FrameLSTM", "RetrievalBaseline")
VIDEO_SIZE = "320x180"

# Per pattern: the human reference, then each system's paragraph score and sentences. Sentences are lower-cased
# and space-tokenised like FactVC's; words in [ ] are the factual errors (a sentence with none is correct).
CONTENT = {
    "testsrc2": {
        "reference": "a test card with a colour gradient fills the screen . a white counter in the middle counts "
        "up the frames while a small square moves across the picture .",
        "ClipTrans": (
            5,
            [
                "a colourful test card is shown on the screen .",
                "a counter in the middle of the picture counts up .",
                "a small square moves across the screen .",
            ],
        ),
        "FrameLSTM": (3, ["a colourful test card is shown .", "[a man] reads the numbers [out loud] ."]),
        "RetrievalBaseline": (
            2,
            [
                "a [tv presenter] stands in front of a colourful wall .",
                "numbers appear on the screen .",
                "the [audience] [claps] at the end .",
            ],
        ),
    },
    "smptebars": {
        "reference": "the screen shows seven vertical colour bars from grey to blue . a row of short bars and a "
        "black band run along the bottom . nothing moves .",
        "ClipTrans": (
            4,
            [
                "seven vertical colour bars fill the screen .",
                "the bars do not move .",
                "a row of [white] bars runs along the bottom .",
            ],
        ),
        "FrameLSTM": (3, ["colour bars are shown on a [computer] screen .", "the picture stays still ."]),
        "RetrievalBaseline": (
            1,
            [
                "a [rainbow] appears over [a field] .",
                "the [camera] [pans] to the [left] .",
                "the [sun] [sets] behind the hills .",
            ],
        ),
    },
    "mandelbrot": {
        "reference": "a colourful fractal is drawn on a black background . the picture slowly zooms into the "
        "edge of the shape as new spirals appear .",
        "ClipTrans": (
            4,
            [
                "a colourful fractal pattern appears on a black background .",
                "the view zooms [out] of the pattern .",
                "spirals keep appearing at the edge .",
            ],
        ),
        "FrameLSTM": (3, ["a [flower] opens on a black background .", "the colours change slowly ."]),
        "RetrievalBaseline": (
            2,
            ["a [jellyfish] swims in the [dark] [sea] .", "its colours glow against the black background ."],
        ),
    },
    "rgbtestsrc": {
        "reference": "three wide vertical stripes fill the screen : red on the left , green in the middle and "
        "blue on the right . the picture does not change .",
        "ClipTrans": (
            5,
            [
                "three vertical stripes fill the screen .",
                "they are red , green and blue .",
                "the picture does not change .",
            ],
        ),
        "FrameLSTM": (2, ["[four] vertical stripes are shown .", "the stripes [move] from left to right ."]),
        "RetrievalBaseline": (1, ["a [flag] [waves] in the [wind] .", "[people] [walk] past it ."]),
    },
    "cellauto": {
        "reference": "white cells on a black background form a triangle pattern that grows row by row as the "
        "picture scrolls upwards .",
        "ClipTrans": (
            4,
            ["a pattern of white cells on a black background grows row by row .", "the pattern scrolls [down] ."],
        ),
        "FrameLSTM": (
            3,
            [
                "small white squares appear on a black screen .",
                "[a hand] [draws] more squares .",
                "the squares form triangles .",
            ],
        ),
        "RetrievalBaseline": (2, ["[snow] falls on a dark [street] .", "white dots fill the screen ."]),
    },
    "life": {
        "reference": "white cells on a black background change from frame to frame following the game of life . "
        "groups of cells grow , move and disappear .",
        "ClipTrans": (
            5,
            ["white cells on a black background change every frame .", "groups of cells grow and disappear ."],
        ),
        "FrameLSTM": (
            3,
            ["white dots move around a black screen .", "the dots [form] [letters] .", "some of the dots disappear ."],
        ),
        "RetrievalBaseline": (
            1,
            ["[stars] [twinkle] in the [night sky] .", "a [shooting star] [crosses] the screen ."],
        ),
    },
}


@dataclass(frozen=True)
class DemoVideo:
    video_id: str
    pattern: str
    seconds: float


@dataclass
class DemoResult:
    dataset: Dataset
    created: bool  # False: a demo dataset existed and was left alone
    counts: dict
    notes: list = field(default_factory=list)  # one line per demo step


@dataclass(frozen=True)
class DemoStep:
    name: str
    run: Callable  # run(dataset, progress) -> str (a line for the output)


DEMO_STEPS = (
    DemoStep("factuality", add_project),
    DemoStep("direct assessment", add_campaign),
)


def demo_steps():
    """The steps every new demo runs, in order."""
    return list(DEMO_STEPS)


def demo_videos(n_videos):
    """The demo's videos: patterns in turn, 4 to 6 seconds long."""
    patterns = synthetic.PATTERNS
    return [
        DemoVideo(f"demo-{i + 1:02d}-{patterns[i % len(patterns)]}", patterns[i % len(patterns)], 4.0 + (i % 5) * 0.5)
        for i in range(n_videos)
    ]


def build_bundle(videos):
    """The demo dataset as a DatasetBundle (captions with labels, sentences spread over the video's time)."""
    bundle = DatasetBundle(systems=[(name, False) for name in SYSTEMS])
    for video in videos:
        content = CONTENT[video.pattern]
        bundle.videos.append(VideoData(video_id=video.video_id))
        bundle.references.append(ReferenceData(video.video_id, REFERENCE_SET, content["reference"]))
        for system in SYSTEMS:
            score, lines = content[system]
            step = video.seconds / len(lines)
            sentences = []
            for i, line in enumerate(lines):
                tokens, spans = parse_bracketed(line)
                sentences.append(
                    SentenceData(
                        text=" ".join(tokens),
                        tokens=tokens,
                        spans=spans,
                        error=bool(spans),
                        start=round(i * step, 2),
                        end=round((i + 1) * step, 2),
                    )
                )
            bundle.captions.append(CaptionData(video.video_id, system, sentences, paragraph_score=score))
    return bundle


def load_demo(*, n_videos=4, replace=False, progress=None, steps=True):
    """Create the demo dataset and run the demo steps on it (``steps=False``: the dataset only); an
    existing demo is left alone unless ``replace``.

    ``progress(done, total, message)`` is called as the videos are made, stored and probed."""
    if n_videos < 1:
        raise ValueError("the demo needs at least one video")
    existing = Dataset.objects.filter(name=DEMO_NAME).first()
    if existing is not None and not replace:
        return DemoResult(existing, created=False, counts=_counts(existing))
    report = progress or (lambda done, total, message: None)
    videos = demo_videos(n_videos)
    total = 2 * len(videos)
    old_files = _stored_files(existing) if existing is not None else []
    with tempfile.TemporaryDirectory(prefix="captioneval-demo-") as folder:
        paths = {}
        for i, video in enumerate(videos):
            paths[video.video_id] = synthetic.make_video(
                Path(folder) / f"{video.video_id}.webm", seconds=video.seconds, pattern=video.pattern, size=VIDEO_SIZE
            )
            report(i + 1, total, f"made {video.video_id} ({video.pattern}, {video.seconds:.1f} s)")
        with transaction.atomic():
            result = import_bundle(
                build_bundle(videos),
                name=DEMO_NAME,
                source_format="demo",
                replace=replace,
                label_set_name=LABEL_SET,
                label_source="load_demo",
                description=DEMO_DESCRIPTION,
                force_delete_judgments=replace,
            )  # --replace: recreate the demo with its work
            rows = result.dataset.videos.order_by("position")
            for i, row in enumerate(rows):
                _attach(row, paths[row.external_id])
                video_processing.process_video(row)
                report(len(videos) + i + 1, total, f"stored {row.external_id}: {row.status}")
            notes = [f"{step.name}: {step.run(result.dataset, report)}" for step in (demo_steps() if steps else [])]
            transaction.on_commit(lambda: _delete_files(old_files))
    return DemoResult(result.dataset, created=True, counts=_counts(result.dataset), notes=notes)


def _attach(video, path):
    with open(path, "rb") as handle:
        video.file.save(Path(path).name, File(handle), save=False)
    video.status = Video.Status.PENDING
    video.save(update_fields=["file", "status"])


def _stored_files(dataset):
    names = []
    for file, thumbnail in dataset.videos.values_list("file", "thumbnail"):
        names.extend(name for name in (file, thumbnail) if name)
    return names


def _delete_files(names):
    from django.core.files.storage import default_storage

    for name in names:
        try:
            default_storage.delete(name)
        except Exception:  # a file already gone or unreachable is not worth failing the command for
            logger.warning("could not delete old demo file %s", name, exc_info=True)


def _counts(dataset):
    return {
        "videos": dataset.videos.count(),
        "systems": dataset.systems.count(),
        "captions": Caption.objects.filter(video__dataset=dataset).count(),
        "references": Reference.objects.filter(video__dataset=dataset).count(),
        "paragraph labels": ParagraphLabel.objects.filter(label_set__dataset=dataset).count(),
        "sentence labels": SentenceLabel.objects.filter(label_set__dataset=dataset).count(),
        "error spans": ErrorSpan.objects.filter(sentence_label__label_set__dataset=dataset).count(),
    }


def ensure_superuser(username, password):
    """Create the staff superuser ``username`` with ``password``, or update an existing account to be one."""
    user_model = get_user_model()
    user = user_model.objects.filter(**{user_model.USERNAME_FIELD: username}).first()
    created = user is None
    if created:
        user = user_model(**{user_model.USERNAME_FIELD: username})
    user.is_staff = user.is_superuser = user.is_active = True
    user.set_password(password)
    user.save()
    return user, created
