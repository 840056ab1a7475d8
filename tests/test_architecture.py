"""The library in layers (ARCHITECTURE.md): what may import what, and thin scripts.

* The layers and the absence of import cycles are import-linter contracts in
  ``pyproject.toml``; this test runs them.  import-linter reads every import
  statement, also those inside functions (the library imports lazily).
* A subpackage's ``__init__.py`` is a docstring and nothing else: importing a
  module of a layer must not load the rest of that layer (``--help`` stays
  as cheap as before, tests/test_startup.py).
* Scripts import only names a module lists in ``__all__`` (import-linter
  does not look at ``scripts/``): for ``from autograph.x import module``,
  every attribute the script takes of ``module``.
* A script is thin: at most :data:`MAX_CODE_LINES` lines of code.  A line
  of code holds a token other than a string, a comment or the brackets,
  commas and ``+`` around strings, so the ``--help`` texts (descriptions,
  epilogs, help strings on lines of their own) and docstrings do not count.
"""

from __future__ import annotations

import ast
import importlib
import io
import os
import subprocess
import sys
import tokenize

import pytest
from conftest import SCRIPTS

REPO = SCRIPTS.parents[2]
LIBRARY = SCRIPTS / "autograph"
LAYERS = ["read", "write", "schema", "memory", "graph", "hosts", "agents"]
MAX_CODE_LINES = 250
ALL_SCRIPTS = sorted(SCRIPTS.glob("*.py"))


def test_the_layer_and_cycle_contracts_hold():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(SCRIPTS)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout, proc.stdout


def test_every_module_of_the_library_is_in_a_layer():
    top = sorted(p.name for p in LIBRARY.iterdir() if p.name.endswith(".py"))
    assert top == ["__init__.py", "cli.py"], "a module at the top of the library belongs in a layer's folder"
    folders = sorted(p.name for p in LIBRARY.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(LAYERS)


@pytest.mark.parametrize("package", ["", *LAYERS])
def test_a_package_init_is_a_docstring_only(package):
    tree = ast.parse((LIBRARY / package / "__init__.py").read_text(encoding="utf-8"))
    if package == "":
        assert tree.body == []
        return
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), "only a docstring"
    docstring = ast.get_docstring(tree)
    assert docstring and "May import" in docstring or "lowest layer" in docstring


def _scopes(tree: ast.Module):
    """``(scope, imports)`` per module or function: the ``(module, name,
    bound as, line)`` of each ``from autograph... import`` made directly in it."""
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef)):
            continue
        found = []
        for node in _own_nodes(scope):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("autograph"), f"line {node.lineno}: use from autograph... import"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "autograph":
                found += [(node.module, a.name, a.asname or a.name, node.lineno) for a in node.names]
        yield scope, found


def _own_nodes(scope):
    """The nodes of ``scope`` outside the functions defined in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _binds(function: ast.FunctionDef, name: str) -> bool:
    """Whether ``function`` binds ``name`` itself (an argument, an assignment, an import)."""
    arguments = function.args
    if name in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}:
        return True
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _attributes_of(scope, name: str) -> set[str]:
    """Attributes taken of ``name`` in ``scope`` and the functions within it
    that do not bind ``name`` themselves."""
    found = {
        node.attr
        for node in _own_nodes(scope)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name
    }
    for node in _own_nodes(scope):
        if isinstance(node, ast.FunctionDef) and not _binds(node, name):
            found |= _attributes_of(node, name)
    return found


@pytest.mark.parametrize("script", ALL_SCRIPTS, ids=lambda p: p.name)
def test_a_script_imports_only_what_a_module_lists_in_all(script):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    problems = []
    for scope, imports in _scopes(tree):
        for module_name, name, bound, line in imports:
            module = importlib.import_module(module_name)
            try:
                target = importlib.import_module(f"{module_name}.{name}")  # a module of a package
            except ModuleNotFoundError:
                target = None
            if target is None:
                if name not in getattr(module, "__all__", ()):
                    problems.append(f"line {line}: {module_name}.{name} is not in {module_name}.__all__")
                continue
            listed = getattr(target, "__all__", None)
            if listed is None:
                problems.append(f"line {line}: {target.__name__} has no __all__")
                continue
            for attribute in sorted(_attributes_of(scope, bound) - set(listed)):
                problems.append(f"{bound}.{attribute}: not in {target.__name__}.__all__")
    assert sorted(set(problems)) == []


def code_lines(source: str) -> int:
    """Lines holding a token other than strings, comments and the brackets,
    commas and ``+`` that join strings (see the module docstring)."""
    text = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    text |= {tokenize.ENCODING, tokenize.ENDMARKER}
    if sys.version_info >= (3, 12):  # f-strings are several tokens there; their text is text
        text |= {tokenize.FSTRING_START, tokenize.FSTRING_MIDDLE, tokenize.FSTRING_END}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in text or (token.type == tokenize.OP and token.string in "()[],+"):
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines)


def test_code_lines_count_code_not_help_text():
    source = (
        'EPILOG = """\\nLong\\nhelp\\n"""\n\n\n'
        'def f(x):\n    """Doc."""\n    # why\n    return (\n        "a"\n        "b"\n    ) + x\n'
    )
    assert code_lines(source) == 4  # EPILOG =, def, return (, ) + x


@pytest.mark.parametrize("script", ALL_SCRIPTS, ids=lambda p: p.name)
def test_a_script_is_thin(script):
    count = code_lines(script.read_text(encoding="utf-8"))
    assert count <= MAX_CODE_LINES, f"{script.name}: {count} lines of code; move logic into the library"


def test_architecture_md_lists_every_module_of_every_layer():
    """ARCHITECTURE.md is the map a maintainer reads: a module added, moved
    or removed shows there, under its layer's heading."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    listed = {}
    layer = None
    for line in text.split("\n"):
        if line.startswith("### `") and line.count("`") >= 2:
            layer = line.split("`")[1].rstrip("/")
        elif line.startswith("- `") and layer is not None:
            listed.setdefault(layer, set()).add(line.split("`")[1])
    for name in LAYERS:
        files = {p.name for p in (LIBRARY / name).glob("*.py") if p.name != "__init__.py"}
        assert listed.get(name) == files, name
