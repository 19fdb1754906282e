"""Crowd providers behind one interface (``base.CrowdProvider``): ``prolific``, ``link``, ``mturk`` and
``none`` (decisions recorded for a researcher who pays elsewhere)."""

from ..models import Provider


def provider_for(study, **options):
    from .link import LinkProvider, NoProvider
    from .mturk import MTurkProvider
    from .prolific import ProlificProvider

    classes = {
        Provider.PROLIFIC: ProlificProvider,
        Provider.LINK: LinkProvider,
        Provider.MTURK: MTurkProvider,
        Provider.NONE: NoProvider,
    }
    return classes[study.provider](study, **options)
