"""The progress bar of the metric commands (a long computation shown on the command's stderr)."""

from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress_bar(command, desc, unit, verbosity):
    """A tqdm bar on ``command``'s stderr (none at verbosity 0), closed on the way out; yields the services'
    ``progress(done, total[, message])`` callback, which moves it."""
    bar = tqdm(total=None, desc=desc, unit=unit, file=command.stderr._out, disable=verbosity == 0)

    def progress(done, total, message=None):
        bar.total = total
        if message is not None:
            bar.set_postfix_str(message)
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()
