"""A short run of ``bench/load.py`` (issue 30): agents, cron, a person, a
sync client and kill -9 on a copy of the example vault for 18 seconds.

Nothing the ledger recorded may be lost: every fact an agent's command
reported written and every line the person typed is somewhere in the vault
(``.trash/`` included) after ``undo.py recover``; no conflict copy is taken
for a card; no identity has two live cards.  The ledger must have recorded
facts, person lines, copies and at least one kill, so that the run cannot
pass with nothing done.  Lock waits are the bench's report, not checked here
(they depend on the machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

LOAD = REPO / "bench" / "load.py"


def test_short_load_run_loses_nothing(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    command = [sys.executable, str(LOAD), "--minutes", "0.3", "--agents", "3", "--kills", "3"]
    command += ["--vault", "example", "--seed", "3", "--json"]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert proc.stdout.strip(), proc.stderr
    report = json.loads(proc.stdout)
    (result,) = report["vaults"]
    details = json.dumps(result["details"], indent=1, ensure_ascii=False)
    # the run did something
    assert result["facts"] >= 20, result
    assert result["person_lines"] >= 3, result
    assert result["copies_made"] >= 1, result
    # a kill -9 sent to a running writer (on a loaded machine it may land as the writer ends)
    assert result["kill_signals"] >= 1, result
    assert result["lock_wait"]["commands"] >= 20, result
    # the targets
    assert result["facts_lost"] == 0, details
    assert result["person_lines_lost"] == 0, details
    assert result["copies_chosen"] == 0, details
    assert result["duplicates"] == 0, details
    assert result["recover_exit"] == 0, result["recover"]
    assert report["pass"] is True
    assert proc.returncode == 0, proc.stderr
