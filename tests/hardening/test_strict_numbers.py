"""Scores and ids are read strictly (issue #11): "1e2", digits of other scripts, NaN and fractions are refused
by the one reader every score path calls (annotation_site.strict_numbers)."""

import uuid

import pytest

from annotation_site.strict_numbers import ascii_int, integer_score


@pytest.mark.parametrize(
    "value, expected", [(0, 0), (100, 100), (70.0, 70), ("70", 70), (" 70 ", 70), ("70.0", 70), ("+5", 5), ("-0", 0)]
)
def test_whole_scores(value, expected):
    assert integer_score(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "1e2",
        "1E1",
        "\u0661\u0660\u0660",
        "\uff17\uff10",
        "\u0967",
        "nan",
        "inf",
        "70.5",
        70.5,
        float("nan"),
        float("inf"),
        101,
        -1,
        "",
        "0x10",
        "1_0",
        True,
        None,
        [70],
        {"v": 70},
        "\u00b2",
    ],
)
def test_refused(value):
    with pytest.raises(ValueError, match="the score must be an integer from 0 to 100"):
        integer_score(value)


def test_ascii_ids():
    assert ascii_int("12") == 12
    for text in ("\u0661\u0662", "1e2", "+1", " 1", "", "1.0", "\u00b2"):
        assert ascii_int(text) is None
    assert "\u0661\u0662".isdigit() and int("\u0661\u0662") == 12  # what Python alone would accept


@pytest.mark.django_db
@pytest.mark.parametrize("score", ["1e2", "\u0661\u0660\u0660", "\uff15\uff10", "5e1"])
def test_da_submit_refuses_them(client, score):
    from assessment import services, workers
    from assessment.models import Item, Judgment
    from tests.assessment.conftest import make_dataset, small_campaign

    campaign = small_campaign(make_dataset("strict", n_videos=12), "strict")
    assignment = services.assign(campaign, workers.worker_by_external_id("w-strict"))
    item = Item.objects.filter(hit=assignment.hit).order_by("position").first()
    response = client.post(
        f"/api/da/assignments/{services.assignment_token(assignment)}/judgments/",
        {"item": item.pk, "score": score, "client_uuid": str(uuid.uuid4()), "played": True},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "written with the digits 0-9" in response.json()["detail"]
    assert not Judgment.objects.exists()


def test_da_csv_import_refuses_them(tmp_path):
    from annotation_site.interchange.bundle import ProblemList
    from assessment.csv_import import read_rows

    text = (
        "worker_id,hit_id,item_id,system,video_id,item_type,control_of,score\n"
        "w,h,i1,S,v,system,,1e2\nw,h,i2,S,v,system,,\u0665\u0660\nw,h,i3,S,v,system,,50\n"
    )
    problems = ProblemList()
    rows = read_rows(text.splitlines(True), "j.csv", problems)
    assert [r.item for r in rows] == ["i3"]
    messages = [str(p) for p in problems]
    assert len(messages) == 2 and all("field 'score'" in m for m in messages)
    assert messages[0].startswith("j.csv, line 2")
