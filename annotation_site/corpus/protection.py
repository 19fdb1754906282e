"""Human work is never deleted as a side effect.

Deleting a dataset (or a video) cascades to everything built on it: factuality projects and their answers, DA
campaigns and their judgments, judgment-task answers. The apps that store people's judgments register them
here (``register_human_work`` in their ``AppConfig.ready``; the corpus imports none of them), and every path
that deletes a dataset or a video (``import_dataset --replace`` and the import page / API with ``replace``, the
admin, the video API) asks ``refuse_if_human_work`` first: the refusal says what would be lost and how to
export it, and goes ahead only when the researcher asks for it explicitly (``--force-delete-judgments``,
``force_delete_judgments``).
"""

from dataclasses import dataclass

from django.db.models import Model

FORCE_OPTION = (
    "--force-delete-judgments (API: force_delete_judgments=true; import page: the box "
    "“Delete the human judgments on it too”)"
)


@dataclass(frozen=True)
class HumanWork:
    label: str  # plural words for the count, e.g. "DA judgments"
    model: type[Model]
    dataset_path: str  # lookup from the model to its Dataset, e.g. "assignment__hit__campaign__dataset"
    video_path: str  # lookup from the model to its Video
    export_hint: str  # how to keep a copy first


_REGISTRY: dict[str, HumanWork] = {}


def register_human_work(label, model, *, dataset_path, video_path, export_hint):
    """Declare ``model`` rows as people's work on a dataset (registering the same label again replaces it)."""
    _REGISTRY[label] = HumanWork(label, model, dataset_path, video_path, export_hint)


def human_work(*, datasets=None, videos=None):
    """``[(HumanWork, count)]`` of the human work that deleting ``datasets`` (or ``videos``; each a queryset or
    a list of rows or ids) would delete: one COUNT query per registered kind; kinds with none are left out."""
    if (datasets is None) == (videos is None):
        raise TypeError("give datasets or videos")
    found = []
    for work in _REGISTRY.values():
        path, scope = (work.dataset_path, datasets) if datasets is not None else (work.video_path, videos)
        rows = work.model._default_manager.filter(**{f"{path}__in": scope})
        count = rows.count()
        if count:
            found.append((work, count))
    return found


class HumanWorkAtRisk(Exception):
    """Deleting would lose people's judgments; ``found`` lists what (``[(HumanWork, count)]``)."""

    def __init__(self, message, found):
        super().__init__(message)
        self.found = found


def describe_loss(what, found, *, force_hint=FORCE_OPTION):
    counts = ", ".join(f"{count} {work.label}" for work, count in found)
    exports = "; ".join(f"{work.label}: {work.export_hint}" for work, _ in found)
    return (
        f"{what} would delete human work that cannot be made again: {counts}. Export it first ({exports}), "
        f"then repeat with {force_hint} to delete it anyway."
    )


def refuse_if_human_work(what, *, datasets=None, videos=None, force=False, force_hint=FORCE_OPTION):
    """Raise HumanWorkAtRisk when deleting ``datasets`` / ``videos`` would delete human judgments, unless
    ``force``. ``what`` starts the message ("replacing dataset 'x'"); ``force_hint`` names the way to force."""
    if force:
        return
    found = human_work(datasets=datasets, videos=videos)
    if found:
        raise HumanWorkAtRisk(describe_loss(what, found, force_hint=force_hint), found)
