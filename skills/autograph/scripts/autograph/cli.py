"""Shared command-line pieces: arguments, output, exit codes, error handling.

Every script builds its parser from these helpers so that ``VAULT``,
``--schema``, ``--json`` and ``--dry-run`` mean the same everywhere, and runs
through :func:`run`, which turns expected failures (a bad schema, a missing
vault, a path outside the vault) into one line on stderr and exit code 2.

Exit codes: 0 success; 1 the check found what it checks for; 2 bad usage or
a bad schema; 3 the command could not complete (an I/O failure, or a bug:
then the traceback goes to stderr); 4 finished, but some planned writes were
skipped (conflicts, permissions), which wins over 1.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys

# Nothing heavier than argparse at module level: every script imports this
# module and builds its parser before it knows whether it will only print
# --help.  The vault, schema, store and json modules are imported by the
# functions that use them (tests/test_startup.py holds that).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .read.vault import Vault

__all__ = [
    "add_common",
    "add_quiet",
    "add_vault",
    "add_vault_or_path",
    "add_writes",
    "carry_out",
    "EXIT_CRASH",
    "EXIT_FOUND",
    "exit_now",
    "EXIT_OK",
    "EXIT_SKIPPED",
    "EXIT_USAGE",
    "load",
    "locate",
    "make_parser",
    "outcome_code",
    "outcome_of",
    "plural",
    "print_json",
    "print_lines",
    "print_outcome",
    "printable",
    "progress_for",
    "run",
    "score_value",
    "seconds",
    "subparser",
    "today_value",
    "UsageError",
    "vault_folder",
    "warn",
    "word",
    "writes",
    "writing",
]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_CRASH = 3
EXIT_SKIPPED = 4  # finished, but some planned writes were skipped; wins over EXIT_FOUND

_outcome = EXIT_OK  # the exit code of what was written so far, for a run whose report cannot be printed
_last_run: str | None = None  # the journaled run this command wrote, for a report that cannot be printed
_writes_by_default = False  # the command has no --apply: a dry run is told to drop --dry-run


class UsageError(Exception):
    """A request the command cannot carry out as asked (exit code 2)."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keep the layout of descriptions and epilogs (examples, JSON keys)."""


def make_parser(prog: str, description: str, epilog: str = "") -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, formatter_class=_Formatter)


def subparser(subparsers, name: str, help: str, description: str, epilog: str = "") -> argparse.ArgumentParser:
    sub = subparsers.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=_Formatter)
    sub.set_defaults(_parser=sub)  # so a misspelled option shows this command's usage
    return sub


def vault_folder(text: str) -> str:
    """argparse type for VAULT: an empty string (an unset variable in cron)
    is refused rather than read as the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("VAULT is empty; give the vault's folder, or leave it out to find it")
    return text


def word(text: str) -> str:
    """argparse type for a positional word that is not a path (a query
    word, a run id): one that names a folder as a path (``~/vault``,
    ``./notes``, ``..``), or a folder that is a vault, is refused, since
    the person meant ``--vault`` (``search.py dana ~/vault`` searched the
    current folder for "dana /home/u/vault")."""
    from .read import location

    folder = os.path.expanduser(text)
    as_path = os.sep in text or "/" in text or text.startswith("~") or text in (".", "..")
    if text.strip() and os.path.isdir(folder) and (as_path or location.is_vault(folder)):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; to name the vault give --vault {text}")
    return text


def score_value(text: str, top: float = 100.0) -> float:
    """argparse type for a threshold: a number from 0 to ``top`` (a score
    0-100, or a share 0-1)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= top:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to {top:g}")
    return value


def today_value(text: str):
    """argparse type for ``--today``: a date written YYYY-MM-DD (ten
    characters: date.fromisoformat's shorter forms, 20260131, are refused)."""
    import datetime

    try:
        value = datetime.date.fromisoformat(text.strip()) if len(text.strip()) == 10 else None
    except ValueError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-01-31")
    return value


VAULT_HELP = (
    "the vault's folder.  Default: $AUTOGRAPH_VAULT, else the nearest folder holding .obsidian/ or "
    "schema.json (else .graph/journal/), upward from the first note path given or from the current folder; "
    "else, for a command that only reads, the current folder (with a notice, writing nothing there)"
)


def add_vault(parser: argparse.ArgumentParser, positional: bool = True, notes: tuple[str, ...] = ()) -> None:
    """Name the vault as every command does (DESIGN 3): ``--vault V``, and
    the positional ``[VAULT]`` when ``positional`` (the two must agree).
    ``notes`` are the destinations of the arguments that hold note paths:
    the first that names a file or folder on disk is where discovery
    starts.  :func:`run` sets ``args.vault`` before the command runs."""
    if positional:
        parser.add_argument(
            "vault", nargs="?", default=None, metavar="VAULT", type=vault_folder, help="the vault's folder (as --vault)"
        )
    parser.add_argument("--vault", dest="vault_option", metavar="VAULT", type=vault_folder, help=VAULT_HELP)
    parser.set_defaults(_vault_from="vault" if positional else None, _notes=tuple(notes))


def add_vault_or_path(parser: argparse.ArgumentParser, dest: str) -> None:
    """``--vault V`` for a command whose positional ``dest`` is a file or a
    folder (check.py's INDEX|VAULT, doctor.py's STORE): given a folder, it
    names the vault (and must lie in ``--vault`` when both are given);
    given a file, discovery starts from it."""
    parser.add_argument("--vault", dest="vault_option", metavar="VAULT", type=vault_folder, help=VAULT_HELP)
    parser.set_defaults(_vault_from=dest, _notes=(dest,))


def add_common(
    parser: argparse.ArgumentParser, vault: bool = True, schema: bool = True, dry_run_help: str | None = None
) -> None:
    """Add ``[VAULT]``, ``--schema``, ``--json`` and ``--dry-run``."""
    if vault:
        add_vault(parser)
    if schema:
        parser.add_argument(
            "--schema", metavar="PATH", help="schema.json to use (default: VAULT/schema.json, else built-in defaults)"
        )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout (keys below)")
    add_quiet(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=dry_run_help or "write nothing, not even the parsed-note cache in .graph/",
    )


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet", action="store_true", help="no progress line on stderr (shown only on a terminal, for long reads)"
    )


# A progress line appears once a read has taken this long (seconds); tests set it to 0.
PROGRESS_AFTER = 1.0


class Progress:
    """A progress line on stderr while notes are read: ``reading notes:
    1,234/6,571 (2,100/s)``, redrawn at most ten times a second and cleared
    at the end.  Shown only when stderr is a terminal, the output is not
    ``--json`` and ``--quiet`` is not given, and only once the read has taken
    :data:`PROGRESS_AFTER` seconds: quick runs and pipes never see it."""

    def __init__(self, total: int, label: str = "reading notes"):
        import time

        self._clock = time.monotonic
        self.total, self.label, self.count = total, label, 0
        self.start = self._clock()
        self.drawn_at = 0.0
        self.width = 0

    def step(self, n: int = 1) -> None:
        self.count += n
        now = self._clock()
        if now - self.start < PROGRESS_AFTER or now - self.drawn_at < 0.1:
            return
        self.drawn_at = now
        rate = self.count / max(now - self.start, 1e-6)
        line = f"{self.label}: {self.count:,}/{self.total:,} ({rate:,.0f}/s)"
        self.width = max(self.width, len(line))
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()

    def done(self) -> None:
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


_progress: list[Progress] = []


def progress_for(args, total: int, label: str = "reading notes") -> Progress | None:
    """A :class:`Progress` when this run may show one (see there), else None."""
    if getattr(args, "json", False) or getattr(args, "quiet", False) or total == 0:
        return None
    try:
        if sys.stderr is None or not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    bar = Progress(total, label)
    _progress.append(bar)
    if not isinstance(sys.stdout, _ClearsProgress) and sys.stdout is not None:
        sys.stdout = _ClearsProgress(sys.stdout)
    return bar


class _ClearsProgress:
    """stdout that first clears a progress line drawn on the same terminal."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        for bar in _progress:
            bar.done()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def seconds(text: str) -> float:
    """argparse type for ``--wait``: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 or more)")
    return value


def add_writes(parser: argparse.ArgumentParser, changes_people_text: bool, wait: float = 0.0) -> None:
    """The options of a command that writes notes (DESIGN 3, "Writes").

    ``changes_people_text``: the command adds to or changes what a person
    wrote, so it is a dry run unless ``--apply``; otherwise it maintains
    fields autograph owns and writes unless ``--dry-run``.  Adds ``--wait``
    (how long to wait for another run's writer lock, default ``wait``),
    and marks the command a writer: it never takes the current folder for
    a vault that no marker shows (:func:`locate`)."""
    parser.set_defaults(_writer=True)
    if changes_people_text:
        parser.add_argument(
            "--apply", action="store_true", help="write the changes (without it this command writes nothing)"
        )
    parser.add_argument(
        "--wait",
        type=seconds,
        default=wait,
        metavar="SECONDS",
        help=f"wait up to SECONDS for another autograph run writing to the vault (default {wait:g})",
    )


def writes(args) -> bool:
    """True when the command should write: ``--apply`` given for a command
    that changes what people wrote, else not ``--dry-run``."""
    return getattr(args, "apply", True) and not getattr(args, "dry_run", False)


def locate(args, prog: str, environ=None, cwd: str | None = None) -> str:
    """Set ``args.vault`` to the folder of the vault the command works on,
    found as git finds a repository (DESIGN 3), and return how: ``"named"``
    (``--vault``, or the positional VAULT; both given, they must agree),
    ``"environment"`` (``AUTOGRAPH_VAULT``), ``"found"``
    (:func:`location.find_vault`, upward from the first note path on the
    command line that exists, else from ``cwd``), or ``"current"``: no
    vault anywhere, so a command that only reads takes ``cwd`` with a
    notice on stderr and as a dry run, writing nothing in a folder nobody
    called a vault; or ``"none"`` (``args.vault`` None) when the command
    was given a file to read (check.py's INDEX) and no vault holds it.
    ``~/`` at the start of a name or a note path is the home folder (a
    tool that runs no shell passes it as typed).  Raises
    :class:`UsageError` when a writing command finds no vault or is named
    a folder of another vault, when the two names disagree, or when a name
    is no folder."""
    from .read import location

    environ = os.environ if environ is None else environ
    for name in ("vault_option", args._vault_from, *args._notes):
        value = getattr(args, name, None) if name else None
        if isinstance(value, str | list):
            setattr(args, name, [_home(v) for v in value] if isinstance(value, list) else _home(value))
    named, how, a_file = _named(args, environ)
    writer = getattr(args, "_writer", False)
    args._vault_how = how
    if named is not None:
        # a store or an index given to doctor.py or check.py is often a folder of a vault: no vault
        store = args._vault_from not in ("vault", None) and getattr(args, "vault_option", None) is None
        inside = None if store and how == "named" else location.holder(named)
        if inside is not None:
            above = printable(str(inside))
            told = (
                f"{printable(named)} is a folder of the Obsidian vault {above}, not a vault of its own (links "
                f"from the rest of that vault would go unseen); name that vault with --vault {above}, or make "
                f"this folder a vault of its own with a schema.json in it"
            )
            if writer:
                raise UsageError(told)
            print(f"{prog}: note: {told}", file=sys.stderr)
        args.vault = named
        return how
    cwd = cwd or _current_folder()
    start = _start(args, cwd)
    found = location.find_vault(start)
    args._vault_how = "found" if found is not None else "current"
    if found is not None:
        # the current folder stays "." (as before discovery), so reports read the same from cron
        args.vault = "." if cwd and location.same_folder(found, cwd) else str(found)
        return "found"
    if a_file:
        args.vault = None  # the file is what the command reads; it needs no vault
        return "none"
    markers = ".obsidian/, schema.json or .graph/journal/"
    if writer:
        raise UsageError(
            f"no vault found: no {markers} in {printable(start)} or any folder above it; "
            f"name the vault with --vault PATH (or set {location.ENVIRONMENT}=PATH)"
        )
    print(
        f"{prog}: no vault marker ({markers}) in {printable(start)} or above; "
        "reading the current folder, writing nothing to it (name a vault with --vault PATH)",
        file=sys.stderr,
    )
    args.vault = "."
    if hasattr(args, "dry_run"):
        args.dry_run = True
    return "current"


def _home(text: str) -> str:
    return os.path.expanduser(text) if text == "~" or text.startswith("~/") else text


def _current_folder() -> str | None:
    """The current folder, or None when it was deleted under the shell
    (then only absolute paths can say where the vault is)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def _named(args, environ) -> tuple[str | None, str, bool]:
    """``(folder, how, a_file)``: the vault as named by ``--vault``, the
    positional (they must agree) or the environment, else None; ``a_file``
    when the positional is a file (check.py's INDEX), not a folder."""
    from .read import location

    option = getattr(args, "vault_option", None)
    dest = args._vault_from
    given = getattr(args, dest, None) if dest else None
    a_file = dest != "vault" and given is not None and not os.path.isdir(given)
    if a_file:
        given = None  # check.py's INDEX given as a file: discovery starts there, and may find none
    for text, how in ((option, "--vault"), (given, dest.upper() if dest else "")):
        if text is not None and not os.path.isdir(text):
            what = "no such folder" if not os.path.lexists(text) else "not a folder"
            raise UsageError(f"{how} {printable(text)}: {what}; name the vault's folder with --vault PATH")
    if option is not None and given is not None:
        agree = location.same_folder(option, given) if dest == "vault" else location.within(given, option)
        if not agree:
            raise UsageError(
                f"--vault {printable(option)} and {dest.upper()} {printable(given)} name two different "
                "folders; give the vault once"
            )
    if option is not None or given is not None:
        return (option if option is not None else given), "named", a_file
    named = _home(environ.get(location.ENVIRONMENT, "").strip())
    if not named:
        return None, "", a_file
    if not os.path.isdir(named):
        raise UsageError(
            f"{location.ENVIRONMENT}={printable(named)} is not a folder; set it to the vault's folder, "
            "or unset it and give --vault"
        )
    return named, "environment", a_file


def _start(args, cwd: str | None) -> str:
    """Where discovery starts: the folder of the first note path on the
    command line that names something on disk, else ``cwd``."""
    from .read import location

    for name in args._notes:
        value = getattr(args, name, None)
        for text in value if isinstance(value, list) else [value]:
            usable = isinstance(text, str) and text.strip() and (cwd is not None or os.path.isabs(text))
            folder = location.start_of(text, cwd) if usable else None
            if folder is not None:
                return str(folder)
    if cwd is None:
        raise UsageError("the current folder no longer exists; cd to one that does, or give --vault PATH")
    return cwd


def load(args, stamps: bool = False) -> tuple[Vault, object]:
    """Open ``args.vault`` and load its schema (``args.schema`` if given).
    ``stamps``: each note is stat'ed during the walk (``vault.on_disk``), for
    a command that brings the index file up to date next."""
    from .read.vault import Vault
    from .schema.model import load_schema

    vault = Vault.open(args.vault, stamps=stamps)
    schema = load_schema(vault.root, getattr(args, "schema", None))
    vault.progress = progress_for(args, len(vault.notes))
    warn(vault.warnings)
    warn(schema.warnings)
    return vault, schema


def warn(warnings) -> None:
    """Print each warning on stderr as ``warning: ...`` (never on stdout,
    which ``--json`` keeps for the report)."""
    for warning in warnings:
        print(f"warning: {printable(warning)}", file=sys.stderr)


def print_json(data) -> None:
    """Write ``data`` as one JSON object on stdout (UTF-8, stable key order;
    text that is not valid Unicode, such as a non-UTF-8 vault path, or that
    the console's encoding cannot show, is written with ``\\u`` escapes).
    Indented for a person at a terminal; compact in a pipe, where an agent
    reads it (``indent`` would force json's slower pure-Python encoder).
    In a pipe the text is made in pieces (:func:`_json_pieces`), each
    encoded as it comes (one encoder: a byte-order mark once): a report of
    100,000 rows is never held as one string as well."""
    import codecs

    try:
        indent = 2 if sys.stdout.isatty() else None
    except (AttributeError, ValueError):  # a replaced or closed stdout
        indent = None
    buffer = getattr(sys.stdout, "buffer", None)
    try:
        encoding = codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name
    except LookupError:
        encoding = "utf-8"
    out = None
    for ensure_ascii in (False, True) if buffer is not None and indent is None else ():
        encoder = codecs.getincrementalencoder(encoding)("strict")
        try:
            # strict: a lone surrogate, or a character the console cannot show, is refused
            out = [encoder.encode(piece) for piece in _json_pieces(data, ensure_ascii, None)]
            out.append(encoder.encode("\n", final=True))  # by this encoder: one byte-order mark, if any
            break
        except UnicodeEncodeError:
            out = None
    if out is None:  # a person's terminal, or a stream of text alone (a test's StringIO): as print writes
        text = "".join(_json_pieces(data, False, indent))
        try:
            text.encode(encoding)
        except UnicodeEncodeError:
            text = "".join(_json_pieces(data, True, indent))
        sys.stdout.write(text + "\n")
        return
    sys.stdout.flush()  # what was printed before comes first
    for piece in out:
        buffer.write(piece)
    buffer.flush()


def _json_pieces(data, ensure_ascii: bool, indent: int | None, most: int = 1000):
    """The text of ``json.dumps(data)`` (compact, or ``indent``), in pieces:
    an object's long lists ``most`` items at a time, each piece made by
    json's C encoder."""
    import json

    encoder = json.JSONEncoder(ensure_ascii=ensure_ascii, indent=indent, allow_nan=False)
    if indent is not None or not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        yield encoder.encode(data)
        return
    yield "{"
    for n, (key, value) in enumerate(data.items()):
        yield (", " if n else "") + encoder.encode(key) + ": "
        if isinstance(value, list) and len(value) > most:
            for start in range(0, len(value), most):
                piece = encoder.encode(value[start : start + most])
                yield ("[" if start == 0 else ", ") + piece[1:-1]
            yield "]"
        else:
            yield encoder.encode(value)
    yield "}"


def print_lines(lines) -> None:
    """Print each of ``lines`` (a library's human report) on stdout."""
    for line in lines:
        print(line)


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters and stray
    surrogates shown as escapes (:func:`read.text.printable`, the one rule,
    imported on first use so that ``--help`` loads no library module)."""
    from .read.text import printable as shown

    return shown(text)


def plural(count: int, word: str) -> str:
    """``"1 link"``, ``"2 links"`` (:func:`read.text.plural`)."""
    from .read.text import plural as counted

    return counted(count, word)


# What the human reports use, for consoles that cannot show it (cp437,
# PYTHONIOENCODING=ascii); anything else not shown becomes an escape.
_ASCII = {"·": "-", "—": "--", "–": "-", "→": "->", "←": "<-", "…": "...", "≥": ">=", "≤": "<=", "×": "x"}
_ASCII.update({"“": '"', "”": '"', "‘": "'", "’": "'"})


def _to_ascii(error: UnicodeEncodeError) -> tuple[str, int]:
    chars = error.object[error.start : error.end]
    return "".join(_ASCII.get(ch) or ch.encode("ascii", "backslashreplace").decode("ascii") for ch in chars), error.end


def _readable_streams() -> None:
    """Make stdout and stderr fall back to ASCII for what their encoding
    cannot show, instead of a UnicodeEncodeError traceback."""
    import codecs

    codecs.register_error("autograph-ascii", _to_ascii)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed (>&-): print() writes nothing
            continue
        try:
            "·—é".encode(stream.encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            try:
                stream.reconfigure(errors="autograph-ascii")
            except (AttributeError, ValueError):
                pass  # not a text stream we can reconfigure (a test double)


def run(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse ``argv`` and call ``args.func(args)``; map expected errors to exit 2."""
    _readable_streams()
    try:
        return _run(parser, argv)
    finally:
        while _progress:
            _progress.pop().done()


def exit_now(code: int) -> None:
    """Leave the process with ``code`` once stdout and stderr are flushed
    and the exit handlers ran (the index file's connection closes, folding
    its write-ahead log back), without the interpreter's teardown of every
    object (15-30 ms measured for a search on obsidian-hub, a tenth of a
    warm query; more for a health report of a large vault).  For a
    script's ``__main__``."""
    index_file = sys.modules.get(__package__ + ".write.index_file")  # loaded only if the run used it
    if index_file is not None:
        index_file.close_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass  # the reader went away (| head), or no stream at all: nothing more to tell it
    os._exit(code)


def _run(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    global _writes_by_default
    words = sys.argv[1:] if argv is None else argv
    for number, word in enumerate(words, 1):
        # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): refused before
        # anything is read or journaled, since no note can hold them; a path that exists (a
        # vault folder whose name is not UTF-8) is the one such word that means something
        if re.search(r"[\ud800-\udfff]", word) and not os.path.lexists(word):
            print(f"{parser.prog}: error: argument {number} is not valid UTF-8: {printable(word)}", file=sys.stderr)
            return EXIT_USAGE
    args, extra = parser.parse_known_args(argv)
    command = getattr(args, "_parser", parser)
    if extra:
        extra = _intermixed(command, args, extra)
    if extra:
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    _writes_by_default = not hasattr(args, "apply")
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if hasattr(args, "_vault_from"):
            locate(args, parser.prog)
        return _call(func, args, parser.prog)
    except _raised("schema.model", "SchemaError") as exc:
        found = getattr(args, "_vault_how", "") == "found" and getattr(args, "schema", None) is None
        hint = f" (the vault {args.vault} was found by searching upward; name yours with --vault)" if found else ""
        print(f"{parser.prog}: bad schema: {exc}{hint}", file=sys.stderr)
    except (
        _raised("read.vault", "VaultError")
        + _raised("write.confine", "PathError", "TargetError")
        + _raised("memory.search", "QueryError")
        + _raised("memory.cards", "BadRequest")
        + _raised("agents.output", "OutputError")
        + _raised("agents.research", "ResearchError")
        + _raised("agents.llm", "SettingsError")
        + (UsageError,)
    ) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
    except _raised("write.lock", "LockBusy") as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return EXIT_CRASH
    except BrokenPipeError:
        # the reader went away (| head): not an error, but what was written stays told
        try:  # what is still buffered goes nowhere, not into a traceback at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, AttributeError, ValueError):
            pass
        return _outcome
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the disk or the output failed, not the check
        done = f"; the run {_last_run} was written (undo.py show {_last_run})" if _last_run else ""
        print(f"{parser.prog}: cannot complete: {exc}{done}", file=sys.stderr)
        return EXIT_CRASH
    except Exception:  # a bug; 1 would read as "the check found something"
        import traceback

        traceback.print_exc()
        print(f"{parser.prog}: internal error (exit code {EXIT_CRASH}); please report it", file=sys.stderr)
        return EXIT_CRASH
    return EXIT_USAGE


def _intermixed(command: argparse.ArgumentParser, args, extra: list[str]) -> list[str]:
    """``extra`` less the words that belong to the command's last positional
    list (``field=value ...``): argparse gives ``nargs='*'`` its words before
    an option (none) and leaves the words after it unrecognized, so ``new
    person X --dry-run a=b`` failed where ``set X --dry-run a=b`` passed."""
    positionals = [a for a in command._actions if not a.option_strings and a.nargs in ("*", "+")]
    if not positionals or any(word.startswith("-") for word in extra):
        return extra
    last = positionals[-1]
    if last is not [a for a in command._actions if not a.option_strings][-1]:
        return extra
    setattr(args, last.dest, list(getattr(args, last.dest, None) or []) + extra)
    return []


def _call(func, args, prog: str = "") -> int:
    """``func(args)``, and once more when it found an index file damaged
    where opening it does not look (:func:`index_file.discard_damaged`
    sets the file aside; the second call builds it again and warns).  A
    first call that began writing to the vault is not made again: it says
    so and exits :data:`EXIT_CRASH` (the next command builds the index)."""
    try:
        return int(func(args) or 0)
    except Exception as exc:
        index_file = sys.modules.get(f"{__package__}.write.index_file")  # loaded only if the run used it
        if index_file is None or not index_file.discard_damaged(exc):
            raise
        store = sys.modules.get(f"{__package__}.write.store")
        if store is not None and store.applied():
            done = f"; the run {_last_run} was written (undo.py show {_last_run})" if _last_run else ""
            told = f"{prog}: the index file was damaged ({exc}) and was set aside; run the command again{done}"
            print(told, file=sys.stderr)
            return EXIT_CRASH
    return int(func(args) or 0)


def _raised(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """The exception classes ``names`` of ``autograph.<module>`` for an
    ``except`` clause, or none when that module was never imported (then
    nothing can have raised them): a command imports only what it uses."""
    loaded = sys.modules.get(f"{__package__}.{module}")
    return tuple(getattr(loaded, name) for name in names) if loaded is not None else ()


def carry_out(vault, edits, apply: bool, wait: float = 0.0, command: str = "", schema=None, undoes=None) -> dict:
    """Write ``edits`` (with ``apply``), or only describe them, in
    ``vault``: the :class:`Vault` they were planned on (with ``schema``, the
    index file then takes the rows of the notes written,
    :func:`index_file.record_written`), or its root folder.

    Returns, as printed in JSON output: ``{"edits": [{path, reason}],
    "written": [path], "conflicts": [{path, error, copy}], "failed": [{path,
    error}], "run": run id or None}``.  ``written`` holds only the notes
    that now hold their edit; a conflict is a note someone changed meanwhile
    (left as they made it, or with their version merged or saved at
    ``copy``); ``failed`` a note that could not be written; ``run`` names
    the journaled run (``undo.py undo RUN`` takes it back).  A
    :class:`Trash` or :class:`Move` with ``after`` that was
    not carried out because a change it waits for was not written is in
    ``failed`` or ``conflicts`` with that reason.  Raises
    :class:`PathError` before writing anything if a path (a trash or
    move destination too) would leave the vault, :class:`TargetError`
    if a folder on a move's way is a file (a ``.trash`` file),
    :class:`LockBusy` if another run holds the vault.  Any other
    exception half way leaves the run to the next writer's rollback.
    Nothing is printed here: a report that cannot be printed (``| head``)
    never stops the writes half way."""
    from .write import store

    global _outcome, _last_run
    keep = schema.journal_keep if schema is not None else None
    from .read.vault import Vault

    root = vault.root if isinstance(vault, Vault) else vault
    result = store.apply(root, edits, wait=wait, command=command, undoes=undoes, keep=keep) if apply else None
    if result is not None and result.written and schema is not None and root is not vault:
        from .write.index_file import record_written

        record_written(vault, schema, edits, result.written)
    if result is not None and (result.written or result.skipped):
        _last_run = result.run_id
    if result is not None and result.skipped:
        _outcome = EXIT_SKIPPED  # told even if the report cannot be printed
    for warning in result.warnings if result is not None else ():
        print(f"warning: {printable(warning)}", file=sys.stderr)
    return outcome_of(edits, result)


def outcome_of(edits, result) -> dict:
    """The JSON form of a run (see :func:`carry_out`); ``result`` None for a dry run."""
    return {
        "edits": [{"path": e.path, "reason": e.reason} for e in edits],
        "written": list(result.written) if result else [],
        "conflicts": [c.as_dict() for c in result.conflicts] if result else [],
        "failed": [{"path": f.path, "error": f.error} for f in result.failed] if result else [],
        "run": result.run_id if result and (result.written or result.conflicts or result.failed) else None,
    }


def print_outcome(outcome: dict, edits, applied: bool, show_diff: bool) -> None:
    """The human report of :func:`carry_out`: what changed (or would), each
    edit (as a diff with ``show_diff``), the conflicts and the failures."""
    from .write.changes import diff

    if applied:
        print(f"{plural(len(outcome['written']), 'note')} changed")
    else:
        how = "run without --dry-run to write" if _writes_by_default else "run with --apply to write"
        print(f"{plural(len(edits), 'note')} would change" + (f" ({how})" if edits else ""))
    for edit in edits:
        print(f"  {printable(edit.path)}  {edit.reason}")
        if show_diff:
            for line in diff(edit).splitlines():
                print("    " + printable(line))
    if outcome["conflicts"]:
        print(f"{plural(len(outcome['conflicts']), 'conflict')} (changed by someone else while this ran):")
        for item in outcome["conflicts"]:
            print(f"  {printable(item['path'])}: {printable(item['error'])}")
    if outcome["failed"]:
        print(f"{plural(len(outcome['failed']), 'note')} not written:")
        for item in outcome["failed"]:
            print(f"  {printable(item['path'])}: {printable(item['error'])}")


@contextlib.contextmanager
def writing(args, command: str):
    """Hold the vault's writer lock from before the vault is read until the
    command ends, when ``args`` say it writes: a run that waited
    (``--wait``) then plans on what the run before it wrote, instead of
    finding every note changed.  A run that leaves nothing in a
    ``.graph/`` it made takes that folder away with its lock
    (:func:`lock.hold`): a refused call writes nothing anywhere.  Raises
    :class:`LockBusy`."""
    from .read.vault import Vault
    from .write import store

    if not writes(args):
        yield
        return
    root = Vault.check_folder(args.vault)
    with store.writer_lock(root, getattr(args, "wait", 0.0), command):
        for run_id, result in store.last_recovery:
            if not run_id:  # saves that landed while the killed run wrote
                for item in result.conflicts:
                    print(
                        f"{command}: kept {printable(item.path)} as {printable(item.copy)}: {item.error}",
                        file=sys.stderr,
                    )
                continue
            print(
                f"{command}: the run {run_id} did not finish; rolled back {plural(len(result.written), 'file')}"
                + (f", {len(result.conflicts) + len(result.failed)} left as they are" if result.skipped else ""),
                file=sys.stderr,
            )
        yield


def outcome_code(outcome: dict, found: bool = False) -> int:
    """The exit code of a writing run: 4 when some planned write was skipped
    (it wins over 1), else 1 when the check ``found`` something, else 0."""
    global _outcome
    if outcome.get("conflicts") or outcome.get("failed"):
        _outcome = EXIT_SKIPPED
    else:
        _outcome = EXIT_FOUND if found else EXIT_OK
    return _outcome
