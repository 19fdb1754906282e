#!/usr/bin/env python
"""Benchmark: planning a Direct Assessment campaign.

Target (issue #4): plan a campaign of 1,000 videos x 6 systems in under 10 s on the project machine.

    .venv/bin/python benchmarks/da_plan.py
    .venv/bin/python benchmarks/da_plan.py --videos 5000 --systems 10
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval .venv/bin/python benchmarks/da_plan.py

A fresh temporary SQLite database unless DATABASE_URL is set (then the benchmark's datasets are removed
afterwards). Prints the pure planning time (ids and tokens in, HITs out, seeded), the time of the whole service
(load captions, plan, write HITs and items with bulk_create) and checks that the same seed gives the same plan.
"""

import argparse
import os

from da_common import Timer, generate_dataset, setup_django

TARGET_SECONDS = 10.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--videos", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument("--seed", type=int, default=2018)
    args = parser.parse_args()
    vendor = setup_django()

    from annotation_site.corpus.models import Dataset
    from assessment import campaigns
    from assessment.models import Campaign, Item

    name = "benchmark-da-plan"
    Dataset.objects.filter(name=name).delete()
    print(f"database: {vendor}; {args.videos} videos x ({args.systems} systems + human), HITs of 100 items")
    timer = Timer()
    with timer("generate the dataset (not part of the figure)"):
        dataset, systems = generate_dataset(name, args.videos, args.systems)
    human = systems[-1]
    with timer("create_campaign: load + plan + write"):
        campaign = campaigns.create_campaign(
            name=name, dataset=dataset, systems=systems[:-1], human_system=human, seed=args.seed
        )
    with timer("load captions + plan again (no writes)"):
        planned, _ = campaigns.build_plan(campaign)
    stored = list(
        Item.objects.filter(hit__campaign=campaign)
        .order_by("hit__number", "position")
        .values_list("item_type", "caption_id")
    )
    replanned = [(item.item_type, item.caption_id) for hit in planned for item in hit.items]
    same = stored == replanned
    n_items = len(stored)
    counts = {t: sum(1 for k, _ in stored if k == t) for t in ("system", "original", "degraded", "repeat")}
    print(
        f"  {campaign.hits.count()} HITs, {n_items:,} items {counts}; seed {campaign.seed}; "
        f"re-planned from the seed: {'identical' if same else 'DIFFERENT'}"
    )
    figure = timer.figures["create_campaign: load + plan + write"]
    print(
        f"planning a campaign of {args.videos:,} videos x {args.systems} systems: {figure:.2f} s "
        f"(target < {TARGET_SECONDS:.0f} s): {'OK' if figure < TARGET_SECONDS and same else 'FAILED'}"
    )
    if os.environ.get("DATABASE_URL"):
        Campaign.objects.filter(pk=campaign.pk).delete()
        Dataset.objects.filter(name=name).delete()


if __name__ == "__main__":
    main()
