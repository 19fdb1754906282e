"""Entry, consent, practice, taking a slot, finishing and releasing, through the participant pages, on the
signed-link provider and on Prolific (against the fake server)."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation_site.crowd import admission, links
from annotation_site.crowd.models import Participant, Participation, PracticeItem, Study
from annotation_site.crowd.providers.base import AdmissionRefused

pytestmark = pytest.mark.django_db


def link_study(target, name="panel", **fields):
    defaults = dict(
        provider="link",
        protocol="toy",
        object_id=target.object_id,
        target_name=target.name,
        status=Study.Status.PUBLISHED,
        id_parameter="pid",
    )
    defaults.update(fields)
    return Study.objects.create(name=name, **defaults)


def enter(client, study, **params):
    return client.get(reverse("crowd-entry", args=[links.entry_token(study)]), params)


def home_token(response):
    """The participant's own token, from the participant page the entry answers with."""
    found = re.search(r"/crowd/w/([^/]+)/", response.content.decode())
    assert found, response.content[:300]
    return found.group(1)


def home(client, response):
    return client.get(reverse("crowd-participant", args=[home_token(response)]))


def start(client, response):
    token = home_token(response)
    return token, client.post(reverse("crowd-start", args=[token]))


def test_entry_link_admits_then_start_takes_a_slot(client, toy):
    target = toy.add("t", [("1", 1), ("2", 1)])
    study = link_study(target)
    response = enter(client, study, pid="alice")
    assert response.status_code == 200 and b'data-role="start"' in response.content
    page = home(client, response)
    assert b'data-role="start"' in page.content
    assert Participation.objects.get().status == "admitted"  # no slot before the explicit Start
    assert study.places_taken == 0
    token, started = start(client, response)
    assert started.status_code == 302 and started["Location"].startswith("/toy/")
    participation = Participation.objects.get()
    assert (participation.status, participation.participant.worker_key) == ("working", "link:panel:alice")
    study.refresh_from_db()
    assert study.places_taken == 1
    # a reload or a second Start gives the same HIT
    again = client.post(reverse("crowd-start", args=[token]))
    assert again["Location"] == started["Location"]


def test_entry_link_caps_invented_ids(client, toy):
    target = toy.add("t", [(str(i), 5) for i in range(1, 4)])  # 15 slots in the plan...
    study = link_study(target, places=3, hits_per_participant=1)  # ...but the researcher opened 3
    outcomes = []
    for i in range(6):
        response = enter(client, study, pid=f"made-up-{i}")
        _, started = start(client, response)
        outcomes.append(started.status_code)
    assert outcomes == [302, 302, 302, 409, 409, 409]
    assert Participation.objects.filter(status="working").count() == 3
    full = start(client, enter(client, study, pid="made-up-9"))[1]
    assert b"This study is full" in full.content and b"What to do next" in full.content


def test_hits_per_participant_and_already_done(client, toy):
    target = toy.add("t", [("1", 2), ("2", 2)])
    study = link_study(target, hits_per_participant=1)
    token, started = start(client, enter(client, study, pid="bob"))
    participation = Participation.objects.get()
    toy.complete(target, participation.work_key)
    finished = client.get(reverse("crowd-finish", args=[token]))
    assert finished.status_code == 200
    code = links.completion_code(study.pk, participation.work_key, "link:panel:bob")
    assert code.encode() in finished.content
    assert links.verify_code(study.pk, participation.work_key, "link:panel:bob", code)
    assert not links.verify_code(study.pk, participation.work_key, "link:panel:eve", code)
    again = enter(client, study, pid="bob")
    assert again.status_code == 409 and b"already" in again.content


def test_consent_and_practice_come_before_the_hit_and_practice_is_not_stored(client, toy):
    target = toy.add("t", [("1", 1)])
    study = link_study(target, consent_text="We record your ratings.\n\nYou may stop at any time.")
    PracticeItem.objects.create(
        study=study,
        text="a dog runs in the park .",
        accept_min=70,
        accept_max=100,
        feedback="The caption matches the video.",
    )
    response = enter(client, study, pid="carol")
    token = home_token(response)
    assert b"We record your ratings." in response.content
    # Start before consenting does nothing
    client.post(reverse("crowd-start", args=[token]))
    assert Participation.objects.get().status == "admitted"
    client.post(reverse("crowd-consent", args=[token]), {"consent": "yes"})
    page = home(client, response)
    assert b'data-role="practice"' in page.content
    item = PracticeItem.objects.get()
    checked = client.post(reverse("crowd-practice", args=[token]), {"item": item.pk, "value": 20})
    assert b"Not quite." in checked.content and b"The caption matches the video." in checked.content
    client.post(reverse("crowd-practice", args=[token]), {"item": item.pk, "value": 20, "next": "1"})
    assert Participation.objects.get().practice_done_at is not None
    assert toy.targets["t"].records == {}  # nothing reached the protocol
    _, started = start(client, response)
    assert started.status_code == 302 and Participation.objects.get().status == "working"


def test_refusing_consent_takes_no_slot(client, toy):
    target = toy.add("t", [("1", 1)])
    study = link_study(target, consent_text="Consent?")
    token = home_token(enter(client, study, pid="dan"))
    page = client.post(reverse("crowd-consent", args=[token]), {"consent": "no"})
    assert b"You did not consent" in page.content
    assert Participation.objects.get().consented_at is None


def test_per_participant_links_expire_and_work_for_one_participant(client, toy):
    target = toy.add("t", [("1", 1), ("2", 1)])
    study = link_study(target)
    ((pid, token),) = admission.create_participant_links(study, ["erin"], expires_at=timezone.now() + timedelta(days=1))
    response = client.get(reverse("crowd-participant-link", args=[token]))
    assert response.status_code == 200
    participation = Participation.objects.get()
    assert participation.participant.platform_id == "erin"
    # the same link reused after the HIT is done: refused with a clear page
    own = home_token(response)
    client.post(reverse("crowd-start", args=[own]))
    toy.complete(target, Participation.objects.get().work_key)
    client.get(reverse("crowd-finish", args=[own]))
    reused = client.get(reverse("crowd-participant-link", args=[token]))
    assert reused.status_code == 409 and b"This link has been used" in reused.content
    # an expired link
    ((_, old),) = admission.create_participant_links(study, ["frank"], expires_at=timezone.now() - timedelta(minutes=1))
    expired = client.get(reverse("crowd-participant-link", args=[old]))
    assert expired.status_code == 410 and b"This link has expired" in expired.content
    assert b"ask the researcher" in expired.content
    # a tampered token
    assert client.get(reverse("crowd-participant-link", args=[token[:-2] + "xx"])).status_code == 400


def test_closed_and_paused_studies_refuse(client, toy):
    target = toy.add("t", [("1", 1)])
    study = link_study(target, closes_at=timezone.now() - timedelta(hours=1))
    assert enter(client, study, pid="gus").status_code == 410
    study.closes_at = None
    study.status = Study.Status.PAUSED
    study.save()
    page = enter(client, study, pid="gus")
    assert page.status_code == 410 and b"This study is closed" in page.content


def test_idle_work_is_released_and_its_hit_handed_to_someone_else(client, toy):
    target = toy.add("t", [("1", 1)])
    study = link_study(target, idle_minutes=30)
    start(client, enter(client, study, pid="hal"))
    idle = Participation.objects.get()
    Participation.objects.filter(pk=idle.pk).update(last_seen_at=timezone.now() - timedelta(minutes=31))
    _, full = start(client, enter(client, study, pid="ivy"))
    assert full.status_code == 409
    assert admission.release_idle() == 1
    idle.refresh_from_db()
    assert idle.status == "released" and "idle" in idle.release_reason
    ivy = Participation.objects.get(participant__platform_id="ivy")
    participation, work = admission.take_slot(ivy)
    assert work is not None and work.unit_key == "1"
    # the released participant's page says so
    token = links.participation_token(idle)
    assert b"released" in client.get(reverse("crowd-participant", args=[token])).content


def test_pages_may_be_framed_only_by_configured_origins(client, toy, settings):
    settings.CROWD_FRAME_ORIGINS = ["https://workersandbox.mturk.com"]
    target = toy.add("t", [("1", 1)])
    study = link_study(target)
    response = enter(client, study, pid="jo")
    page = home(client, response)
    assert response["Content-Security-Policy"] == page["Content-Security-Policy"]
    assert page["Content-Security-Policy"] == "frame-ancestors 'self' https://workersandbox.mturk.com"
    assert "X-Frame-Options" not in page


# --- Prolific ------------------------------------------------------------------------------------------------


def prolific(fake, target, **fields):
    external = fake.add_study()
    return Study.objects.create(
        name="pro",
        provider="prolific",
        protocol="toy",
        object_id=target.object_id,
        target_name=target.name,
        external_id=external,
        status="published",
        completion_code="CQX7ZK2L",
        reward=Decimal("2.00"),
        **fields,
    )


def test_prolific_admission_checks_the_submission(client, toy, fake_prolific):
    target = toy.add("t", [("1", 1), ("2", 1)])
    study = prolific(fake_prolific, target)
    pid = "5f" + "1" * 22
    session = fake_prolific.add_submission(study.external_id, pid)
    ok = enter(client, study, PROLIFIC_PID=pid, STUDY_ID=study.external_id, SESSION_ID=session)
    assert ok.status_code == 200
    assert Participation.objects.get().external_submission_id == session
    assert fake_prolific.log("GET", f"/submissions/{session}/")
    # somebody else's session, another study, a made-up session
    other = fake_prolific.add_submission(study.external_id, "5f" + "2" * 22)
    assert enter(client, study, PROLIFIC_PID=pid, STUDY_ID=study.external_id, SESSION_ID=other).status_code == 403
    assert enter(client, study, PROLIFIC_PID=pid, STUDY_ID="5a" + "0" * 22, SESSION_ID=session).status_code == 400
    assert (
        enter(client, study, PROLIFIC_PID=pid, STUDY_ID=study.external_id, SESSION_ID="6b" + "9" * 22).status_code
        == 403
    )
    # a returned submission cannot come back
    fake_prolific.set_status(other, "RETURNED")
    assert (
        enter(client, study, PROLIFIC_PID="5f" + "2" * 22, STUDY_ID=study.external_id, SESSION_ID=other).status_code
        == 410
    )


def test_prolific_finish_redirects_with_the_study_code(client, toy, fake_prolific, settings):
    settings.PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete"
    target = toy.add("t", [("1", 1)])
    study = prolific(fake_prolific, target)
    pid = "5f" + "3" * 22
    session = fake_prolific.add_submission(study.external_id, pid)
    token, _ = start(client, enter(client, study, PROLIFIC_PID=pid, STUDY_ID=study.external_id, SESSION_ID=session))
    toy.complete(target, Participation.objects.get().work_key)
    finished = client.get(reverse("crowd-finish", args=[token]))
    assert finished.status_code == 200
    url = "https://app.prolific.com/submissions/complete?cc=CQX7ZK2L"
    assert f'<meta http-equiv="refresh" content="0;url={url}">'.encode() in finished.content
    assert f'href="{url}" data-role="return"'.encode() in finished.content


def test_prolific_unreachable_gives_a_try_again_page(client, toy, fake_prolific):
    target = toy.add("t", [("1", 1)])
    study = prolific(fake_prolific, target)
    session = fake_prolific.add_submission(study.external_id, "5f" + "4" * 22)
    fake_prolific.fail("GET", "/submissions/", status=503, times=20)
    page = enter(client, study, PROLIFIC_PID="5f" + "4" * 22, STUDY_ID=study.external_id, SESSION_ID=session)
    assert page.status_code == 503 and b"try again" in page.content


def test_prolific_signed_jwt_admission(client, toy, fake_prolific, settings):
    import jwt as pyjwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = pyjwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    fake_prolific.jwks = {"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]}
    settings.PROLIFIC_JWT_AUDIENCE = "https://lab.example"
    target = toy.add("t", [("1", 1)])
    study = prolific(fake_prolific, target)
    pid, session = "5f" + "5" * 22, "6b" + "5" * 22

    def token(**claims):
        body = {
            "aud": "https://lab.example",
            "exp": timezone.now() + timedelta(minutes=5),
            "prolific": {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session},
        }
        body.update(claims)
        return pyjwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})

    params = {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session}
    assert enter(client, study, **params, prolific_token=token()).status_code == 200
    assert not fake_prolific.log("GET", "/submissions/")  # verified by signature, no lookup
    Participation.objects.all().delete()
    assert enter(client, study, **params, prolific_token=token(aud="https://elsewhere")).status_code == 403
    assert (
        enter(client, study, **params, prolific_token=token(exp=timezone.now() - timedelta(minutes=1))).status_code
        == 403
    )
    forged = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    bad = pyjwt.encode(
        {"aud": "https://lab.example", "exp": timezone.now() + timedelta(minutes=5), "prolific": params},
        forged,
        algorithm="RS256",
        headers={"kid": "k1"},
    )
    assert enter(client, study, **params, prolific_token=bad).status_code == 403
    # a signed token that leaves a value out does not let the address choose it (Prolific signs what the
    # study URL asks for: all three)
    unsigned_session = token(prolific={"PROLIFIC_PID": pid, "STUDY_ID": study.external_id})
    other = {**params, "SESSION_ID": "6b" + "7" * 22}
    assert enter(client, study, **other, prolific_token=unsigned_session).status_code == 403
    assert not Participation.objects.filter(external_submission_id=other["SESSION_ID"]).exists()


def test_returned_timed_out_and_rejected_submissions_release_their_hit(toy, fake_prolific):
    target = toy.add("t", [("1", 1), ("2", 1), ("3", 1)])
    study = prolific(fake_prolific, target)
    made = []
    for i, status in enumerate(["RETURNED", "TIMED-OUT", "AWAITING REVIEW"]):
        pid = f"5f{i:022d}"
        session = fake_prolific.add_submission(study.external_id, pid)
        participation = admission.admit(
            study, {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session}
        )
        admission.take_slot(participation)
        fake_prolific.set_status(session, status)
        made.append(session)
    fake_prolific.page_size = 2  # the sync pages through the submissions
    outcomes = admission.sync_submissions(study)
    assert outcomes == {"released": 2, "recorded": 1}
    assert len(fake_prolific.log("GET", r"/studies/.+/submissions/")) == 2
    statuses = {p.external_submission_id: p.status for p in Participation.objects.all()}
    assert statuses == {made[0]: "released", made[1]: "released", made[2]: "working"}
    study.refresh_from_db()
    assert study.places_taken == 1
    assert sorted(toy.targets["t"].released) == sorted(
        Participation.objects.filter(status="released").values_list("work_key", flat=True)
    )


def test_blocked_participants_are_refused(toy):
    target = toy.add("t", [("1", 1)])
    study = link_study(target)
    Participant.objects.create(namespace="link:panel", platform_id="mallory", blocked=True)
    with pytest.raises(AdmissionRefused):
        admission.admit(study, {"pid": "mallory"})


def test_block_command_releases_open_work_and_refuses_new_entries(client, toy):
    from io import StringIO

    from django.core.management import call_command

    target = toy.add("t", [("1", 1), ("2", 1)])
    study = link_study(target)
    start(client, enter(client, study, pid="oscar"))
    call_command("crowd_study", "block", "--name", "panel", "--participants", "oscar", stdout=StringIO())
    assert Participation.objects.get().status == "released"
    assert enter(client, study, pid="oscar").status_code == 410
    study.refresh_from_db()
    assert study.places_taken == 0


def test_practice_reads_its_numbers_strictly(client, toy):
    """A step or an answer that is not a plain number (hand-edited links, other scripts' digits) is no answer:
    the participant sees the practice again, never a server error, and nothing is checked or stored."""
    target = toy.add("t", [("1", 1)])
    study = link_study(target)
    PracticeItem.objects.create(study=study, text="a dog runs .", accept_min=0, accept_max=100, feedback="Fine.")
    response = enter(client, study, pid="erin")
    token = home_token(response)
    client.raise_request_exception = False
    for step in ("x", "\u0661", "-1", "1e2"):
        page = client.get(reverse("crowd-participant", args=[token]), {"step": step})
        assert page.status_code == 200 and b'data-role="practice"' in page.content, step
    item = PracticeItem.objects.get()
    for value in ("\u0665\u0660", "50.0", "1e1", ""):
        checked = client.post(reverse("crowd-practice", args=[token]), {"item": item.pk, "value": value})
        assert checked.status_code == 302 and b"Fine." not in checked.content, value  # back to the page
    checked = client.post(reverse("crowd-practice", args=[token]), {"item": str(item.pk), "value": "50"})
    assert checked.status_code == 200 and b"Fine." in checked.content
    assert Participation.objects.get().practice_done_at is None
