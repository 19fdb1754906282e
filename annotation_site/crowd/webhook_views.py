"""The Prolific webhook endpoint (no session, no CSRF: the HMAC signature is the credential)."""

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotation_site.address_check import reads_raw_body

from . import webhooks
from .config import MissingCredential


@reads_raw_body  # the signature covers the raw bytes
@csrf_exempt
@require_POST
def prolific_webhook(request):
    try:
        created, outcome = webhooks.receive(request.headers, request.body)
    except MissingCredential as exc:
        return JsonResponse({"error": str(exc)}, status=503)
    except webhooks.WebhookRefused as exc:
        return JsonResponse({"error": str(exc)}, status=exc.status)
    return JsonResponse({"created": created, "outcome": outcome}, status=200)
