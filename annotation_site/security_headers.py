"""Response headers that protect every view at once (listed first in ``MIDDLEWARE``, so it also sees what
WhiteNoise and the media middleware answer).

SVG is a document format: opened on its own (a figure's address), an SVG may run scripts and load resources
in the site's origin. Every ``image/svg+xml`` response therefore carries a Content-Security-Policy that allows
nothing but inline styles and ``data:`` images (what matplotlib writes), and sandboxes the document, so text
from captions, system names or worker ids drawn into a figure can never act. A view never has to remember it.
"""

SVG_CONTENT_TYPE = "image/svg+xml"
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"


def is_svg(response):
    return response.get("Content-Type", "").split(";")[0].strip().lower() == SVG_CONTENT_TYPE


class SvgContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if is_svg(response):
            response["Content-Security-Policy"] = SVG_POLICY
            response["X-Content-Type-Options"] = "nosniff"
        return response
