"""link_cleanup.py: links that resolve nowhere leave ``## Related`` sections, nothing else.

What is checked, on small vaults built here, on a property (hypothesis) and
on copies of every corpus:

* a list item that is only a broken link goes whole; elsewhere in the
  section a broken link becomes its visible text;
* a link that resolves (to a note, to an attachment, with a missing
  ``#heading``, ``[[#heading]]``, ``./relative``) and every embed stay;
* nothing inside code is a link, and no byte outside a Related section
  changes; templates, ``ignore_folders``, unparsable frontmatter and
  non-UTF-8 notes are never written;
* the dry run writes nothing, ``--apply`` writes through the journal
  (``undo.py`` takes it back), and a second run plans nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from autograph.graph import cleanup
from autograph.read.index import note_links
from autograph.read.note import Note
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CLEANUP = SCRIPTS / "link_cleanup.py"
UNDO = SCRIPTS / "undo.py"


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".graph", ".trash")
    }


NOTE = """\
---
type: person
related: "[[Gone in frontmatter]]"
---
Body [[Gone]] here.

## Related
- [[Alex]]
- [[Gone]]
- [[Gone2|Shown]] and [[Alex]]
- ![[gone.png]]
- [x](missing%20note.md)
- [[photo.png]]
- [[Alex#No such heading]]
- [[#Related]]
- [ ] [[Gone5]]

```
- [[InCode]]
```
1. [[Gone3#Head]]
   continued
- `[[in code span]]` %% [[in comment]] %%

## Other
- [[Gone4]]
"""

CLEANED = """\
---
type: person
related: "[[Gone in frontmatter]]"
---
Body [[Gone]] here.

## Related
- [[Alex]]
- Shown and [[Alex]]
- ![[gone.png]]
- [[photo.png]]
- [[Alex#No such heading]]
- [[#Related]]
- [ ] Gone5

```
- [[InCode]]
```
1. Gone3 > Head
   continued
- `[[in code span]]` %% [[in comment]] %%

## Other
- [[Gone4]]
"""


@pytest.fixture
def vault(make_vault):
    return make_vault({"note.md": NOTE, "people/Alex.md": "# Alex\n", "photo.png": b""})


def test_broken_links_leave_related_only_and_the_rest_is_reported(vault):
    plan = cleanup.plan(Vault.open(vault), load_schema(vault))
    assert len(plan.edits) == 1
    assert plan.edits[0].after.decode() == CLEANED
    assert [(r["line"], r["action"]) for r in plan.removed] == [
        (9, "item"),
        (10, "text"),
        (12, "item"),
        (16, "text"),
        (21, "text"),
    ]
    reasons = Counter(r["reason"] for r in plan.reported)
    assert reasons == {"in frontmatter": 1, "outside a Related section": 2, "an embed (never removed)": 1}


def test_dry_run_writes_nothing_apply_is_journaled_and_undone(vault):
    before = snapshot(vault)
    proc = run(CLEANUP, vault, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["written"] == [] and report["run"] is None and len(report["removed"]) == 5
    assert snapshot(vault) == before

    proc = run(CLEANUP, vault, "--apply", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["written"] == ["note.md"] and report["run"]
    assert (vault / "note.md").read_text(encoding="utf-8") == CLEANED

    again = json.loads(run(CLEANUP, vault, "--apply", "--json").stdout)
    assert again["removed"] == [] and again["edits"] == [] and again["run"] is None

    proc = run(UNDO, "undo", report["run"], vault, "--apply")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert snapshot(vault) == before


def test_human_report_and_diff(vault):
    proc = run(CLEANUP, vault, "--diff")
    assert proc.returncode == 0, proc.stderr
    assert "note.md:9  [[Gone]]  list item removed" in proc.stdout
    assert "-> 'Shown'" in proc.stdout
    assert "-- [[Gone]]" in proc.stdout  # the diff line removing the item
    assert "run with --apply" in proc.stdout


def test_crlf_and_bom_stay(make_vault):
    text = "\ufeff---\r\na: 1\r\n---\r\n## Related\r\n- [[Gone]]\r\n- [[Here]]\r\n\r\nend\r\n"
    root = make_vault({"n.md": text.encode("utf-8"), "Here.md": ""})
    plan = cleanup.plan(Vault.open(root))
    assert plan.edits[0].after == "\ufeff---\r\na: 1\r\n---\r\n## Related\r\n- [[Here]]\r\n\r\nend\r\n".encode()


def test_item_with_a_nested_list_or_a_continuation_is_prose(make_vault):
    text = "## Related\n- [[Gone]]\n  - [[Here]]\n- [[Gone]]\nlazy line\n- [[Gone]]"
    root = make_vault({"n.md": text, "Here.md": ""})
    after = cleanup.plan(Vault.open(root)).edits[0].after.decode()
    assert after == "## Related\n- Gone\n  - [[Here]]\n- Gone\nlazy line\n"


def test_section_ends_at_a_heading_of_the_same_or_higher_level(make_vault):
    text = "# Top\n### Related\n- [[Gone]]\n#### Sub\n- [[Gone]]\n## Next\n- [[Gone]]\nRelated\n---\n- [[Gone]]\n"
    root = make_vault({"n.md": text})
    after = cleanup.plan(Vault.open(root)).edits[0].after.decode()
    assert after == "# Top\n### Related\n#### Sub\n## Next\n- [[Gone]]\nRelated\n---\n- [[Gone]]\n"  # setext: not one


def test_a_related_heading_inside_code_is_no_heading(make_vault):
    text = "```\n## Related\n```\n- [[Gone]]\n"
    root = make_vault({"n.md": text})
    assert cleanup.plan(Vault.open(root)).edits == []


def test_templates_ignored_folders_bad_frontmatter_and_non_utf8_are_never_written(make_vault):
    related = "## Related\n- [[Gone]]\n"
    root = make_vault(
        {
            "Templates/t.md": related,
            "Archive/a.md": related,
            "bad.md": "---\na: [unclosed\n---\n" + related,
            "latin.md": ("caf\xe9\n" + related).encode("latin-1"),
            "schema.json": '{"ignore_folders": ["Archive"]}',
            ".obsidian/templates.json": '{"folder": "Templates"}',
        }
    )
    plan = cleanup.plan(Vault.open(root), load_schema(root))
    assert plan.edits == [] and plan.removed == []
    assert {row["path"] for row in plan.skipped} == {"Templates/t.md", "Archive/a.md", "bad.md"}


# ---------------------------------------------------------------------------
# The rule as a property

EXISTING = ["Alex", "people/Bo", "photo.png"]
NAMES = ["Alex", "Bo", "people/Bo", "photo.png", "Gone", "Lost", "gone.pdf"]


@st.composite
def related_notes(draw):
    def link():
        name = draw(st.sampled_from(NAMES))
        form = draw(st.sampled_from(["[[{}]]", "[[{}|shown]]", "![[{}]]", "[[{}#part]]", "[t]({}.md)"]))
        return form.format(name)

    def line():
        kind = draw(st.sampled_from(["item", "prose", "code", "blank", "task", "nested"]))
        if kind == "item":
            return f"- {link()}"
        if kind == "prose":
            return f"see {link()} and {link()}."
        if kind == "code":
            return f"`{link()}`"
        if kind == "task":
            return f"- [ ] {link()}"
        if kind == "nested":
            return f"  - {link()}"
        return ""

    before = [f"intro {link()}", ""]
    section = ["## Related", *[line() for _ in range(draw(st.integers(0, 8)))]]
    after = ["", "## After", f"- {link()}"] if draw(st.booleans()) else []
    return "\n".join(before + section + after) + draw(st.sampled_from(["", "\n"]))


def _outside(text: str) -> str:
    """The text outside Related sections."""
    spans = cleanup.related_spans(text)
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        last = end
    return "".join(out) + text[last:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=related_notes())
def test_cleanup_rule_holds_for_any_related_section(text):
    from autograph.read.links import Resolver

    resolver = Resolver([f"{name}.md" if "." not in name else name for name in EXISTING])
    note = Note.from_bytes("n.md", text.encode())
    new, removed, _ = cleanup.plan_note(note, resolver)
    if new is None:
        new = text
    after = Note.from_bytes("n.md", new.encode())

    def kept(n):
        return Counter(
            (link.target, link.fragment, link.alias, link.embed)
            for link in note_links(n)
            if link.embed or resolver.resolve(link.target, "n.md").path is not None
        )

    assert kept(after) == kept(note)  # no resolving link and no embed is removed
    assert _outside(new) == _outside(text)  # no byte outside Related changes
    spans = cleanup.related_spans(new)
    left = [
        link
        for link in note_links(after)
        if not link.embed
        and resolver.resolve(link.target, "n.md").path is None
        and any(s <= link.start < e for s, e in spans)
    ]
    assert left == []  # nothing broken stays in Related
    assert cleanup.plan_note(after, resolver)[0] is None  # a second run changes nothing


# The corpora: tests/test_moc.py runs link_cleanup.py and moc.py on copies of every corpus.
