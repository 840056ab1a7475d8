"""Run an autograph script and kill the process right after its N-th file write.

Usage: kill_after.py N SCRIPT [ARGS...]

Counts the writes of vault files that ``store.apply`` makes (each
``replace._swap``: an edit or a new file; each ``store._move``: a rename or a
move to the trash) and ends the process with ``os._exit(137)``, as a kill
would, right after the N-th one returns: no journal is finished, no lock
released cleanly.  Exits with the script's own code when it makes fewer
writes.
"""

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parents[1] / "skills" / "autograph" / "scripts"


def main() -> int:
    limit, script, *args = sys.argv[1:]
    limit = int(limit)
    sys.path.insert(0, str(SCRIPTS))
    from autograph.write import replace, store

    count = [0]

    def counted(original, path_of):
        def wrapper(*a, **k):
            result = original(*a, **k)
            if "/.graph/" in "/" + path_of(a).replace(os.sep, "/"):
                return result  # a derived file (the note cache), not a write of the vault
            count[0] += 1
            if count[0] >= limit:
                sys.stdout.flush()
                os._exit(137)
            return result

        return wrapper

    replace._swap = counted(replace._swap, lambda a: str(a[0]))
    store._move = counted(store._move, lambda a: a[1].path)
    spec = importlib.util.spec_from_file_location("script_under_test", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(args)


if __name__ == "__main__":
    sys.exit(main())
