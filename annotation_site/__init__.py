"""CaptionEval: human evaluation of video captions (the Django project and its shared domain)."""

from .celery import app as celery_app

__all__ = ["celery_app"]
