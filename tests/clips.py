"""A dataset of real clips for the browser tests: the same test-pattern clip as every video, and captions of
two sentences by two systems and a human one (the second sentence names its video, so every caption differs)."""

from pathlib import Path

from django.core.files import File

from annotation_site.corpus import services as corpus
from annotation_site.corpus import synthetic
from annotation_site.corpus.models import Caption, Dataset, Sentence, System
from assessment import campaigns

CAPTIONS = {
    "Alpha": ["a test card is shown on the screen .", "colour bars fill the picture ."],
    "Beta": ["a man rides a horse across the field .", "the crowd cheers loudly ."],
    "human": ["a colourful test pattern with moving shapes is displayed .", "a small square moves across it ."],
}


def clip_dataset(name, clip_file, n_videos, systems=tuple(CAPTIONS), human="human"):
    """Dataset ``name``: ``n_videos`` copies of ``clip_file`` (clip-0, clip-1, ...), each with a caption of every
    system in ``systems`` (``human`` marked as the human one). Returns (dataset, {system name: System})."""
    dataset = Dataset.objects.create(name=name)
    rows = {
        s: System.objects.create(dataset=dataset, name=s, is_human=s == human, position=i)
        for i, s in enumerate(systems)
    }
    for v in range(n_videos):
        with open(clip_file, "rb") as handle:
            video = corpus.add_video(dataset, f"clip-{v}", file=File(handle, name=Path(clip_file).name))
        for position, system in enumerate(systems):
            caption = Caption.objects.create(video=video, system=rows[system], position=position)
            for index, text in enumerate(CAPTIONS[system]):
                Sentence.objects.create(caption=caption, index=index, text=f"{text} ({v})" if index else text)
    return dataset, rows


def clip_campaign(name, folder, **fields):
    """A DA campaign ``name`` over clip_dataset(name) of four copies of a 1.2 s clip made in ``folder``: Alpha and
    Beta judged, the human system hidden, HITs of 10 items (5 system captions, one repeated, 2 original/degraded
    pairs, 1 repeat) whose paired t-test can pass with the 4 pairs of the campaign's 2 HITs (the Wilcoxon test
    needs 5). ``fields`` add to the campaign's settings."""
    clip = synthetic.make_video(Path(folder) / "clip.webm", seconds=1.2, pattern="testsrc2", size="192x108")
    dataset, systems = clip_dataset(name, clip, 4)
    return campaigns.create_campaign(
        name=name,
        dataset=dataset,
        systems=[systems["Alpha"], systems["Beta"]],
        human_system=systems["human"],
        hit_size=10,
        pairs_per_hit=2,
        repeats_per_hit=1,
        min_control_distance=3,
        qc_test="paired_t",
        qc_min_pairs=2,
        seed=4,
        **fields,
    )
