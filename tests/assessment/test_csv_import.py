"""da_import_judgments: validation up front (file, line, field; nothing written), one transaction, creation of
the campaign, its dataset, systems and videos; a round trip through the judgments download."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation_site.corpus.models import Caption, Dataset, System, Video
from annotation_site.problems import FormatError
from assessment import simulation, workers
from assessment.analysis import analyse
from assessment.csv_import import import_judgments
from assessment.models import HIT, Assignment, Campaign, Item, Judgment, QCResult, Worker

from .conftest import make_dataset, small_campaign

HEADER = "worker_id,hit_id,item_id,system,video_id,item_type,control_of,score\n"


def valid_csv():
    """Two workers on one HIT: 3 system items, a repeat, 10 original/degraded pairs."""
    lines = [HEADER]
    for worker, good in (("w1", True), ("w2", False)):
        lines += [
            f"{worker},h1,s1,ModelA,vid1,system,,70\n",
            f"{worker},h1,s2,ModelB,vid1,system,,40\n",
            f"{worker},h1,s3,ModelA,vid2,system,,65\n",
            f"{worker},h1,r1,ModelA,vid1,repeat,s1,72\n",
        ]
        for k in range(10):
            original, degraded = (80 + k, 20 + k) if good else (50, 50)
            lines.append(f"{worker},h1,o{k},refs,vid{k + 3},original,d{k},{original}\n")
            lines.append(f"{worker},h1,d{k},refs,vid{k + 3},degraded,o{k},{degraded}\n")
    return "".join(lines)


def write(tmp_path, text, name="judgments.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def counts():
    return tuple(
        m.objects.count()
        for m in (Campaign, Dataset, System, Video, Caption, HIT, Item, Worker, Assignment, Judgment, QCResult)
    )


def test_import_creates_campaign_dataset_systems_videos(db, tmp_path):
    out = io.StringIO()
    call_command("da_import_judgments", str(write(tmp_path, valid_csv())), campaign="trecvid", stdout=out)
    assert "Imported 48 judgments" in out.getvalue() and "1 of 2 workers pass" in out.getvalue()
    campaign = Campaign.objects.get(name="trecvid")
    assert campaign.source == "imported" and campaign.dataset.name == "trecvid"
    systems = {s.name: s.is_human for s in System.objects.filter(dataset=campaign.dataset)}
    assert systems == {"ModelA": False, "ModelB": False, "refs": True}
    assert campaign.human_system.name == "refs"
    assert set(campaign.systems.values_list("name", flat=True)) == {"ModelA", "ModelB"}
    assert Video.objects.filter(dataset=campaign.dataset).count() == 12
    assert Item.objects.filter(hit__campaign=campaign).count() == 24
    degraded = Item.objects.get(hit__campaign=campaign, external_id="d3")
    assert degraded.control_of.external_id == "o3" and degraded.control_of.control_of_id == degraded.pk
    assert Item.objects.get(hit__campaign=campaign, external_id="r1").control_of.external_id == "s1"
    qc = {r.worker.external_id: r.passed for r in QCResult.objects.filter(campaign=campaign)}
    assert qc == {"w1": True, "w2": False}
    report = analyse(campaign).report()
    # the human caption set is ranked from its originals (Graham, Awad & Smeaton 2018, Table 4: Human-b)
    assert [(s["system"], s["is_human"]) for s in report["systems"]] == [
        ("refs", True),
        ("ModelA", False),
        ("ModelB", False),
    ]
    refs = report["systems"][0]
    assert refs["n"] == 10 and refs["raw"] == pytest.approx(sum(80 + k for k in range(10)) / 10)  # w1's originals
    model_a = report["systems"][1]
    assert model_a["n"] == 3 and model_a["raw"] == pytest.approx(((70 + 72) / 2 + 65) / 2)


@pytest.mark.parametrize(
    "edit,line,field,message",
    [
        (
            lambda t: t.replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,system,,101"),
            3,
            "score",
            "integer from 0 to 100",
        ),
        (
            lambda t: t.replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,system,,4x"),
            3,
            "score",
            "integer from 0 to 100",
        ),
        (
            lambda t: t.replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,sytem,,40"),
            3,
            "item_type",
            "one of system|original|degraded|repeat",
        ),
        (
            lambda t: t.replace("w1,h1,s2,ModelB,vid1,system,,40", "w1,h1,s2,ModelB,vid1,system,s1,40"),
            3,
            "control_of",
            "controls nothing",
        ),
        (
            lambda t: t.replace("w1,h1,r1,ModelA,vid1,repeat,s1,72", "w1,h1,r1,ModelA,vid1,repeat,zz,72"),
            5,
            "control_of",
            "not in HIT 'h1'",
        ),
        (
            lambda t: t.replace("w1,h1,r1,ModelA,vid1,repeat,s1,72", "w1,h1,r1,ModelA,vid1,repeat,s2,72"),
            5,
            "system",
            "same system",
        ),
        (
            lambda t: t.replace("w2,h1,s2,ModelB,vid1,system,,40", "w2,h1,s2,ModelA,vid1,system,,40"),
            27,
            "system",
            "has system 'ModelB' on line 3",
        ),
        (
            lambda t: t.replace("w1,h1,d0,refs,vid3,degraded,o0,20", "w1,h1,d0,refs,vid3,degraded,s1,20"),
            7,
            "control_of",
            "pairs with a original item",
        ),
        (lambda t: t + "w1,h1,s1,ModelA,vid1,system,,10\n", 50, "item_id", "rated item 's1' of HIT 'h1' already"),
        (
            lambda t: t.replace("w1,h1,s1,ModelA,vid1,system,,70", ",h1,s1,ModelA,vid1,system,,70"),
            2,
            "worker_id",
            "1 to 200 characters",
        ),
    ],
)
def test_a_bad_row_names_file_line_field_and_nothing_is_written(db, tmp_path, edit, line, field, message):
    before = counts()
    path = write(tmp_path, edit(valid_csv()), "bad.csv")
    with pytest.raises(CommandError) as error:
        call_command("da_import_judgments", str(path), campaign="broken")
    text = str(error.value)
    assert "nothing was imported" in text
    assert f"bad.csv, line {line}, field '{field}'" in text, text
    assert message in text, text
    assert counts() == before


def test_bad_header_and_empty_file(db, tmp_path):
    with pytest.raises(FormatError, match="line 1: the header must be"):
        import_judgments("x", write(tmp_path, "worker,hit\n1,2\n"))
    with pytest.raises(FormatError, match="the file is empty"):
        import_judgments("x", write(tmp_path, ""))
    with pytest.raises(FormatError, match="invalid campaign name"):
        import_judgments("bad name", write(tmp_path, valid_csv()))
    assert not Campaign.objects.exists()


def test_human_captions_named_after_an_ordinary_system_of_the_dataset_are_refused(db, tmp_path):
    """Judgments attach to an imported corpus whose dataset is named like the campaign. A system there that is
    not human, named as the file's human captions, was reused as it was: the campaign's human captions stayed an
    ordinary system, ranked among the systems and scored by the metric module against the references."""
    dataset = Dataset.objects.create(name="corpus")
    System.objects.create(dataset=dataset, name="refs", is_human=False, position=1)
    before = counts()
    with pytest.raises(FormatError) as error:
        import_judgments("corpus", write(tmp_path, valid_csv()))
    [problem] = [str(p) for p in error.value.problems]
    assert problem.endswith(
        "judgments.csv, line 6, field 'system': system 'refs' of dataset corpus is not a human "
        "caption set, but this file makes it the campaign's human captions: mark it human in the "
        "dataset first, or name the human captions as the dataset has them"
    )
    assert counts() == before
    System.objects.filter(name="refs").update(is_human=True)  # marked human first: imported, and it stays human
    import_judgments("corpus", write(tmp_path, valid_csv()))
    assert Campaign.objects.get(name="corpus").human_system.is_human


def test_an_empty_column_name_in_the_header_is_named(db, tmp_path):
    """A spreadsheet's trailing empty column made the message end in 'unknown ' with nothing after it."""
    text = valid_csv().replace(HEADER, HEADER.rstrip("\n") + ",\n", 1)
    with pytest.raises(FormatError, match=r"unknown an empty name \(column 9\)"):
        import_judgments("x", write(tmp_path, text))


def test_importing_the_same_file_twice_is_refused_and_changes_nothing(db, tmp_path):
    path = write(tmp_path, valid_csv())
    import_judgments("twice", path)
    before = counts()
    with pytest.raises(FormatError, match="stored already"):
        import_judgments("twice", path)
    assert counts() == before


def test_more_judgments_extend_an_imported_campaign(db, tmp_path):
    import_judgments("grow", write(tmp_path, valid_csv()))
    more = HEADER + "".join(line.replace("w1,", "w3,", 1) for line in valid_csv().splitlines(True)[1:25])
    summary = import_judgments("grow", write(tmp_path, more, "more.csv"))
    assert summary["items"] == 0  # the same HIT and items, matched by their ids
    campaign = Campaign.objects.get(name="grow")
    assert HIT.objects.filter(campaign=campaign).count() == 1
    assert QCResult.objects.filter(campaign=campaign, worker__external_id="w3", passed=True).exists()


def test_round_trip_through_the_judgments_download(staff_client, tmp_path):
    campaign = small_campaign(make_dataset("origin", n_videos=18), "origin", qc_min_pairs=6)
    simulation.simulate_campaign(
        campaign,
        {"diligent": 8, "random": 3},
        {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 30},
        seed=1,
        hits_per_worker=3,
    )
    response = staff_client.get(f"/da/campaigns/{campaign.name}/judgments.csv")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    assert text.startswith(HEADER)
    import_judgments("copy", write(tmp_path, text))
    out = io.StringIO()
    call_command("da_qc", campaign="copy", min_pairs=6, stdout=out)  # the origin's QC parameters
    assert "workers passed (wilcoxon, p < 0.05, >= 6 pairs)" in out.getvalue()
    stored = {r.worker.external_id: r.passed for r in QCResult.objects.filter(campaign__name="copy")}
    original, copy = analyse(campaign).report(), analyse(Campaign.objects.get(name="copy")).report()
    assert copy["workers"] == original["workers"]
    assert stored == {w["worker_id"]: w["passed"] for w in original["workers"]}
    assert json.dumps(copy["systems"]) == json.dumps(original["systems"])
    assert copy["wins"] == original["wins"]
    assert Dataset.objects.get(name="copy").videos.count() == Dataset.objects.get(name="origin").videos.count()


def trecvid_layout():
    """The natural export of tools that link only the degraded copy: originals with an empty control_of."""
    return "".join(
        line if ",original," not in line else ",".join(line.split(",")[:6] + ["", line.split(",")[7]])
        for line in valid_csv().splitlines(True)
    )


def test_an_original_without_control_of_is_resolved_from_its_degraded_copy(db, tmp_path):
    text = trecvid_layout()
    assert "w1,h1,o3,refs,vid6,original,,83" in text
    summary = import_judgments("trecvid-2018", write(tmp_path, text))
    assert summary["judgments"] == 48
    campaign = Campaign.objects.get(name="trecvid-2018")
    original = Item.objects.get(hit__campaign=campaign, external_id="o3")
    assert original.control_of.external_id == "d3" and original.control_of.control_of_id == original.pk
    # da_report ranks the human system from its originals
    out = io.StringIO()
    call_command("da_report", campaign="trecvid-2018", format="json", stdout=out)
    systems = json.loads(out.getvalue())["systems"]
    human = [s for s in systems if s["is_human"]]
    assert [s["system"] for s in human] == ["refs"] and human[0]["n"] == 10
    assert [s["system"] for s in systems] == ["refs", "ModelA", "ModelB"]


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            lambda t: t.replace("w1,h1,d4,refs,vid7,degraded,o4,24", "w1,h1,d4,refs,vid7,degraded,o5,24").replace(
                "w2,h1,d4,refs,vid7,degraded,o4,50", "w2,h1,d4,refs,vid7,degraded,o5,50"
            ),
            "several degraded items name it",
        ),
        (
            lambda t: t.replace("w1,h1,d4,refs,vid7,degraded,o4,24\n", "").replace(
                "w2,h1,d4,refs,vid7,degraded,o4,50\n", ""
            ),
            "no degraded item of the HIT names it",
        ),
    ],
)
def test_an_original_without_control_of_is_refused_when_ambiguous_or_missing(db, tmp_path, edit, message):
    text = edit(trecvid_layout())
    before = counts()
    with pytest.raises(FormatError) as error:
        import_judgments("broken", write(tmp_path, text, "tv.csv"))
    problems = [str(p) for p in error.value.problems]
    lines = text.splitlines()
    wanted = next(
        i + 1 for i, line in enumerate(lines) if line.startswith("w1,h1,o" + ("5" if "several" in message else "4"))
    )
    assert any(f"tv.csv, line {wanted}, field 'control_of'" in p and message in p for p in problems), problems
    assert counts() == before


def test_a_hit_beyond_what_its_columns_hold_is_refused_before_anything_is_written(db, tmp_path):
    """An item's place in its HIT is a small integer column: a HIT of 32768 items failed the import's transaction
    on PostgreSQL with a database error (and was stored on SQLite)."""
    from assessment.csv_import import MAX_ITEMS_PER_HIT

    rows = [f"w1,h1,s{i},ModelA,vid{i % 40},system,,50\n" for i in range(MAX_ITEMS_PER_HIT + 1)]
    rows.append("w1,h2,s0,ModelA,vid1,system,,50\n")  # another HIT is not counted with it
    with pytest.raises(FormatError) as refused:
        import_judgments("huge", write(tmp_path, HEADER + "".join(rows), "huge.csv"))
    assert refused.value.problems == [refused.value.problems[0]]  # one problem, on the first item too many
    assert str(refused.value.problems[0]).endswith(
        f"huge.csv, line {MAX_ITEMS_PER_HIT + 2}, field 'hit_id': HIT 'h1' would hold more than {MAX_ITEMS_PER_HIT} "
        f"items with item 's{MAX_ITEMS_PER_HIT}': split it into several HITs"
    )
    assert not Campaign.objects.exists()


def test_the_items_a_hit_holds_already_count_towards_its_size(db, tmp_path, monkeypatch):
    from assessment import csv_import

    import_judgments("grow", write(tmp_path, valid_csv()))  # h1: 24 items
    monkeypatch.setattr(csv_import, "MAX_ITEMS_PER_HIT", 25)
    before = counts()
    again = "w3,h1,s1,ModelA,vid1,system,,70\n"  # an item stored already: not a new one
    new = ["w3,h1,n1,ModelA,vid1,system,,70\n", "w3,h1,n2,ModelA,vid2,system,,70\n"]
    with pytest.raises(FormatError, match=r"more.csv, line 4, field 'hit_id': HIT 'h1' would hold more than 25"):
        import_judgments("grow", write(tmp_path, HEADER + again + "".join(new), "more.csv"))
    assert counts() == before
    import_judgments("grow", write(tmp_path, HEADER + again + new[0], "fits.csv"))
    assert HIT.objects.get(campaign__name="grow", external_id="h1").n_items == 25


def rated(name, n_videos=18):
    """A planned campaign rated by a simulated crowd (every worker does every HIT)."""
    campaign = small_campaign(make_dataset(name, n_videos=n_videos), name, qc_min_pairs=6)
    simulation.simulate_campaign(
        campaign,
        {"diligent": 4, "random": 1},
        {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 30},
        seed=3,
        hits_per_worker=3,
    )
    return campaign


def exported(client, campaign):
    response = client.get(f"/da/campaigns/{campaign.name}/judgments.csv")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def stored_judgments(campaign):
    return sorted(
        Judgment.objects.filter(assignment__hit__campaign=campaign).values_list(
            "assignment__worker__external_id", "assignment__hit_id", "item_id", "score"
        )
    )


def test_a_planned_campaigns_own_export_imported_back_is_refused_and_changes_nothing(staff_client, tmp_path):
    """The probe: the download of a planned campaign (HITs and items without ids: the export writes the HIT's
    number and the item's 1-based position) imported into that campaign wrote every judgment a second time, on
    three new HITs holding the same captions, so QC and z-scores counted every score twice."""
    campaign = rated("origin")
    text = exported(staff_client, campaign)
    assert text.splitlines()[1].split(",")[1:3] == ["1", "1"]  # HIT number 1, its first item
    before, report = counts(), analyse(campaign).report()
    with pytest.raises(CommandError) as refused:
        call_command("da_import_judgments", str(write(tmp_path, text, "back.csv")), campaign="origin")
    with pytest.raises(FormatError) as located:
        import_judgments("origin", io.StringIO(text), "back.csv")
    problems = [str(p) for p in located.value.problems]
    data = text.splitlines()[1:]
    assert len(problems) == len(data), problems[:3]
    for number, (problem, line) in enumerate(zip(problems, data), start=2):
        worker, hit, item = line.split(",")[:3]
        assert problem == (
            f"back.csv, line {number}, field 'item_id': worker {worker!r}'s judgment of item {item!r} of HIT "
            f"{hit!r} is stored already"
        )
    assert "is stored already" in str(refused.value)
    assert counts() == before and analyse(campaign).report() == report


def test_judgments_of_a_planned_campaign_not_stored_come_back_onto_its_own_hits_and_items(staff_client, tmp_path):
    """Rows of a planned campaign's download whose judgments are not stored (here: a worker's assignments were
    deleted) are matched to the campaign's HITs by number and items by position and added there; a file mixing
    them with stored judgments is refused whole."""
    campaign = rated("origin")
    text = exported(staff_client, campaign)
    judged, report = stored_judgments(campaign), analyse(campaign).report()
    lost = text.splitlines()[1].split(",")[0]
    Assignment.objects.filter(worker__external_id=lost, hit__campaign=campaign).delete()
    hits, items = HIT.objects.filter(campaign=campaign).count(), Item.objects.filter(hit__campaign=campaign).count()
    before = counts()
    with pytest.raises(FormatError) as refused:
        import_judgments("origin", write(tmp_path, text, "all.csv"))
    mine = [line for line in text.splitlines(True)[1:] if line.startswith(f"{lost},")]
    assert len(refused.value.problems) == len(text.splitlines()) - 1 - len(mine)
    assert all("stored already" in str(p) for p in refused.value.problems)
    assert counts() == before
    summary = import_judgments("origin", write(tmp_path, HEADER + "".join(mine), "lost.csv"))
    assert (summary["judgments"], summary["items"]) == (len(mine), 0)
    assert HIT.objects.filter(campaign=campaign).count() == hits
    assert Item.objects.filter(hit__campaign=campaign).count() == items
    assert stored_judgments(campaign) == judged  # the same HITs, items and scores as before the loss
    assert analyse(campaign).report() == report


def test_a_restore_that_fails_while_writing_writes_nothing_and_can_be_retried(staff_client, tmp_path, monkeypatch):
    """A crash between the restore's writes (the worker's assignments made, its judgments not yet) leaves the
    campaign as it was, and the same file imported again then restores it once."""
    campaign = rated("origin")
    text = exported(staff_client, campaign)
    judged = stored_judgments(campaign)
    lost = text.splitlines()[1].split(",")[0]
    Assignment.objects.filter(worker__external_id=lost, hit__campaign=campaign).delete()
    mine = HEADER + "".join(line for line in text.splitlines(True)[1:] if line.startswith(f"{lost},"))
    before = counts()
    real = Judgment.objects.bulk_create

    def crash(*args, **kwargs):
        raise RuntimeError("the process died here")

    monkeypatch.setattr(Judgment.objects, "bulk_create", crash)
    with pytest.raises(RuntimeError):
        import_judgments("origin", write(tmp_path, mine, "lost.csv"))
    assert counts() == before
    monkeypatch.setattr(Judgment.objects, "bulk_create", real)
    import_judgments("origin", write(tmp_path, mine, "lost.csv"))
    assert stored_judgments(campaign) == judged
    with pytest.raises(FormatError, match="stored already"):  # a second retry stores nothing twice
        import_judgments("origin", write(tmp_path, mine, "lost.csv"))
    assert stored_judgments(campaign) == judged


def test_rows_naming_a_planned_item_by_its_position_must_agree_with_it(staff_client, tmp_path):
    campaign = rated("origin")
    line = next(
        line
        for line in exported(staff_client, campaign).splitlines()[1:]
        if line.split(",")[1] == "1" and line.split(",")[5] == "system"
    )
    _, _, item, system, video, _, _, score = line.split(",")
    other = "Gamma" if system != "Gamma" else "Beta"
    before = counts()
    with pytest.raises(FormatError) as refused:
        import_judgments(
            "origin", io.StringIO(f"{HEADER}newcomer,1,{item},{other},{video},system,,{score}\n"), "new.csv"
        )
    assert [str(p) for p in refused.value.problems] == [
        f"new.csv, line 2, field 'item_id': item {item!r} of HIT '1' is stored as system of {system!r} on video "
        f"{video!r}"
    ]
    assert counts() == before


def test_a_control_item_must_pair_with_the_item_it_is_stored_paired_with(db, tmp_path):
    text = valid_csv().replace(",s3,ModelA,vid2,", ",s3,ModelA,vid1,")  # s1 and s3: one caption, shown twice
    import_judgments("pairs", write(tmp_path, text))
    before = counts()
    again = "w3,h1,s3,ModelA,vid1,system,,70\nw3,h1,r1,ModelA,vid1,repeat,s3,72\n"  # r1 repeats s1
    with pytest.raises(FormatError) as refused:
        import_judgments("pairs", io.StringIO(HEADER + again), "more.csv")
    assert [str(p) for p in refused.value.problems] == [
        "more.csv, line 3, field 'control_of': item 'r1' of HIT 'h1' is stored paired with item 's1', not 's3'"
    ]
    assert counts() == before


def test_a_hit_id_naming_two_hits_of_the_campaign_is_refused(staff_client, tmp_path):
    """A campaign doubled by the old import holds HIT 4 with id '1' beside HIT 1 (no id): '1' names both, and
    the import says so rather than guess."""
    campaign = rated("origin")
    line = exported(staff_client, campaign).splitlines()[1].split(",")
    HIT.objects.create(campaign=campaign, number=6, external_id="1")
    before = counts()
    with pytest.raises(FormatError) as refused:
        import_judgments("origin", io.StringIO(HEADER + ",".join(["newcomer"] + line[1:]) + "\n"), "new.csv")
    assert [str(p) for p in refused.value.problems] == [
        "new.csv, line 2, field 'hit_id': HIT '1' names two HITs of campaign origin, HIT 1 (by its number) and "
        "HIT 6 (by its id '1'), so its rows cannot be matched"
    ]
    assert counts() == before


def test_an_account_rated_campaign_comes_back_from_its_export_after_a_forced_delete(
    staff_client, tmp_path, django_user_model
):
    """docs/direct-assessment.md, "Deletion": export the judgments, force the delete, bring them back with
    da_import_judgments. Judgments of site accounts (worker ids 'account:NAME') were refused on every row; with
    --own-download they go back to the account's own worker, and no worker is created."""
    from annotation_site.corpus.protection import HumanWorkAtRisk, refuse_if_human_work

    campaign = rated("origin")
    for name, worker in zip(("alice", "bob"), Worker.objects.filter(source="simulation").order_by("external_id")):
        account = workers.worker_for_user(django_user_model.objects.create_user(name))  # what the rate page does
        Assignment.objects.filter(worker=worker).update(worker=account)
    text = exported(staff_client, campaign)
    assert "\naccount:alice,1," in text and "\naccount:bob,1," in text
    judged, report = stored_judgments(campaign), analyse(campaign).report()
    with pytest.raises(HumanWorkAtRisk):
        refuse_if_human_work("deleting dataset 'origin'", datasets=[campaign.dataset])
    campaign.dataset.delete()  # forced
    stored_workers = sorted(Worker.objects.values_list("pk", "external_id", "kind", "user_id"))
    path = write(tmp_path, text, "backup.csv")
    with pytest.raises(CommandError, match="line 2, field 'worker_id': .*reserves for site accounts.*--own-download"):
        call_command("da_import_judgments", str(path), campaign="origin")
    assert not Campaign.objects.exists()
    call_command("da_import_judgments", str(path), campaign="origin", own_download=True, stdout=io.StringIO())
    call_command("da_qc", campaign="origin", min_pairs=6, stdout=io.StringIO())  # the planned campaign's minimum
    assert sorted(Worker.objects.values_list("pk", "external_id", "kind", "user_id")) == stored_workers
    restored = Campaign.objects.get(name="origin")
    alice = Worker.objects.get(user__username="alice")
    assert Judgment.objects.filter(assignment__hit__campaign=restored, assignment__worker=alice).count() == sum(
        1 for row in judged if row[0] == "account:alice"
    )
    copy = analyse(restored).report()
    assert copy["workers"] == report["workers"] and copy["systems"] == report["systems"]
    assert QCResult.objects.filter(campaign=restored, worker=alice).exists()


def test_restoring_attaches_judgments_only_to_an_existing_accounts_own_worker(db, tmp_path, django_user_model):
    """The identity rule holds (docs/reliability.md, "Identity"): an 'account:' id is restored only to the
    worker of an account that exists; never to a look-alike external worker, a deleted account's worker, an
    account that never rated here or an id in other case; no worker is ever created under 'account:'."""
    alice = workers.worker_for_user(django_user_model.objects.create_user("alice"))
    carol = django_user_model.objects.create_user("carol")
    workers.worker_for_user(carol)
    carol.delete()  # her worker stays, bound to nobody
    django_user_model.objects.create_user("dave")  # never rated: no worker
    Worker.objects.create(external_id="account:mallory", source="link")  # a look-alike from before the rule
    stored_workers = sorted(Worker.objects.values_list("pk", "external_id", "kind", "user_id"))
    text = valid_csv().replace("w1,", "account:alice,")
    refused = {
        "account:ghost": "names no site account's worker on this platform",
        "Account:alice": "names no site account's worker on this platform",
        "account:carol": "belongs to a deleted site account",
        "account:dave": "names no site account's worker on this platform",
        "account:mallory": "is not a site account's worker",
    }
    text += "".join(f"{name},h1,s1,ModelA,vid1,system,,70\n" for name in refused)
    first = len(valid_csv().splitlines()) + 1
    with pytest.raises(FormatError) as error:
        import_judgments("restore", io.StringIO(text), "r.csv", own_download=True)
    problems = [str(p) for p in error.value.problems]
    assert len(problems) == len(refused), problems
    for line, (problem, (name, message)) in enumerate(zip(problems, refused.items()), start=first):
        assert problem.startswith(f"r.csv, line {line}, field 'worker_id': worker_id {name!r} ") and message in problem
    assert not Campaign.objects.exists()
    assert sorted(Worker.objects.values_list("pk", "external_id", "kind", "user_id")) == stored_workers
    with pytest.raises(FormatError, match="r.csv, line 2, field 'worker_id': .*reserves for site accounts"):
        import_judgments("restore", io.StringIO(valid_csv().replace("w1,", "account:alice,")), "r.csv")
    import_judgments(
        "restore", write(tmp_path, valid_csv().replace("w1,", "account:alice,"), "r.csv"), own_download=True
    )
    assert Assignment.objects.get(hit__campaign__name="restore", worker__external_id="account:alice").worker == alice
    assert set(Worker.objects.filter(external_id__istartswith="account:").values_list("external_id", "kind")) == {
        ("account:alice", "account"),
        ("account:carol", "account"),
        ("account:mallory", "external"),
    }


def test_crowd_participants_ids_are_refused_unless_restoring_to_their_workers(db):
    """A row with a crowd participant's id (prolific:ID) made an ordinary external worker under it, which the
    participant, admitted later through their panel, could not use ("belongs to an external worker"). Such ids are
    now refused like account ids; restoring the platform's own download attaches them to the participant worker
    of that exact id, and never creates one."""
    participant = workers.participant_worker("prolific:P1")
    before = sorted(Worker.objects.values_list("pk", "external_id", "kind"))
    text = valid_csv().replace("w1,", "prolific:P1,")
    with pytest.raises(FormatError, match=r"r.csv, line 2, field 'worker_id': .*'prolific:'.*crowd participants"):
        import_judgments("restore", io.StringIO(text), "r.csv")
    ghost = valid_csv().replace("w1,", "mturk:GHOST,")
    with pytest.raises(FormatError, match=r"line 2, field 'worker_id': worker_id 'mturk:GHOST' names no crowd partic"):
        import_judgments("restore", io.StringIO(ghost), "r.csv", own_download=True)
    assert sorted(Worker.objects.values_list("pk", "external_id", "kind")) == before and not Campaign.objects.exists()
    import_judgments("restore", io.StringIO(text), "r.csv", own_download=True)
    assert Assignment.objects.get(hit__campaign__name="restore", worker=participant)
    assert workers.participant_worker("prolific:P1") == participant  # still theirs
    assert not Worker.objects.filter(external_id__istartswith="mturk:").exists()


def _corpus_csv(human="gt", system="Alpha", video="v0001"):
    """One worker, one HIT of a corpus dataset (make_dataset's names): 2 system items, 10 original/degraded pairs
    of the human captions ``human``."""
    lines = [HEADER, f"w1,h1,s1,{system},{video},system,,70\n", "w1,h1,s2,Beta,v0002,system,,40\n"]
    for k in range(10):
        lines.append(f"w1,h1,o{k},{human},v{k:04d},original,d{k},{80 + k}\n")
        lines.append(f"w1,h1,d{k},{human},v{k:04d},degraded,o{k},{20 + k}\n")
    return "".join(lines)


def test_judgments_imported_into_a_corpus_attach_to_its_captions_and_reference_sets(db, tmp_path):
    """An import into a dataset with captions created whatever it did not find, empty: a reference set named as
    the human captions became a human system of 20 captions without text (so da_plan then said "0 human captions
    can be degraded", the video pages showed an empty caption and the dataset's export was refused by its own
    import), and a misspelt system or video another empty one."""
    from annotation_site.corpus.models import Sentence

    dataset = make_dataset("corpus", n_videos=12, human=None, references="gt")
    before = (System.objects.count(), Video.objects.count(), Caption.objects.count(), Sentence.objects.count())
    for text, line, field, message in (
        (_corpus_csv(system="Alfa"), 2, "system", "system 'Alfa' is not a system of dataset corpus"),
        (_corpus_csv(video="v9999"), 2, "video_id", "video 'v9999' is not a video of dataset corpus"),
        (_corpus_csv(human="gtt"), 4, "system", "'gtt' is neither a system nor a reference set of dataset corpus"),
    ):
        with pytest.raises(FormatError) as caught:
            import_judgments("corpus", io.StringIO(text), "j.csv")
        found = [(p.line, p.where, p.message) for p in caught.value.problems]
        assert any((ln, where) == (line, f"field '{field}'") and message in text for ln, where, text in found), found
        assert "name its systems and videos as the dataset has them" in found[0][2]
    assert (System.objects.count(), Video.objects.count(), Caption.objects.count(), Sentence.objects.count()) == before

    import_judgments("corpus", io.StringIO(_corpus_csv()), "j.csv")  # gt: the reference set, as da_plan takes it
    campaign = Campaign.objects.get(name="corpus")
    human = campaign.human_system
    assert (human.name, human.is_human, human.dataset_id) == ("gt", True, dataset.pk)
    texts = dict(Caption.objects.filter(system=human).values_list("video__external_id", "sentences__text"))
    references = dict(dataset.videos.values_list("external_id", "references__text"))
    assert texts == references and all(texts.values())  # every human caption holds its reference's text
    assert not Caption.objects.filter(video__dataset=dataset, sentences__isnull=True).exists()
    assert System.objects.filter(dataset=dataset).count() == before[0] + 1 and Video.objects.count() == before[1]
    assert Judgment.objects.filter(item__hit__campaign=campaign).count() == 22


def test_planning_from_a_reference_set_refuses_a_human_system_without_text(db):
    """A human system an older judgments import made from a reference set's name (captions without text) was
    taken for the reference set: da_plan then said "0 human captions can be degraded ... choose at most 0 pairs
    per HIT", blaming the layout."""
    from assessment.campaigns import CampaignError, human_system_from_references

    dataset = make_dataset("old-import", n_videos=4, human=None, references="gt")
    empty = System.objects.create(dataset=dataset, name="gt", is_human=True, position=9)
    Caption.objects.bulk_create([Caption(video=v, system=empty) for v in dataset.videos.all()])
    with pytest.raises(CampaignError, match="whose captions hold no text"):
        human_system_from_references(dataset, "gt")
