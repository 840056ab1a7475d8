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

__all__ = ["BATCH", "can_fork", "gc_paused", "map_in_two", "stream_in_two"]

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


def stream_in_two(func, items: list, child_share: float = 0.5, in_child=None, batch: int = 200):
    """Yield ``func(item)`` for every item, not in order: this process
    computes the first ``1 - child_share`` of the items while a forked child
    computes the rest, whose results are then yielded batch by batch as the
    child finishes each, so the caller works on them (writes them to a
    database, say) while the child still computes.  A caller that does more
    with each result than ``func`` gives the child the larger share.

    The child pickles each batch of :data:`batch` results to an unnamed
    temporary file and writes the batch's end offset to a pipe; this process
    reads a batch with ``os.pread`` (the file offset it shares with the
    child never moves).  If the child fails, the items of the batches it did
    not finish are computed here.  Without fork (:func:`can_fork`), all are
    computed here.  Results must pickle.
    """
    import pickle
    import tempfile

    cut = len(items) - int(len(items) * child_share)
    ours, theirs = items[:cut], items[cut:]
    if not theirs or not can_fork():
        yield from map(func, items)
        return
    with tempfile.TemporaryFile() as spool:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(read_end)
                if in_child is not None:
                    in_child()
                for start in range(0, len(theirs), batch):
                    pickle.dump([func(item) for item in theirs[start : start + batch]], spool, pickle.HIGHEST_PROTOCOL)
                    spool.flush()
                    os.write(write_end, spool.tell().to_bytes(8, "little"))
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        done = 0  # the child's items received
        try:
            yield from map(func, ours)
            with os.fdopen(read_end, "rb") as marks:
                read_end = None
                offset = 0
                while mark := marks.read(8):
                    end = int.from_bytes(mark, "little")
                    results = pickle.loads(os.pread(spool.fileno(), end - offset, offset))
                    offset = end
                    done += len(results)
                    yield from results
        finally:
            if read_end is not None:
                os.close(read_end)
            os.waitpid(pid, 0)  # the child has exited or is about to: it never waits on this process
        yield from map(func, theirs[done:])
