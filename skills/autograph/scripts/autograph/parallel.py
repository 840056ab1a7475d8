"""Work on two cores, and pausing the garbage collector during a large read.

:func:`map_in_two` computes ``[func(item) for item in items]`` with a forked
child taking every other item: the note index and decay read a large vault's
notes this way.  Standard library only (``os.fork``, ``pickle``,
``tempfile``); Linux only, where fork without exec is safe for a process
that has no threads.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys

__all__ = ["BATCH", "can_fork", "gc_paused", "map_in_two"]

BATCH = 500  # results per pickle the child writes


def can_fork() -> bool:
    """Whether :func:`map_in_two` uses a second process: on Linux with more
    than one core (macOS discourages fork without exec; Windows lacks it)."""
    return sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1


def map_in_two(func, items: list, in_child=None) -> list:
    """``[func(item) for item in items]``, the items at odd positions
    computed by a forked child while this process computes the rest.

    The child writes its results, pickled in batches of :data:`BATCH`, to an
    unnamed temporary file (safe: our own fork wrote them, never a file
    someone could hand us), read back a batch at a time, so neither process
    holds the other's share twice.  ``in_child`` runs first in the child
    (to silence a progress line, say).  The child leaves with ``os._exit``,
    running none of this process's cleanup.  If it fails, its share is
    computed here.  Results must pickle.
    """
    import pickle
    import tempfile

    theirs, ours = items[1::2], items[0::2]
    received: list = []
    with tempfile.TemporaryFile() as spool:
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                if in_child is not None:
                    in_child()
                for start in range(0, len(theirs), BATCH):
                    pickle.dump([func(item) for item in theirs[start : start + BATCH]], spool, pickle.HIGHEST_PROTOCOL)
                spool.flush()
                status = 0
            finally:
                os._exit(status)
        mine = [func(item) for item in ours]
        _, status = os.waitpid(pid, 0)
        if status == 0:
            spool.seek(0)
            try:
                while len(received) < len(theirs):
                    batch = pickle.load(spool)
                    if not isinstance(batch, list):
                        break
                    received.extend(batch)
            except Exception:  # noqa: BLE001 - a broken spool is computed again here
                received = []
    if len(received) != len(theirs):
        received = [func(item) for item in theirs]
    found = [None] * len(items)
    found[0::2], found[1::2] = mine, received
    return found


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while many small objects are made:
    none of them form cycles, and its passes over a growing heap would
    otherwise cost a large share of a run's time (10-38% measured).  What
    was made is frozen afterwards, so later collections need not walk it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
