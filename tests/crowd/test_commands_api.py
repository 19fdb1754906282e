"""Commands and REST endpoints of crowd work: the crowd_payments contract, studies, links, ledger, codes."""

import json
import shlex
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation_site.crowd import links
from annotation_site.crowd.models import LedgerEntry, Participation, Study

from ..conftest import wait_until

pytestmark = pytest.mark.django_db
QC_KEYS = {"test", "p_value", "n_pairs", "threshold", "status"}
DECISION_KEYS = {"worker_id", "hit_id", "action", "reason", "bonus", "state", "qc"}


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_crowd_payments_dry_run_json_contract(toy_campaign):
    document = json.loads(
        run("crowd_payments", "--campaign", "camp-7", "--policy", "approve-passing", "--dry-run", "--format", "json")
    )
    assert set(document) == {"campaign", "policy", "decisions"}
    assert (document["campaign"], document["policy"]) == ("camp-7", "approve-passing")
    assert len(document["decisions"]) == 4
    for decision in document["decisions"]:
        assert set(decision) == DECISION_KEYS and set(decision["qc"]) == QC_KEYS
    by_worker = {d["worker_id"].rsplit(":", 1)[1]: d for d in document["decisions"]}
    assert by_worker["w-pass"]["action"] == "approve" and by_worker["w-pass"]["bonus"] == "0.40"
    assert by_worker["w-fail"]["action"] == "reject" and len(by_worker["w-fail"]["reason"]) >= 100
    assert by_worker["w-short"]["action"] == "review" and by_worker["w-short"]["qc"]["status"] == "insufficient_data"
    assert by_worker["w-busy"]["action"] == "review" and "still working" in by_worker["w-busy"]["reason"]
    assert by_worker["w-pass"]["qc"] == {
        "test": "wilcoxon",
        "p_value": 0.001,
        "n_pairs": 12,
        "threshold": 0.05,
        "status": "passed",
    }
    assert {d["state"] for d in document["decisions"]} == {"planned", "review"}
    assert LedgerEntry.objects.count() == 0  # --dry-run records nothing


@pytest.mark.django_db(transaction=True)
def test_crowd_payments_records_then_sends_once(toy_campaign, celery_worker):
    run("crowd_payments", "--campaign", "camp-7", "--policy", "approve-passing")
    assert LedgerEntry.objects.filter(state="planned").count() == 3  # approve, reject, bonus
    run("crowd_payments", "--campaign", "camp-7", "--policy", "approve-passing", "--send", "--format", "json")
    wait_until(lambda: LedgerEntry.objects.filter(state="confirmed").count() == 3, what="the payment task")
    document = json.loads(
        run("crowd_payments", "--campaign", "camp-7", "--policy", "approve-passing", "--dry-run", "--format", "json")
    )
    states = {d["worker_id"].rsplit(":", 1)[1]: d["state"] for d in document["decisions"]}
    assert states == {"w-pass": "confirmed", "w-fail": "confirmed", "w-short": "review", "w-busy": "review"}
    assert LedgerEntry.objects.count() == 3


def test_crowd_payments_refuses_unknown_campaigns(toy):
    with pytest.raises(CommandError, match="no campaign or project named 'nope'"):
        run("crowd_payments", "--campaign", "nope", "--dry-run")


def test_crowd_study_create_links_and_verify_code(toy):
    toy.add("camp-8", [("1", 2)])
    out = run("crowd_study", "create", "--target", "camp-8", "--provider", "link", "--name", "c8", "--reward", "1.20")
    assert "created study c8" in out and "/crowd/s/" in out
    run("crowd_study", "publish", "--name", "c8")
    assert Study.objects.get(name="c8").status == "published"
    lines = run("crowd_study", "links", "--name", "c8", "--participants", "p1", "p2").strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["p1", "p2"] and all("/crowd/p/" in line for line in lines)
    with pytest.raises(CommandError, match="a study named 'c8' exists"):
        run("crowd_study", "create", "--target", "camp-8", "--provider", "link", "--name", "c8")


def test_crowd_study_consent_from_a_file_or_a_clear_error(toy, tmp_path):
    """--consent takes the text or a file's path. The file is read as the command line's files are (UTF-8,
    size, NUL); one that cannot be read, or a file name that names no file, is an error, never the consent text
    participants are shown (a file not in UTF-8 was a bare codec error; an unreadable one set its path as the text)."""
    toy.add("camp-9", [("1", 2)])
    create = ["crowd_study", "create", "--target", "camp-9", "--provider", "link"]
    good = tmp_path / "consent.txt"
    good.write_text("Ihre Bewertungen dienen der Forschung. Einverstanden?\n", encoding="utf-8")
    run(*create, "--name", "c9-file", "--consent", str(good))
    assert Study.objects.get(name="c9-file").consent_text == "Ihre Bewertungen dienen der Forschung. Einverstanden?\n"
    run(*create, "--name", "c9-text", "--consent", "Do you agree to take part?")
    assert Study.objects.get(name="c9-text").consent_text == "Do you agree to take part?"

    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Einverständnis".encode("latin-1"))
    with pytest.raises(CommandError, match=r"--consent: .*latin1.txt.*UTF-8"):
        run(*create, "--name", "c9-latin1", "--consent", str(latin1))
    with pytest.raises(CommandError, match="--consent: .*cannot read the file"):
        run(*create, "--name", "c9-folder", "--consent", str(tmp_path))
    with pytest.raises(CommandError, match="--consent: no file consent-v2.txt"):
        run(*create, "--name", "c9-typo", "--consent", "consent-v2.txt")
    assert not Study.objects.filter(name__in=["c9-latin1", "c9-folder", "c9-typo"]).exists()


def test_api_studies_payments_and_codes(client, staff_user, toy_campaign):
    target, study = toy_campaign
    assert client.get(reverse("api-crowd-studies")).status_code in (401, 403)
    client.force_login(staff_user)
    listed = client.get(reverse("api-crowd-studies")).json()
    assert [s["name"] for s in listed] == ["camp-7-panel"]
    detail = client.get(reverse("api-crowd-study", args=["camp-7-panel"])).json()
    assert detail["progress"]["participations"]["completed"] == 3 and "/crowd/s/" in detail["entry_url"]
    preview = client.get(reverse("api-crowd-payments"), {"campaign": "camp-7", "policy": "approve-passing"}).json()
    assert set(preview) == {"campaign", "policy", "decisions"} and len(preview["decisions"]) == 4
    recorded = client.post(
        reverse("api-crowd-payments"), {"campaign": "camp-7", "policy": "approve-all"}, content_type="application/json"
    )
    assert recorded.status_code == 201 and recorded.json()["recorded"] == 4  # 3 approvals, the study's bonus
    assert LedgerEntry.objects.filter(action="approve").count() == 3
    created = client.post(
        reverse("api-crowd-studies"),
        {"target": "camp-7", "name": "camp-7-pro", "provider": "prolific", "reward": "2.00"},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["end_mode"] == "redirect"
    bad = client.post(
        reverse("api-crowd-studies"),
        {"target": "zzz", "name": "x", "provider": "link"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "zzz" in bad.json()["detail"]
    participation = Participation.objects.filter(status="completed").select_related("participant").first()
    code = links.completion_code(study.pk, participation.work_key, participation.participant.worker_key)
    verdict = client.post(
        reverse("api-crowd-verify-code"),
        {"study": "camp-7-panel", "code": code, "participant_id": participation.participant.platform_id},
        content_type="application/json",
    ).json()
    assert verdict["valid"] is True
    assert client.post(
        reverse("api-crowd-verify-code"),
        {"study": "camp-7-panel", "code": "AAAAAAAAAA", "participant_id": participation.participant.platform_id},
        content_type="application/json",
    ).json() == {"valid": False}


@pytest.mark.django_db(transaction=True)
def test_pages_for_researchers(client, staff_user, toy_campaign, celery_worker):
    client.force_login(staff_user)
    assert b"camp-7-panel" in client.get(reverse("crowd-studies")).content
    page = client.get(reverse("crowd-study", args=["camp-7-panel"]))
    assert page.status_code == 200 and b"w-pass" in page.content
    preview = client.get(reverse("crowd-payments", args=["toy", "camp-7"]), {"policy": "approve-passing"})
    assert preview.status_code == 200 and preview.content.count(b'data-action="review"') == 2
    # recording needs the confirmation box
    client.post(reverse("crowd-payments", args=["toy", "camp-7"]), {"policy": "approve-passing", "send": "no"})
    assert LedgerEntry.objects.count() == 0
    client.post(
        reverse("crowd-payments", args=["toy", "camp-7"]),
        {"policy": "approve-passing", "confirm": "yes", "send": "yes", "seen": preview.context["seen"]},
    )
    wait_until(
        lambda: set(LedgerEntry.objects.values_list("state", flat=True)) == {"confirmed"}, what="the payment task"
    )
    worker = Participation.objects.get(participant__platform_id="w-pass").participant
    page = client.get(reverse("crowd-worker", args=[worker.pk]))
    assert page.status_code == 200 and b"passed" in page.content and b"0.40" in page.content
    ledger = client.get(reverse("crowd-ledger-csv", args=["camp-7-panel"])).content.decode()
    assert ledger.splitlines()[0].startswith("worker_id,hit_id,assignment")


def test_every_entry_point_plans_with_the_study_s_settings(client, staff_user, toy_campaign):
    """The payments page, the API and crowd_payments, given no policy or bonus, plan the same decisions: the
    study's (approve-passing, 0.40 per passing HIT). The API planned no bonus then, and recording through it
    deleted the bonuses the page had planned."""
    _, study = toy_campaign
    study.policy = "approve-all"
    study.save(update_fields=["policy"])
    client.force_login(staff_user)

    def planned():
        return sorted(LedgerEntry.objects.values_list("kind", "action", "amount", "state"))

    command = json.loads(run("crowd_payments", "--campaign", "camp-7", "--dry-run", "--format", "json"))
    api = client.get(reverse("api-crowd-payments"), {"campaign": "camp-7"}).json()
    page = client.get(reverse("crowd-payments", args=["toy", "camp-7"]))
    assert command == api and api["policy"] == page.context["policy"] == "approve-all"
    assert [d["bonus"] for d in api["decisions"] if d["bonus"]] == ["0.40"]  # the one passing HIT
    assert page.context["bonus_scope"] == "per-passing-hit" and str(page.context["bonus_amount"]) == "0.40"
    client.post(reverse("crowd-payments", args=["toy", "camp-7"]), {"confirm": "yes", "seen": page.context["seen"]})
    by_page = planned()
    assert ("bonus", "bonus", Decimal("0.40"), "planned") in by_page
    assert (
        client.post(reverse("api-crowd-payments"), {"campaign": "camp-7"}, content_type="application/json").status_code
        == 201
    )
    assert planned() == by_page  # recording again through the API keeps the page's bonus
    run("crowd_payments", "--campaign", "camp-7")
    assert planned() == by_page


@pytest.mark.parametrize("paid", ["false", "0", "no", False])
def test_resolving_a_dispatch_as_not_paid_is_never_read_as_paid(client, staff_user, toy_campaign, paid, monkeypatch):
    from annotation_site.crowd import sending
    from annotation_site.crowd.models import Dispatch

    _, study = toy_campaign
    dispatch = Dispatch.objects.create(study=study, kind="bonus", state=Dispatch.State.IN_DOUBT)
    told = []
    monkeypatch.setattr(sending, "resolve_dispatch", lambda d, *, paid, user: told.append(paid) or d)
    client.force_login(staff_user)
    url = reverse("api-crowd-resolve", args=[dispatch.pk])
    assert client.post(url, {"paid": paid}, content_type="application/json").status_code == 200
    assert client.post(url, {"paid": paid}).status_code == 200  # a form field too
    assert told == [False, False]


@pytest.mark.parametrize("field", ["paid", "send"])
def test_a_yes_no_field_that_is_neither_is_refused_before_anything_is_done(client, staff_user, toy_campaign, field):
    from annotation_site.crowd.models import Dispatch

    _, study = toy_campaign
    dispatch = Dispatch.objects.create(study=study, kind="bonus", state=Dispatch.State.IN_DOUBT)
    client.force_login(staff_user)
    url = reverse("api-crowd-resolve", args=[dispatch.pk]) if field == "paid" else reverse("api-crowd-payments")
    answer = client.post(url, {"campaign": "camp-7", field: "maybe"}, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["fields"] == {field: f"{field} must be true or false"}
    dispatch.refresh_from_db()
    assert dispatch.state == Dispatch.State.IN_DOUBT and LedgerEntry.objects.count() == 0


def test_the_study_page_names_each_batch_in_doubt(client, staff_user, toy_campaign):
    from annotation_site.crowd.models import Dispatch

    _, study = toy_campaign
    Dispatch.objects.create(study=study, kind="bonus", state=Dispatch.State.IN_DOUBT, external_id="60b1c0ffee")
    client.force_login(staff_user)
    html = client.get(reverse("crowd-study", args=[study.name])).content.decode()
    assert "bulk bonus payment 60b1c0ffee, 0 bonus(es)" in html and "crowd_ledger resolve --dispatch" in html


def test_the_payments_page_records_only_the_decisions_it_showed(client, staff_user, toy_campaign, toy):
    """The click recomputed the decisions: a QC result that arrived after the page was shown was recorded unseen."""
    from .conftest import FAILED

    client.force_login(staff_user)
    url = reverse("crowd-payments", args=["toy", "camp-7"])
    shown = client.get(url, {"policy": "approve-passing"}).context["seen"]
    qc = toy.targets["camp-7"].qc
    qc[next(worker for worker in qc if worker.endswith("w-pass"))] = FAILED  # QC changed meanwhile
    answer = client.post(url, {"policy": "approve-passing", "confirm": "yes", "seen": shown}, follow=True)
    assert b"The decisions changed since this page was shown" in answer.content
    assert not LedgerEntry.objects.exists()
    seen = answer.context["seen"]  # the page shows them again, with their own digest
    client.post(url, {"policy": "approve-passing", "confirm": "yes", "seen": seen})
    assert LedgerEntry.objects.filter(action="reject").count() == 2 and not LedgerEntry.objects.filter(kind="bonus")


def run_both(*args):
    """A command's (stdout, stderr)."""
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _participant_path(url):
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def test_links_of_a_study_not_published_say_they_do_not_work_yet_and_how_to_publish(toy, client):
    """A new study is a draft: its links answer "This study is not taking participants" (410) until it is
    published. Making them said nothing of it; now ``create`` and ``links`` say so on stderr with the command that
    publishes (stdout keeps one ID<TAB>URL line per link), and say nothing once the study is published."""
    toy.add("camp-10", [("1", 2)])
    _, err = run_both("crowd_study", "create", "--target", "camp-10", "--provider", "link", "--name", "c10")
    assert "is a draft (not published yet)" in err and "python manage.py crowd_study publish --name c10" in err
    out, err = run_both("crowd_study", "links", "--name", "c10", "--participants", "p1")
    [line] = out.strip().splitlines()
    participant_id, url = line.split("\t")
    assert participant_id == "p1" and "/crowd/p/" in url
    assert "links will not work" in err and "until it is published" in err
    assert "python manage.py crowd_study publish --name c10" in err
    assert client.get(_participant_path(url)).status_code == 410  # what the warning is about
    run("crowd_study", "publish", "--name", "c10")
    out, err = run_both("crowd_study", "links", "--name", "c10", "--participants", "p1")
    assert err == "" and client.get(_participant_path(out.strip().split("\t")[1])).status_code == 200
    run("crowd_study", "pause", "--name", "c10")
    _, err = run_both("crowd_study", "links", "--name", "c10", "--participants", "p2")
    assert "c10 is paused" in err and "crowd_study publish --name c10" in err


def test_the_study_page_and_the_api_say_links_need_a_published_study(client, staff_user, toy):
    toy.add("camp-11", [("1", 2)])
    run("crowd_study", "create", "--target", "camp-11", "--provider", "link", "--name", "c11")
    client.force_login(staff_user)
    page = client.post(reverse("crowd-study-links", args=["c11"]), {"ids": "p1"}, follow=True)
    html = page.content.decode()
    assert 'id="links-unpublished"' in html and "/crowd/p/" in html
    notice = html.split('id="links-unpublished">', 1)[1].split("</p>", 1)[0]
    assert "links will not work" in notice and "until it is published" in notice and "Publish" in notice
    made = client.post(
        reverse("api-crowd-study-action", args=["c11", "links"]),
        {"participant_ids": ["p2"]},
        content_type="application/json",
    )
    assert made.status_code == 201
    assert (
        "until it is published" in made.json()["warning"]
        and "/api/crowd/studies/c11/publish/" in made.json()["warning"]
    )
    client.post(reverse("crowd-study-action", args=["c11"]), {"action": "publish"})
    assert 'id="links-unpublished"' not in client.get(reverse("crowd-study", args=["c11"])).content.decode()
    again = client.post(
        reverse("api-crowd-study-action", args=["c11", "links"]),
        {"participant_ids": ["p2"]},
        content_type="application/json",
    )
    assert again.json()["warning"] is None


def test_the_in_short_link_steps_of_the_crowd_docs_give_links_that_work(toy, client):
    """docs/crowd.md "In short": the steps for other sources, run as written (against a toy target of that
    name), give links that let the participant in. They had no publish step: the links answered 410."""
    text = Path(__file__).resolve().parents[2].joinpath("docs", "crowd.md").read_text(encoding="utf-8")
    block = text.split("## In short", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    steps = block.split("# other sources", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    commands = [shlex.split(line.split("#", 1)[0]) for line in steps if line.startswith("python manage.py")]
    assert [c[3] for c in commands][0] == "create" and [c[3] for c in commands][-1] == "links"
    target = commands[0][commands[0].index("--target") + 1]
    toy.add(target, [("1", 2), ("2", 2)])
    for command in commands[:-1]:
        run(*command[2:])
    urls = [line.split("\t")[1] for line in run(*commands[-1][2:]).strip().splitlines()]
    assert len(urls) == 2
    for url in urls:
        page = client.get(_participant_path(url))
        assert page.status_code == 200, page.content[:300]


def test_links_on_pages_start_with_the_address_the_page_was_reached_at(client, staff_user, toy, settings):
    """The study page and the API showed the entry address and participant links on CAPTIONEVAL_BASE_URL
    (default http://127.0.0.1:8000) whatever address staff reached them at, so links copied from a page of a
    site served elsewhere led nowhere; every other page uses the address it is reached at (README). Commands,
    which have no request, still use the setting."""
    settings.CAPTIONEVAL_BASE_URL = "https://public.example"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "lab.example"]
    toy.add("camp-12", [("1", 2)])
    out = run("crowd_study", "create", "--target", "camp-12", "--provider", "link", "--name", "c12")
    assert "entry: https://public.example/crowd/s/" in out
    client.force_login(staff_user)
    host = {"HTTP_HOST": "lab.example:8103"}
    page = client.post(reverse("crowd-study-links", args=["c12"]), {"ids": "p1"}, follow=True, **host).content
    assert "http://lab.example:8103/crowd/s/" in page.decode() and "http://lab.example:8103/crowd/p/" in page.decode()
    assert "127.0.0.1:8000" not in page.decode() and "public.example" not in page.decode()
    detail = client.get(reverse("api-crowd-study", args=["c12"]), **host).json()
    assert detail["entry_url"].startswith("http://lab.example:8103/crowd/s/")
    made = client.post(
        reverse("api-crowd-study-action", args=["c12", "links"]),
        {"participant_ids": ["p2"]},
        content_type="application/json",
        **host,
    ).json()
    assert made["links"][0]["url"].startswith("http://lab.example:8103/crowd/p/")


def test_a_payment_run_uses_the_study_its_participants_came_through_and_refuses_mixed_settings(
    client, staff_user, toy_campaign, toy
):
    """A second study made on the same campaign after the participants came (a draft on another platform, no
    bonus, another currency) took over the payment run: the participants promised a bonus of 0.40 per passing HIT
    were planned none, and the page showed amounts in that study's currency."""
    from .conftest import PASSED, worked

    target, panel = toy_campaign
    Study.objects.create(
        name="camp-7-mturk", provider="mturk", protocol="toy", object_id=target.object_id, target_name="camp-7",
        currency="USD",
    )  # fmt: skip
    document = json.loads(run("crowd_payments", "--campaign", "camp-7", "--dry-run", "--format", "json"))
    by_worker = {d["worker_id"].rsplit(":", 1)[1]: d for d in document["decisions"]}
    assert by_worker["w-pass"]["action"] == "approve" and by_worker["w-pass"]["bonus"] == "0.40"
    client.force_login(staff_user)
    page = client.get(reverse("crowd-payments", args=["toy", "camp-7"]))
    assert page.context["study"] == panel and page.context["currency"] == panel.currency

    # participants through a second study that pays differently: nothing is recorded, every entry point says why
    other = Study.objects.create(
        name="camp-7-other", provider="link", protocol="toy", object_id=target.object_id, target_name="camp-7",
        status="published", currency="USD",
    )  # fmt: skip
    worked(toy, target, other, None, "w-other", qc=PASSED)
    with pytest.raises(CommandError, match="came through 2 crowd studies that pay differently"):
        run("crowd_payments", "--campaign", "camp-7")
    _, err = run_both("crowd_payments", "--campaign", "camp-7", "--dry-run")
    assert "nothing can be recorded until those studies share" in err
    answer = client.post(reverse("api-crowd-payments"), {"campaign": "camp-7"}, content_type="application/json")
    assert answer.status_code == 400 and "pay differently" in json.dumps(answer.json()), answer.json()
    url = reverse("crowd-payments", args=["toy", "camp-7"])
    page = client.get(url)
    assert "pay differently" in page.content.decode()
    shown = page.context["seen"]
    answer = client.post(url, {"confirm": "yes", "seen": shown}, follow=True)
    assert "pay differently" in answer.content.decode()
    assert not LedgerEntry.objects.exists()

    Study.objects.filter(pk=other.pk).update(  # the same settings: recorded as one run
        currency=panel.currency, bonus_scope=panel.bonus_scope, bonus_amount=panel.bonus_amount
    )
    run("crowd_payments", "--campaign", "camp-7")
    assert LedgerEntry.objects.filter(kind="bonus").count() == 2


def test_a_missing_platform_credential_is_said_not_a_500(client, staff_user, toy, settings):
    """Publishing a Prolific study without PROLIFIC_API_TOKEN was a 500 page (the API's an HTML 500) and a raw
    traceback from crowd_study: MissingCredential, an ImproperlyConfigured, was caught nowhere."""
    settings.PROLIFIC_API_TOKEN = ""
    toy.add("camp-12", [("1", 2)])
    run("crowd_study", "create", "--target", "camp-12", "--provider", "prolific", "--name", "c12")
    with pytest.raises(CommandError, match="Prolific needs PROLIFIC_API_TOKEN"):
        run("crowd_study", "publish", "--name", "c12")
    client.force_login(staff_user)
    page = client.post(reverse("crowd-study-action", args=["c12"]), {"action": "publish"}, follow=True)
    assert page.status_code == 200 and "Prolific needs PROLIFIC_API_TOKEN" in page.content.decode()
    answer = client.post(
        reverse("api-crowd-study-action", args=["c12", "publish"]), {}, content_type="application/json"
    )
    assert answer.status_code == 400 and "Prolific needs PROLIFIC_API_TOKEN" in answer.json()["detail"]
    assert Study.objects.get(name="c12").status == "draft"


def test_a_draft_cannot_be_paused(client, staff_user, toy):
    """Pausing a study never published made it 'paused': the draft label and its 'publish first' guidance went."""
    toy.add("camp-13", [("1", 2)])
    run("crowd_study", "create", "--target", "camp-13", "--provider", "link", "--name", "c13")
    with pytest.raises(CommandError, match="is a draft \\(not published yet\\): it admits nobody"):
        run("crowd_study", "pause", "--name", "c13")
    client.force_login(staff_user)
    assert 'value="pause"' not in client.get(reverse("crowd-study", args=["c13"])).content.decode()
    page = client.post(reverse("crowd-study-action", args=["c13"]), {"action": "pause"}, follow=True)
    assert "nothing to pause" in page.content.decode()
    assert Study.objects.get(name="c13").status == "draft"
    run("crowd_study", "publish", "--name", "c13")
    run("crowd_study", "pause", "--name", "c13")
    assert Study.objects.get(name="c13").status == "paused"
