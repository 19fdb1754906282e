"""The report page in real headless Chromium (Playwright) against a live server: the table, the server-drawn
charts loading, changing the analysis with the form, and the live progress of a metric job."""

import re

import pytest

from annotation_site.jobs import services as jobs
from metrics_eval import services
from tests.metrics_eval.test_pages import synthetic_dataset

pytestmark = [pytest.mark.browser]


def log_in(page, live_server):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-researcher-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_report_page_in_a_browser(page, live_server, staff_user):
    dataset = synthetic_dataset("browsed", 12)
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server)

    page.goto(f"{live_server.url}/metrics/datasets/{dataset.name}/")
    assert page.locator("h2#table-heading").inner_text() == "Pearson r, segment level"
    assert page.locator("#correlations tbody tr").count() == 2
    assert page.locator("#correlations td.metrics-best").count() == 3  # one best metric per human level
    images = page.locator(".metrics-figure img")
    assert images.count() == 3
    for i in range(3):
        images.nth(i).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.metrics-figure img')].every(i => i.complete && i.naturalWidth > 100)",
        timeout=30_000,
    )
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 1280, f"the page is {width} px wide"

    page.select_option("#id_method", "kendall_b")
    page.select_option("#id_group_by", "video")
    page.click("#report-form button[type=submit]")
    page.wait_for_url(re.compile(r".*method=kendall_b.*"))
    assert page.locator("h2#table-heading").inner_text() == "Kendall τ-b, segment level, grouped by video"
    assert "groups" in page.locator("#correlations tbody tr").first.inner_text()
    assert not errors, errors


def test_job_progress_is_followed_and_the_page_reloads(page, live_server, staff_user):
    dataset = synthetic_dataset("waiting", 4)
    job = jobs.create_job(services.COMPUTE_KIND, scope=f"dataset:{dataset.pk}", total=10, message="queued")
    jobs.mark_running(job.pk, total=10, message="tokenizing")
    log_in(page, live_server)
    page.goto(f"{live_server.url}/metrics/datasets/{dataset.name}/")
    assert page.locator("#compute-job").get_attribute("data-finished") == "false"
    jobs.report_progress(job.pk, 4, message="BLEU: S1")
    page.wait_for_function("() => document.querySelector('#compute-job progress').value === 40")
    assert "BLEU: S1" in page.locator("#compute-job [data-role=text]").inner_text()
    with page.expect_navigation():  # finished: the page reloads to show the new scores
        jobs.mark_succeeded(job.pk, {"captions": 12}, message="scored 12 captions")
    assert page.locator("#compute-job").get_attribute("data-finished") == "true"
    assert "scored 12 captions" in page.locator("#compute-job").inner_text()
