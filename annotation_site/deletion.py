"""Deleting many rows at once within the database's limit of parameters per statement.

Django's collector deletes in batches: each batch of at most 500 rows gets its own SELECT for the rows that
point at it and its own DELETE, and each DELETE takes 100 keys, so a cascade of any size stays within every
database's limit. One step does not. ``models.SET_NULL`` (like ``SET_DEFAULT`` and ``SET(...)``) is lazy since
Django 4.2: the collector keeps one ``field__in=<batch>`` queryset per batch, and ``Collector.delete`` ORs them
all into one UPDATE (django/db/models/deletion.py, ``combined_updates = reduce(or_, updates)``). That statement
takes one parameter per deleted row. SQLite refuses a statement with more than ``SQLITE_LIMIT_VARIABLE_NUMBER``
parameters: 250,000 in Debian's build, 32,766 upstream (999 before 3.32). So deleting or replacing a dataset of
250,000 or more captions failed with "too many SQL variables", because DA items point at captions through
``donor_caption``. The size of the campaigns on the dataset did not matter, and it failed even when no item
pointed at the captions at all.

``SET_NULL_IN_BATCHES`` is ``SET_NULL`` as Django did it before 4.2: when a batch is collected, the rows that
point at it are read (one SELECT per batch, keys only, as ``CASCADE`` does). At delete time Django nulls them
with ``update_batch``, 100 keys per UPDATE, in the deletion's transaction. The end state is the same as with
``SET_NULL``. Every set-on-delete relation into what deleting a dataset reaches uses it
(``tests/corpus/test_large_deletes.py`` checks this). Relations whose target is only ever deleted a few rows at
a time (users, for example) keep Django's ``SET_NULL``."""

from django.db.models.deletion import Collector


def SET_NULL_IN_BATCHES(collector: Collector, field, sub_objs, using) -> None:  # noqa: N802 (Django's spelling)
    """``on_delete``: set ``field`` to NULL on the rows that pointed at a deleted row, in bounded statements. It
    needs ``null=True``, like ``SET_NULL``."""
    collector.add_field_update(field, None, list(sub_objs))
