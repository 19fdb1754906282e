"""The admin lists of metrics, caption pairs and reports open with a constant number of queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics_eval import analysis, reports, services
from metrics_eval.models import CaptionPair, Metric, Report
from tests.metrics_eval.test_pages import synthetic_dataset

pytestmark = pytest.mark.django_db


def fill(name, videos):
    dataset = synthetic_dataset(name, videos)
    pairs = "video_id,correct,foil\n" + "".join(f"{name}-v{i:03d},S1,S2\n" for i in range(videos))
    services.import_pairs(dataset, pairs, "pairs.csv", pair_set="foil")
    reports.factuality_report(dataset, params=analysis.Parameters(resamples=20))


@pytest.mark.parametrize("model", [Metric, CaptionPair, Report], ids=lambda m: m.__name__)
def test_changelists_do_not_grow_with_rows(admin_client, model, django_assert_max_num_queries):
    fill("few", 2)
    url = f"/admin/metrics_eval/{model._meta.model_name}/"
    with CaptureQueriesContext(connection) as few:
        assert admin_client.get(url).status_code == 200
    fill("many", 9)
    with django_assert_max_num_queries(len(few)):
        assert admin_client.get(url).status_code == 200
    first = model.objects.order_by("pk").first()
    assert admin_client.get(f"{url}{first.pk}/change/").status_code == 200
