"""Fixtures of the Direct Assessment tests: datasets of invented captions (several systems and a human caption
set), campaigns planned by the real service, and a simulated crowd."""

import numpy as np
import pytest

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video
from assessment import campaigns

WORDS = (
    "a man woman child dog cat ball car bike horse kitchen street park river guitar table chair plate "
    "runs jumps cooks plays rides throws catches walks talks eats paints cuts washes dances sings "
    "red blue green small large old young happy quickly slowly together outside inside"
).split()


def sentence(rng, n_words):
    return " ".join(rng.choice(WORDS, n_words)) + " ."


def make_dataset(
    name="da-demo",
    *,
    n_videos=30,
    systems=("Alpha", "Beta", "Gamma"),
    human="human",
    seed=0,
    references=None,
    sentences=2,
):
    """A dataset with ``n_videos`` videos, a caption of every system on every video and a human system's
    caption (``human``; None for none); ``references``: a reference set name to add as well."""
    rng = np.random.default_rng(seed)
    dataset = Dataset.objects.create(name=name)
    videos = Video.objects.bulk_create(
        [
            Video(dataset=dataset, external_id=f"v{i:04d}", position=i, status=Video.Status.EXTERNAL)
            for i in range(n_videos)
        ]
    )
    names = list(systems) + ([human] if human else [])
    system_rows = System.objects.bulk_create(
        [System(dataset=dataset, name=n, is_human=(n == human), position=i) for i, n in enumerate(names)]
    )
    captions = Caption.objects.bulk_create(
        [Caption(video=v, system=s, position=i) for i, (v, s) in enumerate((v, s) for v in videos for s in system_rows)]
    )
    rows = []
    for caption in captions:
        for index in range(sentences):
            text = sentence(rng, int(rng.integers(4, 12)))
            rows.append(Sentence(caption=caption, index=index, text=text, tokens=text.split()))
    Sentence.objects.bulk_create(rows)
    if references:
        Reference.objects.bulk_create(
            [Reference(video=v, reference_set=references, text=sentence(rng, int(rng.integers(6, 14)))) for v in videos]
        )
    return dataset


@pytest.fixture
def dataset_factory(db):
    return make_dataset


def small_campaign(dataset, name="da-small", **overrides):
    """A campaign of small HITs (20 items: 3 pairs, 2 repeats, controls at least 5 apart)."""
    human = System.objects.get(dataset=dataset, is_human=True)
    options = dict(hit_size=20, pairs_per_hit=3, repeats_per_hit=2, min_control_distance=5, qc_min_pairs=3, seed=7)
    options.update(overrides)
    return campaigns.create_campaign(
        name=name,
        dataset=dataset,
        human_system=human,
        systems=System.objects.filter(dataset=dataset, is_human=False),
        **options,
    )


@pytest.fixture
def campaign(db):
    dataset = make_dataset("da-demo", n_videos=12)
    return small_campaign(dataset, "da-small")
