"""Human work is never deleted as a side effect: which rows are people's work, and what a deletion would take.

The apps that store people's judgments register their models (``register_human_work`` in their
``AppConfig.ready``; ``annotation_site.corpus.protection`` re-exports it): DA judgments, factuality answers,
judgment-task answers. Deleting any other row takes along, through ``on_delete=CASCADE``, the rows that point at
it, so deleting a user, an annotator, a system, a caption, a campaign, a project, a task or one of their
assignments can delete those judgments too.

``cascade_paths(model)`` finds every way there, from ``model``'s ``_meta``: it follows the relations that point at
``model`` with ``on_delete=CASCADE`` or ``RESTRICT`` (one-to-one included), model by model, and stops at any other
``on_delete`` (``SET_NULL``, ``SET_NULL_IN_BATCHES``, ``PROTECT``, ``DO_NOTHING``, ...), which does not delete the
row. Each way
is an ORM lookup from the judgment model back to ``model`` (a user reaches factuality answers through
``assignment__annotator__user``). ``human_work_reached(model, rows)`` counts, with one COUNT query per kind of
work whatever the number of rows and ways (the OR of the kind's lookups ``__in`` the rows), the judgments that
deleting ``rows`` would delete. Deleting the judgment rows themselves (in their own admin) is explicit and not
counted.

``ProtectHumanWork`` is the admin's guard, put on every ModelAdmin whose model reaches human work
(``tests/corpus/test_admin_human_work.py`` walks ``admin.site`` and fails on one that lacks it): its single delete
page is refused with the counts and how to export each kind, and goes ahead with ``?force_delete_judgments=1``;
the bulk action is refused (delete them one by one from their pages). It sits below every app, so every app's
admin (and the auth User admin, re-registered in ``annotators/admin.py``) can use it.
"""

from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.utils import unquote
from django.db.models import CASCADE, RESTRICT, Model, Q
from django.shortcuts import redirect

FORCE_PARAMETER = "force_delete_judgments"
MAX_DEPTH = 10  # no cascade in this project is longer; a bound against surprises, not a limit we meet


@dataclass(frozen=True)
class HumanWork:
    label: str  # plural words for the count, e.g. "DA judgments"
    model: type[Model]
    export_hint: str  # how to keep a copy first


_REGISTRY: dict[str, HumanWork] = {}


def register_human_work(label, model, *, export_hint):
    """Declare ``model`` rows as people's work (registering the same label again replaces it)."""
    _REGISTRY[label] = HumanWork(label, model, export_hint)


def registered_human_work() -> list[HumanWork]:
    return list(_REGISTRY.values())


def _cascading_children(model):
    """``(child model, name of its field that points at model)`` for every relation deleting a ``model`` row
    deletes the rows of, i.e. whose ``on_delete`` is CASCADE, and RESTRICT: such a deletion takes the rows along
    another cascade or fails, so its work is named before rather than a RestrictedError after (a video with
    judgment-task items, whose refusal named their answers before these paths were found from ``_meta``)."""
    for relation in model._meta.get_fields(include_hidden=True):
        if not (relation.auto_created and not relation.concrete and (relation.one_to_many or relation.one_to_one)):
            continue
        if getattr(relation, "on_delete", None) not in (CASCADE, RESTRICT):
            continue
        yield relation.related_model, relation.field.name


def cascade_paths(model) -> dict[str, list[str]]:
    """``{label: [lookup from the human-work model to model, ...]}`` of the registered kinds of human work that
    deleting a ``model`` row deletes; kinds it does not reach are left out, and so is ``model``'s own kind."""
    paths: dict[type[Model], list[str]] = {}

    def walk(current, suffix, seen, depth):
        for child, field in _cascading_children(current):
            if child in seen or depth >= MAX_DEPTH:
                continue
            lookup = f"{field}__{suffix}" if suffix else field
            paths.setdefault(child, []).append(lookup)
            walk(child, lookup, seen | {child}, depth + 1)

    walk(model, "", {model}, 0)
    return {work.label: paths[work.model] for work in _REGISTRY.values() if work.model in paths}


def reaches_human_work(model) -> bool:
    return bool(cascade_paths(model))


def human_work_reached(model, rows):
    """``[(HumanWork, count)]`` of the human work that deleting ``rows`` of ``model`` (a queryset, or a list of
    rows or keys) would delete: one COUNT query per kind it reaches; kinds with none are left out."""
    found = []
    for label, lookups in cascade_paths(model).items():
        work = _REGISTRY[label]
        condition = reduce(or_, (Q(**{f"{lookup}__in": rows}) for lookup in lookups))
        count = work.model._default_manager.filter(condition).count()
        if count:
            found.append((work, count))
    return found


def describe_loss(what, found, *, force_hint):
    counts = ", ".join(f"{count} {work.label}" for work, count in found)
    exports = "; ".join(f"{work.label}: {work.export_hint}" for work, _ in found)
    return (
        f"{what} would delete human work that cannot be made again: {counts}. Export it first ({exports}), "
        f"then repeat with {force_hint} to delete it anyway."
    )


class ProtectHumanWork:
    """ModelAdmin mixin: deleting rows that people's judgments depend on (through CASCADE) is refused with what
    would be lost and how to export it; the single delete page goes ahead with ``?force_delete_judgments=1``, the
    bulk action is refused outright."""

    protects_human_work = True

    def _refusal(self, rows, what):
        found = human_work_reached(self.model, rows)
        if not found:
            return None
        return describe_loss(what, found, force_hint=f"the delete page with ?{FORCE_PARAMETER}=1")

    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and request.GET.get(FORCE_PARAMETER) != "1":
            refusal = self._refusal([obj], f"deleting {obj}")
            if refusal:
                self.message_user(request, refusal, messages.ERROR)
                return redirect(request.path.rsplit("/delete/", 1)[0] + "/change/")
        return super().delete_view(request, object_id, extra_context)

    @admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
    def delete_selected(self, request, queryset):
        refusal = self._refusal(queryset, f"deleting {queryset.count()} {self.opts.verbose_name_plural}")
        if refusal:
            self.message_user(request, refusal + " (Delete them one by one from their pages.)", messages.ERROR)
            return None
        return delete_selected(self, request, queryset)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            actions["delete_selected"] = self.get_action("delete_selected")
        return actions
