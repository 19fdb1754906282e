"""Every SVG the site answers carries a Content-Security-Policy, whichever view or file server produced it
(issue #11): the header is added in one middleware, so a new chart view cannot forget it."""

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from annotation_site.security_headers import SVG_POLICY, SvgContentSecurityPolicyMiddleware


def test_any_svg_response_gets_the_policy_and_other_responses_are_left_alone():
    def view(content_type):
        return SvgContentSecurityPolicyMiddleware(lambda request: HttpResponse(b"<svg/>", content_type=content_type))

    request = RequestFactory().get("/any")
    for content_type in ("image/svg+xml", "image/svg+xml; charset=utf-8", "IMAGE/SVG+XML"):
        response = view(content_type)(request)
        assert response["Content-Security-Policy"] == SVG_POLICY
        assert response["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" not in view("text/html")(request)


def test_policy_forbids_scripts_and_outside_resources():
    directives = dict(
        part.strip().split(" ", 1) if " " in part.strip() else (part.strip(), "") for part in SVG_POLICY.split(";")
    )
    assert directives["default-src"] == "'none'" and "script-src" not in directives and "sandbox" in directives


@pytest.mark.django_db
def test_static_svg_served_by_whitenoise_carries_the_policy(client):
    response = client.get("/static/favicon.svg")
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == SVG_POLICY
