"""Human work is never deleted as a side effect.

Deleting a dataset (or a video) cascades to everything built on it: factuality projects and their answers, DA
campaigns and their judgments, judgment-task answers. The apps that store people's judgments register them
(``register_human_work`` in their ``AppConfig.ready``, from ``annotation_site.human_work`` below every app, which
finds the cascade paths from any model to them; the corpus imports none of them), and every path
that deletes a dataset or a video (``import_dataset --replace`` and the import page / API with ``replace``, the
admin, the video API) asks ``refuse_if_human_work`` first: the refusal says what would be lost and how to
export it, and goes ahead only when the researcher asks for it explicitly (``--force-delete-judgments``,
``force_delete_judgments``).
"""

from annotation_site.human_work import (  # noqa: F401 (the apps register through this module)
    HumanWork,
    human_work_reached,
    register_human_work,
)
from annotation_site.human_work import (
    describe_loss as _describe_loss,
)

from .models import Dataset, Video

FORCE_OPTION = (
    "--force-delete-judgments (API: force_delete_judgments=true; import page: the box "
    "“Delete the human judgments on it too”)"
)


def human_work(*, datasets=None, videos=None):
    """``[(HumanWork, count)]`` of the human work that deleting ``datasets`` (or ``videos``; each a queryset or
    a list of rows or ids) would delete: one COUNT query per registered kind it reaches (the cascade paths found
    by ``annotation_site.human_work``, the same as for every other deletion); kinds with none are left out."""
    if (datasets is None) == (videos is None):
        raise TypeError("give datasets or videos")
    return human_work_reached(Dataset, datasets) if datasets is not None else human_work_reached(Video, videos)


class HumanWorkAtRisk(Exception):
    """Deleting would lose people's judgments; ``found`` lists what (``[(HumanWork, count)]``)."""

    def __init__(self, message, found):
        super().__init__(message)
        self.found = found


def describe_loss(what, found, *, force_hint=FORCE_OPTION):
    return _describe_loss(what, found, force_hint=force_hint)


def refuse_if_human_work(what, *, datasets=None, videos=None, force=False, force_hint=FORCE_OPTION):
    """Raise HumanWorkAtRisk when deleting ``datasets`` / ``videos`` would delete human judgments, unless
    ``force``. ``what`` starts the message ("replacing dataset 'x'"); ``force_hint`` names the way to force."""
    if force:
        return
    found = human_work(datasets=datasets, videos=videos)
    if found:
        raise HumanWorkAtRisk(describe_loss(what, found, force_hint=force_hint), found)
