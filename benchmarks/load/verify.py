"""After a run: compare what the clients were told (acknowledged submissions) with what the database holds.

For each protocol: ``lost`` acknowledged UUIDs not stored; ``duplicates`` UUIDs (or assignment/item pairs for DA)
stored more than once; ``unexpected`` stored submissions whose UUID no client sent ("nothing else"); ``unacked``
UUIDs sent whose answer never arrived but that are stored (allowed: the server stored them, the answer was
lost; each still at most once). DA scores stored must be the scores sent.
"""

from collections import Counter


def stored(made):
    """{protocol: [(uuid str, extra)]} of every submission of the run's campaign, project and task."""
    from annotation_site.factuality.models import Submission as FactualitySubmission
    from annotation_site.judgment_tasks.models import Submission as TaskSubmission
    from assessment.models import Judgment

    out = {}
    if "campaign" in made:
        out["da"] = [
            (str(u), (a, i, s))
            for u, a, i, s in Judgment.objects.filter(assignment__hit__campaign_id=made["campaign"]).values_list(
                "client_uuid", "assignment_id", "item_id", "score"
            )
        ]
    if "project" in made:
        out["factuality"] = [
            (str(u), a)
            for u, a in FactualitySubmission.objects.filter(assignment__project_id=made["project"]).values_list(
                "client_uuid", "assignment_id"
            )
        ]
    if "task" in made:
        out["task"] = [
            (str(u), a)
            for u, a in TaskSubmission.objects.filter(assignment__task_id=made["task"]).values_list(
                "client_uuid", "assignment_id"
            )
        ]
    return out


def verify(made, recorder):
    report = {}
    for protocol, rows in stored(made).items():
        acked = recorder.acked.get(protocol, {})
        sent = recorder.sent.get(protocol, set())
        uuids = Counter(u for u, _ in rows)
        entry = {
            "acknowledged": len(acked),
            "stored": len(rows),
            "lost": sorted(set(acked) - set(uuids))[:20],
            "duplicates": sorted(u for u, n in uuids.items() if n > 1)[:20],
            "unexpected": sorted(set(uuids) - sent)[:20],
            "unacked_stored": len((set(uuids) & sent) - set(acked)),
        }
        entry["n_lost"] = len(set(acked) - set(uuids))
        if protocol == "da":
            pairs = Counter((a, i) for _, (a, i, _s) in rows)
            entry["duplicates"] += [f"assignment {a} item {i}" for (a, i), n in pairs.items() if n > 1][:20]
            by_uuid = {u: extra for u, extra in rows}
            entry["wrong_score"] = sorted(
                u for u, summary in acked.items() if u in by_uuid and by_uuid[u][2] != summary["score"]
            )[:20]
        entry["ok"] = not (entry["n_lost"] or entry["duplicates"] or entry["unexpected"] or entry.get("wrong_score"))
        report[protocol] = entry
    return report
