#!/usr/bin/env python
"""Benchmark: the full Direct Assessment analysis of a large campaign, from the database.

Target (issue #4): quality control, z-scores, system scores and the significance matrix for 1,000,000 judgments
from 5,000 workers and 20 systems in under 15 s on the project machine.

    .venv/bin/python benchmarks/da_analysis.py                 # 1,000 videos x (20 systems + human), 5,000 workers x 2 HITs
    .venv/bin/python benchmarks/da_analysis.py --workers 500   # a smaller run
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval .venv/bin/python benchmarks/da_analysis.py

A fresh temporary SQLite database unless DATABASE_URL is set. Everything the run creates (its dataset, campaign
and simulated workers, named ``benchmark-da...``) is removed afterwards, also when the run fails, and any left
over by an interrupted earlier run is removed first, so the benchmark can run again and again on a configured
database. Generation (dataset, plan, simulated crowd written with bulk_create) is timed apart from
the analysis. The analysis is timed as ``assessment.analysis.analyse`` runs it for the pages, the API and
``da_report``: one query for the items, one for the judgments, then vectorised pandas/NumPy/SciPy.
"""

import argparse
import time

from da_common import Timer, generate_dataset, setup_django

TARGET_SECONDS = 15.0
NAME = "benchmark-da"
WORKER_PREFIX = f"{NAME}-sim"


def clean_up(name=NAME):
    """Remove what a run creates: the dataset (its campaign, HITs, judgments go with it) and the simulated
    workers (they belong to no dataset, so they would stay behind and collide with the next run's)."""
    from annotation_site.corpus.models import Dataset
    from assessment.models import Worker

    Dataset.objects.filter(name=name).delete()
    Worker.objects.filter(external_id__startswith=f"{name}-sim-", source="simulation").delete()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--videos", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--workers", type=int, default=5000)
    parser.add_argument("--hits-per-worker", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="analysis runs (the best is the figure)")
    args = parser.parse_args()
    vendor = setup_django()
    print(
        f"database: {vendor}; {args.videos} videos x ({args.systems} systems + human), {args.workers} workers "
        f"x {args.hits_per_worker} HITs of 100 items"
    )
    return run(
        videos=args.videos,
        systems=args.systems,
        workers=args.workers,
        hits_per_worker=args.hits_per_worker,
        repeat=args.repeat,
    )


def run(*, videos, systems, workers, hits_per_worker, repeat):
    """Generate, analyse and report; the database is left as it was found (see clean_up)."""
    clean_up()
    try:
        return _run(
            args=argparse.Namespace(
                videos=videos, systems=systems, workers=workers, hits_per_worker=hits_per_worker, repeat=repeat
            )
        )
    finally:
        clean_up()


def _run(args):
    from assessment import campaigns, loading, quality_control, scoring, services, significance, simulation
    from assessment.analysis import analyse
    from assessment.models import Campaign

    name = NAME
    timer = Timer()
    print("generation")
    with timer("dataset (videos, captions, sentences)"):
        dataset, systems = generate_dataset(name, args.videos, args.systems)
    with timer("campaign planned and written"):
        human = systems[-1]
        campaign = campaigns.create_campaign(
            name=name, dataset=dataset, systems=systems[:-1], human_system=human, seed=1, workers_per_hit=100
        )
    quality = {s.name: 30 + 40 * i / max(1, args.systems - 1) for i, s in enumerate(systems[:-1])}
    quality["human"] = 80.0
    crowd = {"diligent": int(args.workers * 0.8), "random": args.workers // 10, "constant": args.workers // 20}
    crowd["reversed"] = args.workers - sum(crowd.values())
    with timer("simulated crowd (bulk_create)"):
        result = simulation.simulate_campaign(
            campaign, crowd, quality, seed=2, hits_per_worker=args.hits_per_worker, prefix=WORKER_PREFIX
        )
    print(f"  {result.judgments:,} judgments, {len(result.workers):,} workers, {campaign.hits.count()} HITs")

    best = None
    for run in range(args.repeat):
        print(f"analysis, run {run + 1}")
        campaign = Campaign.objects.select_related("human_system").get(pk=campaign.pk)
        phases = Timer()
        start = time.perf_counter()
        with phases("load (2 queries) -> DataFrame"):
            frame = loading.judgments_frame(campaign)
        with phases("quality control (per-worker Wilcoxon)"):
            qc = quality_control.worker_qc(
                frame, test=campaign.qc_test, threshold=campaign.qc_threshold, min_pairs=campaign.qc_min_pairs
            )
        with phases("z-scores"):
            frame = frame.assign(z=scoring.standardise(frame))
        with phases("caption and system scores"):
            captions = scoring.caption_scores(frame, qc.loc[qc["passed"], "worker"])
            systems_table = scoring.system_scores(captions)
        with phases("significance matrix and clusters"):
            p_values = significance.win_matrix(captions, systems_table["system"].tolist())
            significance.clusters(p_values, campaign.significance_threshold)
        elapsed = time.perf_counter() - start
        print(f"  {'analysis, phases together':<44} {elapsed:8.2f} s")
        with phases("analyse(campaign) as the pages/API/CLI run it"):
            analysis = analyse(campaign)
        best = min(best or 1e9, phases.figures["analyse(campaign) as the pages/API/CLI run it"])
    with timer("store QC results (5,000 rows, upsert)"):
        services.store_qc(campaign)
    print(
        f"result: {analysis.parameters['n_judgments']:,} judgments, {analysis.parameters['n_workers']:,} workers, "
        f"pass rate {100 * analysis.pass_rate:.1f} % (expected ~{100 * crowd['diligent'] / args.workers:.0f} %)"
    )
    top = analysis.systems.head(5)[["system", "raw", "z", "n", "cluster"]].to_string(index=False)
    print(top)
    verdict = "OK" if best < TARGET_SECONDS else "TOO SLOW"
    print(f"full analysis: {best:.2f} s (target < {TARGET_SECONDS:.0f} s): {verdict}")
    return {"seconds": best, "judgments": analysis.parameters["n_judgments"], "workers": len(result.workers)}


if __name__ == "__main__":
    main()
