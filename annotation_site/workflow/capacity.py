"""The copy of a scope's capacity that each of its units carries, so that the units with room have an index.

A unit (a factuality project's video, a task's item) goes to at most ``capacity`` annotators, a field of its
scope (``annotators_per_video``, ``annotators_per_item``). Handing one out asks for the first unit in position
order that still has room and is not the annotator's. With the capacity only on the scope, PostgreSQL could
not index "has room": every hand-out and every "video 7 of N" read scanned all of the scope's units and sorted
them (issue #11, measured in docs/reliability.md: 20,000 videos cost 4-6 ms of database CPU per hand-out, and
200 annotators on one project 11 ms per submission).

Each unit now carries ``capacity``, a copy of its scope's value, and a partial index of its scope's units in
hand-out order holds only those with ``assigned < capacity``. The copy serves the index only: every query that
decides whether a unit has room still compares ``assigned`` with the scope's own value, so a copy that is too
high costs speed, never a wrong hand-out. A copy that is too low would hide a unit with room, so the copy is
set when the units are made and follows every change of the scope's value (``follow``), in the same
transaction. ``UNSET``, the column's default, is above any capacity: a unit made elsewhere (a test, a shell)
is always in the index, as every unit was before.
"""

UNSET = 32_767  # the largest PositiveSmallIntegerField value: never below a scope's capacity (at most 50)


def follow(units, capacity):
    """Set the copy on ``units`` (a queryset of one scope's units) to the scope's ``capacity``; the rows
    updated. Call it inside the transaction that saves the new capacity."""
    return units.exclude(capacity=capacity).update(capacity=capacity)


def above(units, added, capacity, *, label, noun, scope, what, people="annotators"):
    """The units an import took above their scope's ``capacity`` (its annotators per video / per item), as
    ``(line, message)`` each, in hand-out order. ``units`` is the scope's units (a queryset), ``added`` maps
    the pk of each unit the import gave new annotators to the lines of those annotators in its file (each
    annotator's first line); ``label`` is the unit's field naming it in messages, ``noun`` what a unit is
    ("video"), ``scope`` the kind and name of the scope ("project", "pair"), ``what`` what was imported
    ("labels"), ``people`` who a unit goes to ("annotators"; a DA HIT: "workers"). Each unit needs
    ``position`` (hand-out order), ``assigned`` (its annotators now) and ``label``, as fields or annotations.
    The line is that of the first annotator beyond the capacity (the file's annotators of a unit count in the
    order of their lines, after those it had before). The import keeps them (they were really collected) and
    says so: a unit above its capacity breaks nothing, it is full (the hand-out and the count of full units read
    ``assigned`` against the capacity with < and >=; the progress counts its annotators as its slots,
    ``units.slot_counts``). One query, whatever the import's size; run it after the import's writes, in its
    transaction."""
    kind, name = scope
    words = f"{people} per {noun}"
    for pk, unit_name, assigned in (
        units.filter(pk__in=added, assigned__gt=capacity)
        .order_by("position", "pk")
        .values_list("pk", label, "assigned")
    ):
        lines = sorted(added[pk])
        before = assigned - len(lines)  # the unit's annotators before this import
        yield (
            lines[max(0, capacity - before)],
            f"{noun} {unit_name!r} now has {assigned} {people}, more than the {capacity} {words} of {kind} {name}: "
            f"its {what} were imported all the same, and the {noun} is handed out to nobody else (raise the "
            f"{kind}'s {words} if that is what the study is)",
        )
