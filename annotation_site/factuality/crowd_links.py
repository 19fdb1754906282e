"""Signed links to one factuality assignment, for crowd annotators who have no account (see crowd_adapter.py):
the token is the credential of the annotation page and of its draft / submit endpoints."""

from django.core import signing

SALT = "factuality.crowd-assignment"


def assignment_token(assignment):
    return signing.dumps(assignment.pk, salt=SALT)


def assignment_from_token(token):
    from .models import Assignment

    try:
        pk = int(signing.loads(token, salt=SALT))
    except (signing.BadSignature, TypeError, ValueError):
        return None
    return (
        Assignment.objects.select_related("project__dataset", "project_video__video", "annotator").filter(pk=pk).first()
    )
