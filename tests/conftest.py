"""Shared fixtures: the shared test data (cases, corpora) and vault builders.

The shared data lives beside the repository (``../shared``) or where
``AUTOGRAPH_SHARED`` points.  When ``AUTOGRAPH_REQUIRE_CORPORA=1`` (CI sets
it), missing data fails the tests that need it instead of skipping them.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("AUTOGRAPH_SHARED", REPO.parent / "shared"))
CASES = SHARED / "cases"
CORPORA = SHARED / "corpora"
CORPUS_NAMES = ["obsidian-hub", "dendron-site", "kepano-obsidian", "tasks-demo", "tasks-docs"]
SCRIPTS = REPO / "skills" / "autograph" / "scripts"
EXAMPLE_VAULT = REPO / "examples" / "vault"


def _bytecode_cache_outside_the_repository() -> None:
    """With ``PYTHONDONTWRITEBYTECODE`` set (as some shells and containers
    do), each of the thousands of scripts the tests run compiles the library
    again: about 70 ms of every run, a quarter of the suite's time.  Those runs
    cache their bytecode instead, in a folder of this test session outside
    the repository (``PYTHONPYCACHEPREFIX``), so no ``__pycache__`` lands in
    the repository or the skill folder, as the setting intends.  Set here,
    before pytest-xdist starts its workers, so they and every script they
    run share the one folder, removed when this process ends."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    folder = tempfile.mkdtemp(prefix="autograph-pycache-")
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


_bytecode_cache_outside_the_repository()
# A vault named in the person's shell must not become every test's vault: the
# tests that mean AUTOGRAPH_VAULT set it themselves.
os.environ.pop("AUTOGRAPH_VAULT", None)


def require(path: Path) -> Path:
    """Return ``path``; skip the test if it is missing, or fail under CI."""
    if not path.exists():
        message = f"shared test data missing: {path}"
        if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def copy_tree(source: Path, dest: Path) -> Path:
    """Copy a read-only fixture tree to ``dest`` and make the copy writable.

    ``.graph/`` is left out: a run of the README's main command leaves one in
    the example vault, and tests start from the vault as committed."""
    return _bench_common().writable_copy(source, dest)


def run_in_vault(
    script: str, root: Path, *args: str, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """``python3 SCRIPTS/script ARGS --vault ROOT`` as an agent runs it:
    text output captured, ``stdin`` fed, ``env`` the environment (default
    this process's)."""
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args, "--vault", str(root)],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env=env,
    )


def vault_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the vault at ``root`` (``.graph/`` left out) and its
    bytes: two of them equal when nothing the person owns was touched."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".graph" not in p.relative_to(root).parts
    }


def _bench_common():
    """bench/common.py, loaded by its path (its name, ``common``, is too
    plain to put its folder on ``sys.path`` for every test)."""
    import importlib.util

    module = sys.modules.get("autograph_bench_common")
    if module is None:
        spec = importlib.util.spec_from_file_location("autograph_bench_common", REPO / "bench" / "common.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


def _remove(folder: Path) -> None:
    """Remove ``folder``, whatever modes a test left on the folders inside."""
    folder.chmod(stat.S_IRWXU)
    for parent, dirs, _files in os.walk(folder):  # top down: each folder opened before it is entered
        for name in dirs:
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
    shutil.rmtree(folder)


class FastTmp:
    """Folders in memory (tmpfs, ``/dev/shm``) when the system has one, else
    under pytest's temporary folder.

    For the tests that copy a whole corpus and write thousands of its notes:
    every write fsyncs the note, its folder and the journal, which costs the
    disk seconds per thousand notes; what those tests check is bytes, links
    and reports, not durability.  Tests of extended attributes, ACLs or
    ``RENAME_EXCHANGE``, of killed writers and of races stay on the disk
    (``tmp_path``)."""

    def __init__(self, fallback: pytest.TempPathFactory):
        self._fallback = fallback
        shm = Path("/dev/shm")
        self._root = None
        if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
            self._root = Path(tempfile.mkdtemp(dir=shm, prefix="autograph-test-"))
            atexit.register(self.close)  # memory, even if the session is cut short

    def mktemp(self, name: str) -> Path:
        """A new empty folder whose name starts with ``name``."""
        if self._root is None:
            return self._fallback.mktemp(name)
        return Path(tempfile.mkdtemp(dir=self._root, prefix=f"{name}-"))

    def remove(self, folder: Path) -> None:
        if self._root is not None and folder.is_relative_to(self._root):
            _remove(folder)

    def close(self) -> None:
        if self._root is not None and self._root.exists():
            _remove(self._root)


@pytest.fixture(scope="session")
def fast_tmp_factory(tmp_path_factory):
    """``fast_tmp_factory.mktemp(name)``: a new folder in memory (see
    :class:`FastTmp`), for module fixtures; all removed at the session's end."""
    factory = FastTmp(tmp_path_factory)
    yield factory
    factory.close()


@pytest.fixture
def fast_tmp(fast_tmp_factory, request):
    """A test's own folder in memory (see :class:`FastTmp`), removed after it."""
    folder = fast_tmp_factory.mktemp(re.sub(r"[^\w.-]", "_", request.node.name)[:40])
    yield folder
    fast_tmp_factory.remove(folder)


@pytest.fixture
def case(tmp_path):
    """``case("BR-01")`` -> a writable copy of ``cases/BR-01`` (the whole folder)."""

    def make(name: str) -> Path:
        return copy_tree(require(CASES / name), tmp_path / name)

    return make


@pytest.fixture
def make_vault(tmp_path):
    """``make_vault({"a.md": "text", "img.png": b""})`` -> a vault folder."""

    def make(files: dict[str, str | bytes], name: str = "vault") -> Path:
        root = tmp_path / name
        root.mkdir()
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_bytes(content.encode("utf-8"))
        return root

    return make
