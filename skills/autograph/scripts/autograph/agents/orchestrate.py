"""Multi-step workflows (``orchestrate.py``): steps run as child processes.

Each step is one sibling script run as ``sys.executable scripts/<name>.py
...`` (:class:`Step`): it parses its own arguments, takes the vault's writer
lock for its own writes and keeps its own exit code, so a workflow is
exactly the commands a person would type, and a step that fails stops the
run with that step's code.  A step whose script (or subcommand) is not
installed is skipped with a note, so a workflow runs on every version of the
skill.  :func:`run_steps` prints the whole plan before the first step runs.

A few steps run in this process instead (loading the schema, installing
the drafted one): the library part returns data, the edits to write or
raises :class:`StepError`, and the caller (the script) turns that into the
step's exit code and writes the edits, as every command writes.
:func:`health` and :func:`bootstrap` run a whole workflow and return its
JSON report; :func:`health_text` and :func:`bootstrap_text` word it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..read.text import counts, printable

__all__ = [
    "SCRIPTS",
    "Step",
    "StepError",
    "bootstrap",
    "bootstrap_steps",
    "bootstrap_text",
    "check_present",
    "check_schema",
    "health",
    "health_steps",
    "health_summary",
    "health_text",
    "run_steps",
    "schema_edit",
]

SCRIPTS = Path(__file__).resolve().parents[2]  # the folder of the sibling scripts
WORK = "orchestrate"  # the workflows' derived files: VAULT/.graph/orchestrate/


class StepError(ValueError):
    """An in-process step that cannot be done; the message says why.
    ``unreadable``: a file could not be read (an I/O failure, exit 3), else
    the input is bad (a schema that does not load or validate, exit 2)."""

    def __init__(self, message: str, unreadable: bool = False):
        super().__init__(message)
        self.unreadable = unreadable


@dataclass
class Step:
    """One command of a workflow.

    ``argv`` follows ``scripts/<script>``; ``writes`` says whether this run
    of it may change vault files (a dry run does not); ``needs`` is the
    subcommand that must exist (``graph.py fix``); ``save`` names the
    ``.graph/`` file its stdout is kept in; ``stdin`` feeds it a file;
    ``action`` replaces the child process by an in-process call (loading
    the schema, installing a drafted one) that returns the step's summary
    (a dict) or the edits it plans (a list of ``Edit``), or raises
    :class:`StepError`: :func:`run_steps` hands such a step to its
    ``perform``."""

    name: str
    script: str
    argv: list[str]
    writes: bool = False
    needs: str | None = None
    save: str | None = None
    json_out: bool = True
    what: str = ""
    action: object = None
    stdin: Path | None = None
    dry: bool = False  # a write step run as a dry run
    counts: bool = True  # its exit 1 (found something) makes the run's exit 1
    missing: str | None = field(default=None, init=False)

    def shown(self) -> str:
        """The command as a person would type it."""
        if self.action is not None:
            return self.what
        line = shlex.join(["python3", self.script, *self.argv])
        return line + (f" < {shlex.quote(str(self.stdin))}" if self.stdin else "")


def check_present(steps: list[Step], scripts: Path = SCRIPTS) -> None:
    """Set ``step.missing`` for steps whose script or subcommand is not
    installed (``--help`` of a subcommand exits 0 only when it exists)."""
    asked: dict[tuple[str, str | None], str | None] = {}
    for step in steps:
        if step.action is not None:
            continue
        key = (step.script, step.needs)
        if key not in asked:
            path = scripts / step.script
            if not path.is_file():
                asked[key] = f"{step.script} is not installed in this version of autograph"
            elif step.needs:
                done = subprocess.run(
                    [sys.executable, str(path), step.needs, "--help"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                asked[key] = None if done.returncode == 0 else f"{step.script} has no {step.needs} command yet"
            else:
                asked[key] = None
        step.missing = asked[key]


def _number(value):
    return len(value) if isinstance(value, list) else value


def summarise(data) -> dict:
    """The figures of a step's ``--json`` object worth a line: scores,
    counts of notes, findings and writes (lists counted)."""
    if not isinstance(data, dict):
        return {}
    keys = (
        "score",
        "notes",
        "cards",
        "fixable",
        "edits",
        "written",
        "conflicts",
        "failed",
        "broken_links",
        "orphans",
        "groups",
        "description_coverage",
        "stale_share",
        "working_set_tokens",
        "run",
    )
    found = {key: _number(data[key]) for key in keys if key in data and data[key] is not None}
    if "types" in data and isinstance(data["types"], dict):
        found["types"] = len(data["types"])
    if "node_types" in data and isinstance(data["node_types"], dict):
        found["types"] = len([k for k in data["node_types"] if not k.startswith("_")])
    return found


def _line(summary: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in summary.items() if not isinstance(v, (dict, list)))


def run_steps(steps: list[Step], root: Path, say, scripts: Path = SCRIPTS, perform=None) -> dict:
    """Print the plan, then run ``steps`` in order.

    ``say(line)`` prints a line of the human report; ``perform(step,
    root)`` runs a step with an ``action`` (required when there is one) and
    returns ``(exit code, summary)``.  A step exiting 0 or 1
    (found what it checks for) lets the run go on; any other code (2 bad
    usage or schema, 3 failure, 4 writes skipped, a signal) stops it, and the
    remaining steps are ``not-run``.  Returns ``{"plan": [...], "steps":
    [{name, command, code, status, summary, seconds}], "code"}``; ``code`` is the
    failing step's, else 1 if a step whose ``counts`` is set found
    something, else 0.  ``data`` of
    each run step (its parsed ``--json``) is kept in ``step_data`` for the
    caller (not in the returned JSON)."""
    check_present(steps, scripts)
    say("plan:")
    width = max(len(step.name) for step in steps)
    for n, step in enumerate(steps, 1):
        if step.missing:
            state = f"skip: {step.missing}"
        else:
            state = "WRITES" if step.writes else "dry run" if step.dry else "reads (derived files under .graph/ only)"
        say(f"  {n}. {step.name:<{width}}  {state}")
        say(f"     {step.shown()}")
    say("")
    plan = [{"name": s.name, "command": s.shown(), "writes": s.writes, "skip": s.missing} for s in steps]
    results: list[dict] = []
    data_of: dict[str, object] = {}
    code = 0
    stopped = False
    for n, step in enumerate(steps, 1):
        entry = {"name": step.name, "command": step.shown(), "code": None, "status": "not-run", "summary": {}}
        results.append(entry)
        if stopped:
            continue
        if step.missing:
            entry["status"] = "skipped"
            entry["summary"] = {"note": step.missing}
            say(f"[{n}/{len(steps)}] {step.name}: skipped ({step.missing})")
            continue
        started = time.monotonic()
        if step.action is not None:
            step_code, data = perform(step, root)
        else:
            step_code, data = _run_child(step, root, scripts)
        entry["seconds"] = round(time.monotonic() - started, 2)
        entry["code"] = step_code
        data_of[step.name] = data
        entry["summary"] = summarise(data)
        if step_code in (0, 1):
            entry["status"] = "ok" if step_code == 0 else "found"
            code = max(code, step_code if step.counts else 0)
            say(
                f"[{n}/{len(steps)}] {step.name}: exit {step_code} in {entry['seconds']:g} s"
                + (f" · {_line(entry['summary'])}" if entry["summary"] else "")
            )
        else:
            entry["status"] = "failed"
            code = step_code
            stopped = True
            say(f"[{n}/{len(steps)}] {step.name}: FAILED with exit {step_code}; the run stops here")
    return {"plan": plan, "steps": results, "code": code, "step_data": data_of}


def _run_child(step: Step, root: Path, scripts: Path) -> tuple[int, object]:
    """Run one step; its stderr goes to ours, its stdout is parsed (JSON)
    and, with ``step.save``, kept under ``.graph/``."""
    from ..write import derived

    handle = open(step.stdin, "rb") if step.stdin else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        done = subprocess.run(
            [sys.executable, str(scripts / step.script), *step.argv], stdin=handle, stdout=subprocess.PIPE
        )
    finally:
        if step.stdin:
            handle.close()
    code = done.returncode if done.returncode >= 0 else 3  # killed by a signal: could not complete
    data = None
    if step.json_out and done.stdout:
        try:
            data = json.loads(done.stdout)
        except (ValueError, RecursionError):
            data = None
    if step.save and code == 0 and done.stdout:
        derived.write_derived(root, f"{WORK}/{step.save}", done.stdout)
    return code, data


def _cli(path: str | Path | None) -> str | None:
    """A path for a child's command line: one starting with '-' would read as an option."""
    if path is None:
        return None
    text = str(path)
    return "./" + text if text.startswith("-") else text


def _schema_args(schema: str | None) -> list[str]:
    return ["--schema", schema] if schema else []


def health_steps(
    vault: str, schema: str | None, fail_under: float | None = None, dry_run: bool = False, quiet: bool = False
) -> list[Step]:
    """``orchestrate.py health``: health, stats and the compliance report;
    read only.  ``vault`` and ``schema`` as given on the command line;
    ``dry_run`` and ``quiet`` are passed to every step."""
    vault, schema = _cli(vault), _cli(schema)
    more = ["--fail-under", f"{fail_under:g}"] if fail_under is not None else []
    flags = (["--dry-run"] if dry_run else []) + (["--quiet"] if quiet else [])
    return [
        Step("health", "graph.py", ["health", "--vault", vault, *_schema_args(schema), "--json", *more, *flags]),
        Step("stats", "engine.py", ["stats", "--vault", vault, *_schema_args(schema), "--json", *flags]),
        Step("compliance", "enforce.py", ["--vault", vault, *_schema_args(schema), "--json", *flags]),
    ]


def _report(command: str, vault: str, result: dict, **extra) -> dict:
    """The start of a workflow's JSON report (keys in ``--help``)."""
    return {
        "command": command,
        "vault": str(Path(vault).resolve()),
        **extra,
        "plan": result["plan"],
        "steps": result["steps"],
    }


def health(
    vault: str, schema: str | None, fail_under: float | None, dry_run: bool, quiet: bool, say, scripts: Path = SCRIPTS
) -> dict:
    """Run ``orchestrate.py health`` (:func:`health_steps`, ``say`` as in
    :func:`run_steps`).  Returns its JSON report: ``{command, vault, plan,
    steps, summary (:func:`health_summary`), code}``.  Raises
    ``VaultError`` when ``vault`` is not a folder."""
    from ..read.vault import Vault

    root = Vault.check_folder(vault)
    result = run_steps(health_steps(vault, schema, fail_under, dry_run, quiet), root, say, scripts)
    summary = health_summary(result["step_data"])
    return {**_report("health", vault, result), "summary": summary, "code": result["code"]}


def health_summary(data_of: dict) -> dict:
    """One summary of the health workflow's three reports."""
    health = data_of.get("health") if isinstance(data_of.get("health"), dict) else {}
    stats = data_of.get("stats") if isinstance(data_of.get("stats"), dict) else {}
    compliance = data_of.get("compliance") if isinstance(data_of.get("compliance"), dict) else {}
    return {
        "score": health.get("score"),
        "notes": health.get("notes"),
        "broken_links": _number(health.get("broken_links")),
        "orphans": _number(health.get("orphans")),
        "dead_ends": _number(health.get("dead_ends")),
        "ambiguous_links": _number(health.get("ambiguous_links")),
        "description_coverage": health.get("description_coverage"),
        "invalid_frontmatter": _number(health.get("invalid_frontmatter")),
        "stale_share": stats.get("stale_share", health.get("stale_share")),
        "tiers": stats.get("tiers", health.get("tiers")),
        "cards": stats.get("cards"),
        "working_set_tokens": stats.get("working_set_tokens"),
        "compliance": compliance.get("score"),
        "fixable": compliance.get("fixable"),
        "by_rule": compliance.get("by_rule"),
    }


def _share(value) -> str:
    return f"{value * 100:.0f}%" if isinstance(value, (int, float)) else "n/a"


def _tiers(tiers) -> str:
    if not isinstance(tiers, dict):
        return "n/a"
    return counts(tiers.items(), " ")


def health_text(summary: dict) -> str:
    """The human summary of :func:`health_summary` (three lines; a figure
    a step did not give shows as ``n/a`` or ``None``)."""
    return (
        f"health {summary['score']}/100 · {summary['notes']} notes · broken links {summary['broken_links']} · "
        f"orphans {summary['orphans']} · descriptions {_share(summary['description_coverage'])}\n"
        f"stale {_share(summary['stale_share'])} · tiers {_tiers(summary['tiers'])} · "
        f"working set ~{summary['working_set_tokens']} tokens\n"
        f"compliance {summary['compliance']}/100 · {summary['fixable']} fixable (enforce.py --apply)"
    )


def bootstrap_steps(
    root: Path,
    vault: str,
    schema: str | None,
    apply: bool,
    fail_under: float | None = None,
    wait: float = 0.0,
    quiet: bool = False,
) -> tuple[list[Step], dict]:
    """``orchestrate.py bootstrap``: (check the schema) -> discover ->
    generate_schema -> (install the draft) -> enforce -> dedup -> graph fix
    -> moc -> health.

    The schema: ``schema`` (``--schema``) if given, else ``VAULT/schema.json``
    if it exists (a dangling symlink too); either is loaded first (a bad one
    stops the run, exit 2), used as it is and never overwritten, and the
    draft is only kept under ``.graph/orchestrate/schema.draft.json`` to
    compare.  Without a schema, the later steps use the draft: from
    ``.graph/`` in a dry run (where the ``install_schema`` step only says
    what it would write); with ``apply`` it is first written to
    ``VAULT/schema.json`` (journaled, so ``undo.py`` takes it back).
    ``vault`` and ``schema`` as given on the command line; ``wait`` is
    passed to every write step, ``quiet`` to every child step.  Returns the steps
    and ``{"source", "draft", "used", "install"}``."""
    from ..read.vault import GRAPH_DIR

    vault, schema = _cli(vault), _cli(schema)
    draft = root / GRAPH_DIR / WORK / "schema.draft.json"
    discovery = root / GRAPH_DIR / WORK / "discovery.json"
    own = root / "schema.json"
    source = schema if schema else (_cli(own) if own.exists() or own.is_symlink() else None)
    install = source is None and apply
    used = source if source else (_cli(own) if apply else _cli(draft))
    apply_flag = ["--apply"] if apply else []
    steps = []
    if source is not None:  # a bad one stops the run before any step reads the vault
        steps.append(Step("check_schema", "", [], what=f"load {source}", action=lambda: check_schema(source)))
    steps += [
        Step("discover", "discover.py", ["--vault", vault, "--json"], save="discovery.json"),
        Step("generate_schema", "generate_schema.py", ["-"], stdin=discovery, save="schema.draft.json"),
    ]
    if source is None:
        steps.append(
            Step(
                "install_schema",
                "",
                [],
                writes=apply,
                dry=not apply,
                what=f"write {own.name} from {draft.relative_to(root)} (a new file; undo.py takes it back)",
                action=lambda: schema_edit(draft),
            )
        )
    common = _schema_args(used)
    # a report step's 1 (found) is told in its status; only health's (--fail-under) is the run's
    steps += [
        Step("enforce", "enforce.py", ["--vault", vault, *common, "--json", *apply_flag], writes=apply, dry=not apply),
        Step("dedup", "dedup.py", ["--vault", vault, *common, "--json", *apply_flag], writes=apply, dry=not apply),
        Step(
            "fix_links",
            "graph.py",
            ["fix", "--vault", vault, *common, "--json", *apply_flag],
            writes=apply,
            dry=not apply,
            needs="fix",
        ),
        Step(
            "moc",
            "moc.py",
            ["generate", "--vault", vault, *common, "--json", *([] if apply else ["--dry-run"])],
            writes=apply,
            dry=not apply,
            needs="generate",
        ),
        Step(
            "health",
            "graph.py",
            [
                "health",
                "--vault",
                vault,
                *common,
                "--json",
                *(["--fail-under", f"{fail_under:g}"] if fail_under is not None else []),
            ],
        ),
    ]
    for step in steps:
        step.counts = step.name == "health"
        if step.writes and step.action is None and wait:
            step.argv += ["--wait", f"{wait:g}"]
        if quiet and step.action is None:
            step.argv.append("--quiet")
    return steps, {"source": source, "draft": _cli(draft), "used": used, "install": install}


def check_schema(source: str) -> dict:
    """Load the schema the steps will use: ``{"types": number of node
    types}``.  Raises :class:`StepError` with the reason when it does not
    load (missing, a dangling symlink, invalid)."""
    from ..schema.model import SchemaError, load_schema

    try:
        schema = load_schema(None, source)
    except SchemaError as exc:
        raise StepError(f"bad schema: {exc}") from None
    return {"types": len(schema.node_types)}


def schema_edit(draft: Path) -> list:
    """The edit that writes the ``draft`` as ``schema.json`` (a new file
    only), for the caller to carry out (with its ``apply``: without, it only
    says what it would write).  Raises :class:`StepError` when the draft
    cannot be read (``unreadable``) or does not validate."""
    from ..read import jsonfile
    from ..schema.model import validate
    from ..write.changes import Edit

    try:
        data = jsonfile.read_bytes(draft)
        problems = validate(jsonfile.loads(data.decode("utf-8")))
    except (OSError, ValueError) as exc:
        raise StepError(f"cannot read the draft {draft}: {exc}", unreadable=True) from None
    if problems:
        raise StepError(f"the draft does not validate: {'; '.join(problems)}")
    return [Edit("schema.json", None, data, "the schema drafted by generate_schema.py")]


def bootstrap(
    vault: str,
    schema: str | None,
    apply: bool,
    fail_under: float | None,
    wait: float,
    quiet: bool,
    say,
    perform,
    scripts: Path = SCRIPTS,
) -> dict:
    """Run ``orchestrate.py bootstrap`` (:func:`bootstrap_steps`; ``say``
    and ``perform`` as in :func:`run_steps`: ``perform`` writes the edits
    of :func:`schema_edit` with ``apply``).  Returns its JSON report:
    ``{command, vault, apply, schema{source, draft, used, install}, plan,
    steps, code}``.  Raises ``VaultError`` when ``vault`` is not a folder."""
    from ..read.vault import Vault

    root = Vault.check_folder(vault)
    steps, chosen = bootstrap_steps(root, vault, schema, apply, fail_under, wait, quiet)
    say(f"bootstrap of {printable(str(root))}: " + ("WRITES (--apply)" if apply else "dry run, writes nothing"))
    result = run_steps(steps, root, say, scripts, perform)
    return {**_report("bootstrap", vault, result, apply=apply, schema=chosen), "code": result["code"]}


def bootstrap_text(report: dict) -> str:
    """The human summary of :func:`bootstrap`'s report: the steps run, the
    exit code, and what became of the schema (lines of text)."""
    done = [s for s in report["steps"] if s["status"] in ("ok", "found")]
    lines = [f"{len(done)} of {len(report['steps'])} steps run · exit {report['code']}"]
    if not report["apply"] and report["code"] in (0, 1):
        lines.append("nothing was written; orchestrate.py bootstrap VAULT --apply writes")
    schema = report["schema"]
    if schema["install"] and report["steps"][2]["status"] == "ok":
        lines.append(f"schema: wrote {printable(schema['used'])} from the draft; review its TODOs")
    elif schema["source"] is None:
        lines.append(f"schema: drafted at {printable(schema['draft'])}; review its TODOs")
    return "\n".join(lines)
