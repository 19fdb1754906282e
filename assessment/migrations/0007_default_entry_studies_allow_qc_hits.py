"""Data only: every campaign's default crowd entry study (``da-NAME-entry``, the signed-link study behind
``/da/join/TOKEN/``) was made with one HIT per participant, so with a layout in which a worker needs k > 1 HITs to
reach the pairs quality control needs, every participant who came by that link stayed "insufficient data". Raise
their HITs per participant to what the campaign's QC needs (``campaigns.crowd_hits_per_participant``, computed
here on the historical models); a study allowing more is left so. Not reversed: lowering the cap again would
only bring the defect back. ``crowd.hooks.default_entry_url`` does the same on the way in."""

from django.db import migrations


def allow_qc_hits(apps, schema_editor):
    from assessment.planning import pairs_to_pass

    Study = apps.get_model("crowd", "Study")
    Campaign = apps.get_model("assessment", "Campaign")
    HIT = apps.get_model("assessment", "HIT")
    for study in Study.objects.filter(protocol="da", provider="link", name__endswith="-entry").only(
        "pk", "object_id", "hits_per_participant"
    ):
        campaign = Campaign.objects.filter(pk=study.object_id).first()
        if campaign is None:
            continue
        needed = max(campaign.qc_min_pairs, pairs_to_pass(campaign.qc_test, campaign.qc_threshold))
        per_worker = -(-needed // max(1, campaign.pairs_per_hit))
        n_hits = HIT.objects.filter(campaign_id=campaign.pk).count()
        allowed = max(1, min(per_worker, n_hits) if n_hits else per_worker)
        Study.objects.filter(pk=study.pk, hits_per_participant__lt=allowed).update(hits_per_participant=allowed)


class Migration(migrations.Migration):
    dependencies = [
        ("assessment", "0006_donor_caption_set_null_in_batches"),
        ("crowd", "0004_ledger_lock"),
    ]

    operations = [migrations.RunPython(allow_qc_hits, migrations.RunPython.noop)]
