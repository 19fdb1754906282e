from django.apps import AppConfig


class CrowdConfig(AppConfig):
    """Crowd work below every protocol: providers (Prolific, signed links, MTurk), participants' entry and
    completion, and the payment ledger. Protocols plug in through ``crowd.adapters.register``."""

    name = "annotation_site.crowd"
    label = "crowd"
    verbose_name = "Crowd work"
