"""Human work is never deleted as a side effect, in every admin (annotation_site/human_work.py): deleting a user, an
annotator, a system, a campaign... whose cascade reaches people's judgments is refused with what would be lost
and how to export it, goes ahead with ?force_delete_judgments=1 on the delete page, and the bulk action is
refused. Every registered ModelAdmin whose model reaches human work has the guard, so a new one cannot be
forgotten. (The guard's module is imported inside the tests that use it, so that the tests of the pages run, and
fail, on code without it.)"""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from annotation_site.annotators.models import Annotator
from annotation_site.corpus.models import Dataset, System
from annotation_site.factuality.models import Submission
from assessment.models import Campaign, Judgment
from tests.corpus.test_human_work_protection import da_judged, factuality_judged

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("admin", "a@example.org", "pw-admin-12345"))
    return client


def test_every_admin_whose_deletes_reach_human_work_has_the_guard():
    from annotation_site.human_work import ProtectHumanWork, cascade_paths, registered_human_work

    reaching = {model._meta.label for model in admin.site._registry if cascade_paths(model)}
    # the walk is not vacuous: the cascades the defect was about are found
    assert {"auth.User", "annotators.Annotator", "corpus.System", "assessment.Campaign", "factuality.Project"} <= (
        reaching
    )
    assert set(cascade_paths(Dataset)) == {work.label for work in registered_human_work()}
    unguarded = [
        f"{model._meta.label} ({type(model_admin).__name__})"
        for model, model_admin in admin.site._registry.items()
        if cascade_paths(model) and not isinstance(model_admin, ProtectHumanWork)
    ]
    assert not unguarded, f"admins that delete human work without asking: {unguarded}"


def test_deleting_the_human_work_itself_in_its_own_admin_is_not_guarded():
    from annotation_site.human_work import cascade_paths

    assert not cascade_paths(Submission) and not cascade_paths(Judgment)


def test_counting_takes_one_query_per_kind_whatever_the_rows(django_assert_max_num_queries):
    from annotation_site.human_work import human_work_reached, registered_human_work

    with django_assert_max_num_queries(len(registered_human_work())):
        human_work_reached(User, User.objects.all())
    with django_assert_max_num_queries(len(registered_human_work())):
        human_work_reached(Dataset, Dataset.objects.all())


def user_with_answers(username="alice"):
    """A site user whose annotator gave factuality answers (one of the simulated annotators of the demo project)."""
    factuality_judged()
    annotator = Annotator.objects.filter(factuality_submissions__isnull=False).distinct().first()
    user = User.objects.create_user(username, f"{username}@example.org", "pw-alice-12345")
    Annotator.objects.filter(pk=annotator.pk).update(user=user)
    answers = Submission.objects.filter(annotator=annotator).count()
    assert answers and Submission.objects.exclude(annotator=annotator).exists()
    return user, annotator, answers


def test_deleting_a_user_with_factuality_answers_is_refused_unless_forced(admin_client):
    user, annotator, answers = user_with_answers()
    total = Submission.objects.count()
    url = f"/admin/auth/user/{user.pk}/delete/"
    for response in (admin_client.get(url, follow=True), admin_client.post(url, {"post": "yes"}, follow=True)):
        page = response.content.decode()
        assert response.redirect_chain[-1][0] == f"/admin/auth/user/{user.pk}/change/"
        assert f"Deleting alice would delete human work that cannot be made again: {answers} factuality answers" in page
        assert "factuality_labels --project NAME --export FILE" in page and "?force_delete_judgments=1" in page
    assert User.objects.filter(pk=user.pk).exists() and Annotator.objects.filter(pk=annotator.pk).exists()
    assert Submission.objects.count() == total

    forced = f"{url}?force_delete_judgments=1"
    assert admin_client.get(forced).status_code == 200  # Django's confirmation page
    assert admin_client.post(forced, {"post": "yes"}).status_code == 302
    assert not User.objects.filter(pk=user.pk).exists() and not Annotator.objects.filter(pk=annotator.pk).exists()
    assert Submission.objects.count() == total - answers  # only alice's answers went, with her


def test_the_bulk_delete_of_users_is_refused_while_one_has_answers(admin_client):
    user, _, answers = user_with_answers()
    idle = User.objects.create_user("bob", "b@example.org", "pw-bob-123456")
    response = admin_client.post(
        "/admin/auth/user/",
        {"action": "delete_selected", "_selected_action": [user.pk, idle.pk], "post": "yes"},
        follow=True,
    )
    page = response.content.decode()
    assert f"Deleting 2 users would delete human work that cannot be made again: {answers} factuality answers" in page
    assert "Delete them one by one from their pages." in page
    assert User.objects.filter(pk__in=[user.pk, idle.pk]).count() == 2


def test_users_and_systems_without_human_work_delete_as_before(admin_client):
    da_judged()
    idle = User.objects.create_user("bob", "b@example.org", "pw-bob-123456")
    admin_client.post(f"/admin/auth/user/{idle.pk}/delete/", {"post": "yes"})
    assert not User.objects.filter(pk=idle.pk).exists()
    others = [User.objects.create_user(f"idle{i}", f"i{i}@example.org", "pw-idle-123456").pk for i in range(2)]
    admin_client.post(
        "/admin/auth/user/", {"action": "delete_selected", "_selected_action": others, "post": "yes"}, follow=True
    )
    assert not User.objects.filter(pk__in=others).exists()

    unjudged = System.objects.create(dataset=Dataset.objects.get(), name="Unjudged")
    admin_client.post(f"/admin/corpus/system/{unjudged.pk}/delete/", {"post": "yes"})
    assert not System.objects.filter(pk=unjudged.pk).exists()


def test_deleting_a_judged_system_or_annotator_is_refused(admin_client):
    da_judged()
    judged = System.objects.filter(captions__da_items__judgments__isnull=False).distinct().first()
    response = admin_client.post(f"/admin/corpus/system/{judged.pk}/delete/", {"post": "yes"}, follow=True)
    assert "DA judgments. Export it first" in response.content.decode()
    assert System.objects.filter(pk=judged.pk).exists()

    _, annotator, answers = user_with_answers()
    response = admin_client.post(f"/admin/annotators/annotator/{annotator.pk}/delete/", {"post": "yes"}, follow=True)
    assert f"{answers} factuality answers" in response.content.decode()
    assert Annotator.objects.filter(pk=annotator.pk).exists()


def test_deleting_a_da_campaign_with_judgments_is_refused_unless_forced(admin_client):
    da_judged()
    campaign = Campaign.objects.get()
    judgments = Judgment.objects.count()
    url = f"/admin/assessment/campaign/{campaign.pk}/delete/"
    response = admin_client.post(url, {"post": "yes"}, follow=True)
    page = response.content.decode()
    assert f"Deleting {campaign} would delete human work that cannot be made again: {judgments} DA judgments" in page
    assert "judgments.csv" in page
    response = admin_client.post(
        "/admin/assessment/campaign/",
        {"action": "delete_selected", "_selected_action": [campaign.pk], "post": "yes"},
        follow=True,
    )
    assert "Delete them one by one from their pages." in response.content.decode()
    assert Campaign.objects.filter(pk=campaign.pk).exists() and Judgment.objects.count() == judgments

    admin_client.post(f"{url}?force_delete_judgments=1", {"post": "yes"})
    assert not Campaign.objects.exists() and not Judgment.objects.exists()


def test_a_sentence_is_never_deleted_on_its_own(admin_client):
    """A sentence's deletion took its judgments (the sentence labels of factuality answers) without the guard,
    which counts whole answers, and left a gap in its caption's sentence indices; the admin offers no deletion."""
    from annotation_site.corpus.models import Sentence
    from annotation_site.factuality.models import SentenceJudgment

    factuality_judged()
    judged = SentenceJudgment.objects.select_related("sentence").first().sentence
    assert admin_client.post(f"/admin/corpus/sentence/{judged.pk}/delete/", {"post": "yes"}).status_code == 403
    response = admin_client.post(
        "/admin/corpus/sentence/", {"action": "delete_selected", "_selected_action": [judged.pk], "post": "yes"}
    )
    assert response.status_code in (200, 302) and Sentence.objects.filter(pk=judged.pk).exists()
    assert SentenceJudgment.objects.filter(sentence=judged).exists()
