"""Shared set-up of the benchmarks: Django on a fresh database; for the Direct Assessment ones, a generated dataset."""

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
WORDS = (
    "a man woman boy girl group people dog horse ball car bike guitar kitchen street park river field "
    "is are plays rides throws cuts cooks runs jumps walks talks holds shows puts takes the on in of with "
    "red blue small large young old two three then while"
).split()


def django_workdir(prefix="captioneval-bench-"):
    """Django set up on a fresh temporary folder (its SQLite database unless DATABASE_URL is set; not migrated):
    the folder."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.setdefault("CAPTIONEVAL_VAR_DIR", str(workdir))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation_site.settings")
    import django

    django.setup()
    return workdir


def setup_django():
    """Django on a fresh temporary SQLite database unless DATABASE_URL is set; migrated."""
    django_workdir("captioneval-da-bench-")
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    return connection.vendor


def generate_dataset(name, n_videos, n_systems, seed=0, batch=5000):
    """Dataset ``name``: ``n_videos`` videos, a caption of ``n_systems`` systems and of a human system on each
    (2-4 sentences of 6-16 words, the shape of ActivityNet captions), written with bulk_create (and the tables
    analysed, as after an import)."""
    import numpy as np

    from annotation_site.corpus.models import Caption, Dataset, Sentence, System, Video
    from annotation_site.db_statistics import refresh_after_bulk_load

    rng = np.random.default_rng(seed)
    dataset = Dataset.objects.create(name=name, description="generated for a benchmark")
    videos = Video.objects.bulk_create(
        [
            Video(dataset=dataset, external_id=f"v_{i:08d}", position=i, status=Video.Status.EXTERNAL)
            for i in range(n_videos)
        ],
        batch_size=batch,
    )
    systems = System.objects.bulk_create(
        [System(dataset=dataset, name=f"System{s:02d}", position=s) for s in range(n_systems)]
        + [System(dataset=dataset, name="human", is_human=True, position=n_systems)]
    )
    captions = Caption.objects.bulk_create(
        [Caption(video=v, system=s) for v in videos for s in systems], batch_size=batch
    )
    words = np.asarray(WORDS)
    sentences = []
    for caption in captions:
        for index in range(int(rng.integers(2, 5))):
            tokens = list(words[rng.integers(0, len(words), int(rng.integers(6, 17)))]) + ["."]
            sentences.append(Sentence(caption=caption, index=index, text=" ".join(tokens), tokens=tokens))
    Sentence.objects.bulk_create(sentences, batch_size=batch)
    refresh_after_bulk_load(Video, System, Caption, Sentence)  # as an import does (interchange.services)
    return dataset, systems


def one_worker_campaign(name, dataset, systems, hit_size=20):
    """The crowd benchmarks' Direct Assessment campaign over ``generate_dataset``'s systems (the last one, the
    human system, hidden): HITs of ``hit_size`` items with 3 degraded pairs and 2 repeats, one worker each."""
    from assessment import campaigns

    return campaigns.create_campaign(
        name=name,
        dataset=dataset,
        systems=systems[:-1],
        human_system=systems[-1],
        hit_size=hit_size,
        pairs_per_hit=3,
        repeats_per_hit=2,
        min_control_distance=5,
        qc_min_pairs=3,
        workers_per_hit=1,
        seed=8,
    )


class Timer:
    def __init__(self):
        self.figures = {}

    def __call__(self, label):
        timer = self

        class _Phase:
            def __enter__(self):
                self.start = time.perf_counter()

            def __exit__(self, *exc):
                timer.figures[label] = time.perf_counter() - self.start
                print(f"  {label:<44} {timer.figures[label]:8.2f} s", flush=True)

        return _Phase()
