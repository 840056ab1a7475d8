"""Run an autograph script with a concurrent writer landing a write in each
window of every file write (``replace._test_hook``), without any sleep.

Usage: race_runner.py PLAN.json DONE.json SCRIPT [ARGS...]

Starts ``race_writer.py PLAN DONE`` as a separate process, installs a hook
that hands it each stage of each write and waits for its answer, then runs
SCRIPT's ``main(ARGS)`` in this process and exits with its exit code.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parents[1] / "skills" / "autograph" / "scripts"


def main() -> int:
    plan, done, script, *args = sys.argv[1:]
    sys.path.insert(0, str(SCRIPTS))
    from autograph.write import replace

    writer = subprocess.Popen(
        [sys.executable, str(HERE / "race_writer.py"), plan, done],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def hook(stage: str, path: str) -> None:
        writer.stdin.write(f"{stage}\t{os.path.realpath(path)}\n")
        writer.stdin.flush()
        if writer.stdout.readline() != "ok\n":
            raise RuntimeError("the writer process stopped answering")

    replace._test_hook = hook
    spec = importlib.util.spec_from_file_location("script_under_test", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        code = module.main(args)
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
    return code


if __name__ == "__main__":
    sys.exit(main())
