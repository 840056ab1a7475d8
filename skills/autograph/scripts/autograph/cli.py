"""Shared command-line pieces: arguments, output, exit codes, error handling.

Every script builds its parser from these helpers so that ``VAULT``,
``--schema``, ``--json`` and ``--dry-run`` mean the same everywhere, and runs
through :func:`run`, which turns expected failures (a bad schema, a missing
vault, a path outside the vault) into one line on stderr and exit code 2.

Exit codes: 0 success; 1 the check found what it checks for; 2 bad usage or
a bad schema; 3 an internal error (a bug: the traceback goes to stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

from .schema import SchemaError, load_schema
from .store import PathError
from .vault import Vault, VaultError

__all__ = [
    "EXIT_FOUND",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "add_common",
    "load",
    "make_parser",
    "print_json",
    "run",
    "subparser",
]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_CRASH = 3


class UsageError(Exception):
    """A request the command cannot carry out as asked (exit code 2)."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keep the layout of descriptions and epilogs (examples, JSON keys)."""


def make_parser(prog: str, description: str, epilog: str = "") -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, formatter_class=_Formatter)


def subparser(subparsers, name: str, help: str, description: str, epilog: str = "") -> argparse.ArgumentParser:
    return subparsers.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=_Formatter)


def add_common(parser: argparse.ArgumentParser, vault: bool = True, schema: bool = True, dry_run_help: str | None = None) -> None:
    """Add ``[VAULT]``, ``--schema``, ``--json`` and ``--dry-run``."""
    if vault:
        parser.add_argument("vault", nargs="?", default=".", metavar="VAULT",
                            help="the vault's folder (default: the current folder)")
    if schema:
        parser.add_argument("--schema", metavar="PATH",
                            help="schema.json to use (default: VAULT/schema.json, else built-in defaults)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout (keys below)")
    parser.add_argument("--dry-run", action="store_true",
                        help=dry_run_help or "write nothing, not even the parsed-note cache in .graph/")


def load(args) -> tuple[Vault, object]:
    """Open ``args.vault`` and load its schema (``args.schema`` if given)."""
    vault = Vault.open(args.vault)
    schema = load_schema(vault.root, getattr(args, "schema", None))
    for warning in vault.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return vault, schema


def print_json(data) -> None:
    """Write ``data`` as one JSON object on stdout (UTF-8, stable key order)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def run(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse ``argv`` and call ``args.func(args)``; map expected errors to exit 2."""
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(func(args) or 0)
    except SchemaError as exc:
        print(f"{parser.prog}: bad schema: {exc}", file=sys.stderr)
    except (VaultError, PathError, UsageError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (| head); not an error
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except Exception:  # a bug; 1 would read as "the check found something"
        import traceback

        traceback.print_exc()
        print(f"{parser.prog}: internal error (exit code {EXIT_CRASH}); please report it", file=sys.stderr)
        return EXIT_CRASH
    return EXIT_USAGE
