"""The agent hosts init.py wires that keep memory rules in a file, and the rules.

Each :class:`Host` says where a host loads always-on rules from (a marked
block in a file it shares, or a file of autograph's own), where it reads
skills, and which rung of enforcement it gets:

* ``hook``: a pre-write hook runs ``guard.py`` (Claude Code; Codex, whose
  ``PreToolUse`` hook sees ``apply_patch``);
* ``check after write``: no hook the guard can serve as it is (its input is
  Claude Code's ``PreToolUse`` JSON with ``Write``/``Edit``/``MultiEdit``),
  so the rules tell the agent to run ``check.py`` after each index write;
* ``rules only``: ``--reader``, a host that reads a store another agent
  writes.

============  ===============================  ==================================  ==========================
host          rules (project)                  rules (--user)                      skill (project / user)
============  ===============================  ==================================  ==========================
``codex``     block in ``AGENTS.md``           block in ``$CODEX_HOME/AGENTS.md``  ``.agents/skills/``
``gemini``    block in ``GEMINI.md``           block in ``~/.gemini/GEMINI.md``    ``.gemini/skills/``
``opencode``  block in ``AGENTS.md``           ``~/.config/opencode/AGENTS.md``    ``.opencode/skills/``
``cursor``    ``.cursor/rules/autograph.mdc``  none (User Rules live in settings)  ``.cursor/skills/``
``windsurf``  ``.windsurf/rules/autograph.md`` block in ``global_rules.md``        ``.windsurf/skills/``
``kiro``      ``.kiro/steering/autograph.md``  ``~/.kiro/steering/autograph.md``   ``.kiro/skills/``
``cline``     ``.clinerules/autograph.md``     ``~/Documents/Cline/Rules/...``     ``.cline/skills/``
============  ===============================  ==================================  ==========================

Sources are in each host's ``sources``; hosts verified only by their
documented layout (no run of the real CLI) have ``verified`` False and are
marked "unverified" in init.py's help and references/install.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BEGIN",
    "END",
    "HOSTS",
    "Host",
    "RULE_HOSTS",
    "rules_text",
]

BEGIN = "<!-- autograph:begin -->"
END = "<!-- autograph:end -->"

SOFT = "160 lines or 20,000 bytes"
TARGET = "under 140 lines / 17,500 bytes"
HARD = "200 lines or 25,000 bytes"


def _home(environ) -> Path:
    return Path(environ.get("HOME") or Path.home())


def _codex_home(environ) -> Path:
    return Path(environ.get("CODEX_HOME") or _home(environ) / ".codex")


def _xdg_config(environ) -> Path:
    value = environ.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else _home(environ) / ".config"


@dataclass(frozen=True)
class Host:
    """Where one host keeps rules and skills.  ``rules`` is ``block`` (a
    marked block in a file the host and the person share) or ``file`` (a
    file of autograph's own, ``frontmatter`` first); ``user_rules_kind``
    the same for ``--user`` (None: the host has no rules file for the user).
    Paths for the project are relative to it; those for the user are
    functions of the environment."""

    name: str
    title: str
    rules: str
    project_rules: str
    project_skill: str
    user_rules: object = None  # environ -> Path, or None
    user_rules_kind: str | None = None
    user_skill: object = None  # environ -> Path
    frontmatter: str = ""
    rung: str = "check after write"
    verified: bool = False
    sources: tuple[str, ...] = field(default_factory=tuple)
    hooks: bool = False  # a pre-write hook init registers (Codex)


HOSTS: dict[str, Host] = {
    "codex": Host(
        "codex",
        "Codex",
        "block",
        "AGENTS.md",
        ".agents/skills/autograph",
        user_rules=lambda env: _codex_home(env) / "AGENTS.md",
        user_rules_kind="block",
        user_skill=lambda env: _home(env) / ".agents" / "skills" / "autograph",
        rung="hook",
        verified=True,
        hooks=True,
        sources=(
            "https://developers.openai.com/codex/guides/agents-md",
            "https://developers.openai.com/codex/skills",
            "https://developers.openai.com/codex/hooks",
        ),
    ),
    "gemini": Host(
        "gemini",
        "Gemini CLI",
        "block",
        "GEMINI.md",
        ".gemini/skills/autograph",
        user_rules=lambda env: _home(env) / ".gemini" / "GEMINI.md",
        user_rules_kind="block",
        user_skill=lambda env: _home(env) / ".gemini" / "skills" / "autograph",
        verified=True,
        sources=(
            "https://geminicli.com/docs/cli/gemini-md",
            "https://geminicli.com/docs/cli/using-agent-skills/",
            "https://geminicli.com/docs/hooks/reference",
        ),
    ),
    "opencode": Host(
        "opencode",
        "OpenCode",
        "block",
        "AGENTS.md",
        ".opencode/skills/autograph",
        user_rules=lambda env: _xdg_config(env) / "opencode" / "AGENTS.md",
        user_rules_kind="block",
        user_skill=lambda env: _xdg_config(env) / "opencode" / "skills" / "autograph",
        verified=True,
        sources=("https://opencode.ai/docs/rules/", "https://opencode.ai/docs/skills/"),
    ),
    "cursor": Host(
        "cursor",
        "Cursor",
        "file",
        ".cursor/rules/autograph.mdc",
        ".cursor/skills/autograph",
        frontmatter="---\ndescription: Memory rules of autograph (the store, and how to keep it)\n"
        "alwaysApply: true\n---\n",
        sources=("https://cursor.com/docs/context/rules", "https://cursor.com/docs/context/skills"),
    ),
    "windsurf": Host(
        "windsurf",
        "Windsurf",
        "file",
        ".windsurf/rules/autograph.md",
        ".windsurf/skills/autograph",
        user_rules=lambda env: _home(env) / ".codeium" / "windsurf" / "memories" / "global_rules.md",
        user_rules_kind="block",
        user_skill=lambda env: _home(env) / ".codeium" / "windsurf" / "skills" / "autograph",
        frontmatter="---\ntrigger: always_on\n---\n",
        sources=(
            "https://docs.windsurf.com/windsurf/cascade/memories",
            "https://docs.windsurf.com/windsurf/cascade/skills",
        ),
    ),
    "kiro": Host(
        "kiro",
        "Kiro",
        "file",
        ".kiro/steering/autograph.md",
        ".kiro/skills/autograph",
        user_rules=lambda env: _home(env) / ".kiro" / "steering" / "autograph.md",
        user_rules_kind="file",
        user_skill=lambda env: _home(env) / ".kiro" / "skills" / "autograph",
        frontmatter="---\ninclusion: always\n---\n",
        sources=("https://kiro.dev/docs/steering/", "https://kiro.dev/docs/skills/"),
    ),
    "cline": Host(
        "cline",
        "Cline",
        "file",
        ".clinerules/autograph.md",
        ".cline/skills/autograph",
        user_rules=lambda env: _home(env) / "Documents" / "Cline" / "Rules" / "autograph.md",
        user_rules_kind="file",
        user_skill=lambda env: _home(env) / ".cline" / "skills" / "autograph",
        sources=(
            "https://docs.cline.bot/customization/cline-rules",
            "https://docs.cline.bot/customization/skills",
            "https://docs.cline.bot/getting-started/config",
        ),
    ),
}

RULE_HOSTS = tuple(HOSTS)  # the hosts this table holds, in init.py's order (claude is wiring's own)


def rules_text(
    skill: str,
    store_ref: str | None,
    python: str = "python3",
    *,
    reader: bool = False,
    check: bool = True,
) -> str:
    """The rules between and including the markers (``\\n`` line ends).
    ``skill`` and ``store_ref`` are the skill folder and the store as the
    agent should name them; ``python`` the interpreter the commands run.
    A writer is told to look a subject up before writing (``card.py
    remember``), the caps, and, with ``check``, to run ``check.py`` after
    each index write; a ``reader`` that the store is read-only for it."""
    if store_ref:
        index = f"{store_ref}/MEMORY.md" if store_ref != "." else "MEMORY.md"
        where = (
            f"Long-term memory lives in `{store_ref}/`: one fact per note, and `{index}`, the index, "
            f"holds one pointer line per note."
        )
    else:
        index = "MEMORY.md"
        where = (
            "Long-term memory lives in a project's memory store (its `memory/` folder): one fact per note, "
            "and `MEMORY.md` in it, the index, holds one pointer line per note."
        )
    lines = [BEGIN, "## Memory (autograph)", "", where]
    if reader:
        lines += [
            "Another agent writes this store: for you it is read-only.",
            f'How it is kept: `{skill}/SKILL.md`, section "Memory".',
            "",
            f"- At the start of a task, read `{index}`; open a note only when its hook matters to the task.",
            "- Never write, edit, move or delete anything in the store (the index included), and run no",
            "  autograph command that writes there.",
            "- When you learn a fact worth keeping, or find one there wrong, tell the user instead.",
            END,
        ]
        return "\n".join(lines)
    lines += [
        f'How to keep it: `{skill}/SKILL.md`, section "Memory"; details in `{skill}/references/memory.md`.',
        "",
        f"- At the start of a task, read `{index}`; open a note only when its hook matters to the task.",
        "- Before writing a note, look for one that already holds the fact and update it instead:",
        f'  `{python} {skill}/scripts/card.py remember TYPE "Name" field=value` looks it up and writes once.',
        f"- The index has caps: from {SOFT} compact it to {TARGET}; it never goes past {HARD}",
        "  (the host loads no more).",
    ]
    if check:
        lines += [
            f"- After every change to the index, run `{python} {skill}/scripts/check.py {index}`; on exit code 1",
            "  the index is over its cap (the host would drop the rest): compact it before anything else.",
        ]
    lines += ["- Never write secrets (keys, tokens, passwords) into memory; note only where they are kept.", END]
    return "\n".join(lines)
