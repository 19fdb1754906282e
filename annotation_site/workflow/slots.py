"""Claiming one slot of a work unit that only N annotators may take (a factuality video, a task item).

The caller has already serialised the annotator's own requests (by locking their membership row) and passes
``free``: a ``values_list("pk", flat=True)`` queryset of the units still open to this annotator, in the order
they should go out, and ``take(pk)``: a conditional ``UPDATE ... SET assigned = assigned + 1 WHERE pk = ... AND
assigned < cap`` that returns whether it updated a row.

On PostgreSQL a unit another request is taking at this instant is skipped (``select_for_update(skip_locked=
True)``), so annotators arriving together take different units without queueing; only when every free unit is
locked does a request wait, for the first one, and then look again. The conditional UPDATE on the locked row
means the last slot can go only once, whatever the database; on SQLite the IMMEDIATE transactions of the
settings serialise writers, which gives the same guarantee. Must run inside ``transaction.atomic()``.
"""


def claim(free, take, *, after_lock=None, rounds=50):
    """The pk of the unit whose slot was taken, or None when no unit is left. Each round either claims a slot
    or sees one fewer free unit, so ``rounds`` only bounds pathological contention."""
    for _ in range(rounds):
        candidate = free.select_for_update(skip_locked=True, of=("self",)).first()
        if candidate is None:
            # Every free unit is being handed to someone else right now (or none is left): wait for the first
            # one's lock, then look again (its last slot may be gone by then).
            candidate = free.first()
            if candidate is None:
                return None
            if free.filter(pk=candidate).select_for_update(of=("self",)).first() is None:
                continue
        if after_lock is not None:
            after_lock()
        if take(candidate):
            return candidate
    return None
