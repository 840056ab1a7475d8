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

__all__ = ["BATCH", "Stream", "can_fork", "cores", "gc_paused", "map_in_two", "stream"]

BATCH = 500  # results per pickle the child writes


def cores() -> int:
    """How many cores this process may run on: its CPU affinity where the
    system has one (a container or ``taskset`` may allow fewer than the
    machine has; Python 3.11 has no ``os.process_cpu_count``), else
    ``os.cpu_count()``; at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether work is shared with forked processes: on Linux with more than
    one core to run on (macOS discourages fork without exec, and ``spawn``
    would start and import afresh for each reader, slower than reading
    here for the vaults measured; Windows lacks fork)."""
    return sys.platform.startswith("linux") and cores() > 1


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


QUEUE_RECORDS = 16000  # chunk numbers the work queue holds: 4 bytes each, within a Linux pipe's 64 KiB


def stream(func, items: list, workers: int | None = None, chunk: int = 16, in_child=None) -> Stream:
    """A :class:`Stream` of ``func(item)`` for every item: the forked
    children start computing at once; iterate it to receive the results."""
    return Stream(func, items, workers, chunk, in_child)


class Stream:
    """``func(item)`` for every item, yielded not in order when iterated,
    computed by ``workers`` forked children (default: one per core this
    process may use, :func:`cores`) that
    start at once, while this process only receives: the caller works on
    each result as it arrives (writes it to a database, say) on whatever
    core time the children leave, and may do other work before it starts
    iterating.

    The children share one work queue: a pipe filled, before they are
    forked, with the numbers of the chunks of ``chunk`` items, which each
    child reads four bytes at a time (a pipe read is atomic), so a child
    that runs faster, or gets more of the machine, takes more chunks and
    all finish together.  Each child pickles a chunk's results to its own
    unnamed temporary file and writes ``(child, chunk, end offset)`` to a
    shared pipe (13 bytes: one atomic write); this process reads a chunk's
    results with ``os.pread``.  Chunks a failed child took and did not
    finish are computed here at the end.  :meth:`close` (also on leaving a
    ``with`` block, or when the iteration stops early) kills children
    still at work and reaps them.  Without fork (:func:`can_fork`) or with
    few items, all are computed here, as they are iterated.  Results must
    pickle.
    """

    def __init__(self, func, items: list, workers: int | None = None, chunk: int = 16, in_child=None):
        self.func, self.items = func, items
        self.pids: list[int] = []
        self.spools: list = []
        self.fds: list[int] = []  # this process's ends of the pipes, closed by close()
        self.done: set[int] = set()  # chunks received
        self.finished = False
        workers = workers if workers is not None else cores()
        self.chunk = max(chunk, -(-len(items) // QUEUE_RECORDS))
        self.count = -(-len(items) // self.chunk)
        if len(items) <= chunk or workers < 1 or not can_fork():
            self.count = 0
            return
        import pickle
        import tempfile

        queue_read, queue_write = os.pipe()
        records = b"".join(number.to_bytes(4, "little") for number in range(self.count))
        while records:
            records = records[os.write(queue_write, records) :]
        os.close(queue_write)
        marks_read, marks_write = os.pipe()
        self.fds = [queue_read, marks_read, marks_write]
        try:
            for worker in range(workers):
                spool = tempfile.TemporaryFile()
                self.spools.append(spool)
                pid = os.fork()
                if pid == 0:
                    status = 1
                    try:
                        os.close(marks_read)
                        if in_child is not None:
                            in_child()
                        tag = worker.to_bytes(1, "little")
                        size = self.chunk
                        while record := os.read(queue_read, 4):
                            number = int.from_bytes(record, "little")
                            part = items[number * size : (number + 1) * size]
                            pickle.dump([func(item) for item in part], spool, pickle.HIGHEST_PROTOCOL)
                            spool.flush()
                            os.write(marks_write, tag + record + spool.tell().to_bytes(8, "little"))
                        status = 0
                    finally:
                        os._exit(status)
                self.pids.append(pid)
        except BaseException:
            self.close()
            raise
        os.close(marks_write)
        self.fds.remove(marks_write)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self):
        import pickle

        if not self.count:  # nothing forked: computed here
            yield from map(self.func, self.items)
            return
        try:
            if self.pids:
                offsets = [0] * len(self.spools)
                marks_read = self.fds[1]
                with os.fdopen(marks_read, "rb", closefd=False) as marks:
                    while len(mark := marks.read(13)) == 13:
                        worker = mark[0]
                        number = int.from_bytes(mark[1:5], "little")
                        end = int.from_bytes(mark[5:], "little")
                        spool = self.spools[worker].fileno()
                        results = pickle.loads(os.pread(spool, end - offsets[worker], offsets[worker]))
                        offsets[worker] = end
                        self.done.add(number)
                        yield from results
                self.finished = True  # every child has exited (end of file on the pipe)
        finally:
            self.close()
        size = self.chunk
        for number in range(self.count):
            if number not in self.done:
                yield from map(self.func, self.items[number * size : (number + 1) * size])

    def close(self) -> None:
        """Kill the children still at work (unless all have finished), reap
        them, and close the pipes and temporary files.  Idempotent."""
        import signal

        for pid in self.pids:
            if not self.finished:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.pids = []
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        for spool in self.spools:
            spool.close()
        self.spools = []
