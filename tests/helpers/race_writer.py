"""The other writer in the race tests: an agent editing notes while autograph
applies a plan.  Driven step by step by ``race_runner.py`` through stdin.

Usage: race_writer.py PLAN.json DONE.json

PLAN maps a note's real path to ``{"mode", "open", "write", "marker"}``:
``append`` opens the note for appending at stage ``open`` and appends the
marker line at stage ``write``; ``rewrite`` opens it for update at ``open``
and rewrites it in place (its bytes then, plus the marker) at ``write``;
``rename`` writes a new file (the note's bytes then, plus the marker) and
renames it over the note at ``write``, as editors that save atomically do.
Each line on stdin is ``STAGE<TAB>PATH``; the writer acts on it and answers
``ok``.  At end of input it writes the markers it actually wrote to DONE.
"""

import json
import os
import sys


def main() -> None:
    plan = json.load(open(sys.argv[1], encoding="utf-8"))
    fds: dict[str, int] = {}
    wrote: dict[str, str] = {}
    for line in sys.stdin:
        stage, path = line.rstrip("\n").split("\t", 1)
        step = plan.get(path)
        if step is not None and path not in wrote:
            marker = (step["marker"] + "\n").encode()
            if stage == step["open"] and step["mode"] == "append":
                fds[path] = os.open(path, os.O_WRONLY | os.O_APPEND)
            elif stage == step["open"] and step["mode"] == "rewrite":
                fds[path] = os.open(path, os.O_RDWR)
            if stage == step["write"]:
                if step["mode"] == "append":
                    os.write(fds.pop(path), marker)
                elif step["mode"] == "rewrite":
                    fd = fds.pop(path)
                    data = os.pread(fd, 1 << 20, 0)
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, data + marker, 0)
                    os.close(fd)
                else:
                    with open(path, "rb") as handle:
                        data = handle.read()
                    tmp = path + ".writer-tmp"
                    with open(tmp, "wb") as handle:
                        handle.write(data + marker)
                    os.rename(tmp, path)
                wrote[path] = step["marker"]
        sys.stdout.write("ok\n")
        sys.stdout.flush()
    for fd in fds.values():
        os.close(fd)
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump(wrote, handle)


if __name__ == "__main__":
    main()
