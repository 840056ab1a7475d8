"""moc.py generate: Maps of Content that stay within the caps and never overwrite people.

Small vaults built here check the layout (status order, title order, the
shortest link that resolves to each card, descriptions), the split into
pages within the caps, the mark of generated notes, idempotence (a second
run writes nothing), hand-written notes (never written over), and the trash
of pages no group needs.  The last test runs link_cleanup.py and moc.py on
copies of every corpus.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.graph import cleanup, moc
from autograph.graph.health import health_report
from autograph.read import generated
from autograph.read.index import NoteIndex, note_links
from autograph.read.links import scan
from autograph.read.note import Note
from autograph.read.size import measure
from autograph.read.vault import Vault
from autograph.schema.model import SchemaError, load_schema
from autograph.write.derived import save_index
from conftest import CORPORA, CORPUS_NAMES, SCRIPTS, require
from hypothesis import given, settings
from hypothesis import strategies as st

MOC = SCRIPTS / "moc.py"
CLEANUP = SCRIPTS / "link_cleanup.py"


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120)


def generate(root: Path, *extra) -> dict:
    proc = run(MOC, "generate", root, "--json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    report["code"] = proc.returncode
    return report


def card(kind: str, domain: str | None, status: str | None = None, description: str | None = None, **more) -> str:
    lines = ["---", f"type: {kind}"]
    lines += [f"domain: {domain}"] if domain else []
    lines += [f"status: {status}"] if status else []
    lines += [f"description: {json.dumps(description)}"] if description else []
    lines += [f"{k}: {json.dumps(v)}" for k, v in more.items()]
    return "\n".join(lines + ["---", "", "Body.", ""])


SCHEMA = json.dumps({"status_order": ["active", "planned", "done"]})


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".graph", ".trash")
    }


def entries_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_layout_status_order_title_order_links_and_descriptions(make_vault):
    root = make_vault(
        {
            "schema.json": SCHEMA,
            "people/Zoe.md": card("person", "work", "active", "Runs the team"),
            "people/adam.md": card("person", "work", "active", "Line one\nline two"),
            "projects/Apollo.md": card("project", "work", "done"),
            "projects/Beta.md": card("project", "work", "weird"),
            "projects/Gamma.md": card("project", "work", None, title="The Gamma"),
            "projects/Plan.md": card("project", "work", "planned"),
            "people/Dup.md": card("person", "work", "active"),
            "other/Dup.md": card("person", "home"),
            "odd/Hash#tag.md": card("person", "home"),
            "loose.md": card("note", None),
        }
    )
    report = generate(root)
    assert report["code"] == 0 and report["ungrouped"] == 1
    assert sorted(report["written"]) == ["MOC/home MOC.md", "MOC/work MOC.md"]
    text = (root / "MOC/work MOC.md").read_text(encoding="utf-8")
    assert text.startswith("---\ngenerated_by: autograph\ntype: moc\ndescription: ")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## active", "## planned", "## done", "## weird", "## (no status)"]
    assert entries_of(text) == [
        "- [[adam]] — Line one line two",
        "- [[people/Dup|Dup]]",
        "- [[Zoe]] — Runs the team",
        "- [[Plan]]",
        "- [[Apollo]]",
        "- [[Beta]]",
        "- [[Gamma|The Gamma]]",
    ]
    home = (root / "MOC/home MOC.md").read_text(encoding="utf-8")
    assert entries_of(home) == ["- [[other/Dup|Dup]]", "- [Hash#tag](odd/Hash%23tag.md)"]
    # every entry resolves to its card in the vault as it is now
    vault = Vault.open(root)
    for path in ("MOC/work MOC.md", "MOC/home MOC.md"):
        links = [link for link in note_links(vault.note(path)) if link.kind != "property"]
        assert all(vault.resolver.resolve(link.target, path).path for link in links)
    targets = {
        vault.resolver.resolve(link.target, "MOC/home MOC.md").path
        for link in note_links(vault.note("MOC/home MOC.md"))
    }
    assert targets == {"other/Dup.md", "odd/Hash#tag.md"}


def test_second_run_writes_nothing_and_a_change_rewrites_only_its_group(make_vault):
    root = make_vault(
        {
            "schema.json": SCHEMA,
            "a/One.md": card("person", "work", "active", "first"),
            "b/Two.md": card("person", "home", "active", "second"),
        }
    )
    first = generate(root)
    assert len(first["written"]) == 2 and first["run"]
    pages = snapshot(root)
    again = generate(root)
    assert again["edits"] == [] and again["written"] == [] and again["run"] is None
    assert all(page["change"] == "unchanged" for page in again["pages"])
    assert snapshot(root) == pages
    (root / "a/One.md").write_text(card("person", "work", "done", "first"), encoding="utf-8")
    third = generate(root)
    assert third["written"] == ["MOC/work MOC.md"]


def test_dry_run_writes_nothing(make_vault):
    root = make_vault({"a/One.md": card("person", "work")})
    before = snapshot(root)
    report = generate(root, "--dry-run")
    assert [e["path"] for e in report["edits"]] == ["MOC/work MOC.md"] and report["written"] == []
    assert snapshot(root) == before and not (root / ".graph").exists()


def _many(count: int, description: str) -> dict[str, str]:
    statuses = ["active", "planned", "done", None]
    return {
        f"cards/Card {n:04d}.md": card("person", "big", statuses[n % 4], f"{description} {n}") for n in range(count)
    }


@pytest.mark.parametrize(
    ("count", "description", "schema"),
    [
        (650, "short", SCHEMA),  # the line cap splits
        (400, "x" * 190, SCHEMA),  # the byte cap splits
        (300, "word " * 40, json.dumps({"moc": {"caps": {"lines": 40, "bytes": 3000}}})),  # caps from the schema
    ],
)
def test_no_page_exceeds_the_caps_and_every_card_is_listed_once(make_vault, count, description, schema):
    root = make_vault({"schema.json": schema, **_many(count, description)})
    report = generate(root)
    caps = load_schema(root).moc
    pages = report["pages"]
    assert len(pages) > 2 and report["written"] == [page["path"] for page in pages]
    assert [page["part"] for page in pages] == list(range(1, len(pages) + 1))
    vault = Vault.open(root)
    listed = []
    reach: dict[str, set[str]] = {}
    for page in pages:
        data = (root / page["path"]).read_bytes()
        size = measure(data)
        assert size.lines <= caps["lines"] and size.bytes <= caps["bytes"], page
        note = vault.note(page["path"])
        assert generated.is_generated(note.properties)
        targets = [vault.resolver.resolve(link.target, page["path"]).path for link in note_links(note)]
        assert None not in targets
        listed += [t for t in targets if t.startswith("cards/")]
        reach[page["path"]] = {t for t in targets if t.startswith("MOC/")}
        if len(pages) <= moc.NAV_ALL:  # each part links every part
            assert reach[page["path"]] | {page["path"]} == {p["path"] for p in pages}
    seen, todo = set(), [pages[-1]["path"]]
    while todo:  # from any part, every part can be reached
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += reach[path]
    assert seen == set(reach)
    assert sorted(listed) == sorted(p for p in vault.notes if p.startswith("cards/"))
    assert generate(root)["written"] == []


def test_a_hand_written_note_with_the_name_is_never_written_over(make_vault):
    mine = "# work MOC\n\nMy own map.\n"
    root = make_vault(
        {
            "MOC/work MOC.md": mine,
            "MOC/Home MOC.md": "---\ngenerated_by: someone else\ntype: moc\n---\n",
            "a/One.md": card("person", "work"),
            "b/Two.md": card("person", "home"),
            "c/Three.md": card("person", "play"),
        }
    )
    report = generate(root)
    assert report["code"] == 1
    assert sorted((row["group"], row["path"]) for row in report["blocked"]) == [
        ("home", "MOC/Home MOC.md"),
        ("work", "MOC/work MOC.md"),
    ]
    assert report["written"] == ["MOC/play MOC.md"]
    assert (root / "MOC/work MOC.md").read_text(encoding="utf-8") == mine
    assert (root / "MOC/Home MOC.md").read_bytes() == b"---\ngenerated_by: someone else\ntype: moc\n---\n"
    assert generate(root)["written"] == []


def test_a_generated_page_edited_by_hand_is_regenerated_and_unmarked_is_kept(make_vault):
    root = make_vault({"a/One.md": card("person", "work")})
    generate(root)
    page = root / "MOC/work MOC.md"
    fresh = page.read_bytes()
    page.write_bytes(fresh + b"\nan edit\n")
    assert generate(root)["written"] == ["MOC/work MOC.md"] and page.read_bytes() == fresh
    taken = fresh.replace(b"generated_by: autograph\n", b"")
    page.write_bytes(taken)
    report = generate(root)
    assert report["blocked"] and page.read_bytes() == taken


def test_pages_no_group_needs_go_to_the_trash_and_undo_brings_them_back(make_vault):
    root = make_vault({"schema.json": SCHEMA, **_many(650, "short")})
    first = generate(root)
    assert len(first["pages"]) >= 3
    for path in (root / "cards").iterdir():
        if int(path.stem.split()[-1]) >= 10:
            path.unlink()
    before = snapshot(root)
    report = generate(root)
    assert len(report["pages"]) == 1
    assert sorted(report["trashed"]) == sorted(p["path"] for p in first["pages"][1:])
    for path in report["trashed"]:
        assert not (root / path).exists()
    assert any((root / ".trash").rglob("*MOC 2.md"))
    proc = run(SCRIPTS / "undo.py", "undo", report["run"], root, "--apply")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert snapshot(root) == before


def test_group_by_type_uses_type_aliases_and_a_folder(make_vault):
    schema = {
        "node_types": {"person": {"status": []}, "moc": {"folder": "Maps", "status": []}},
        "type_aliases": {"contact": "person"},
        "moc": {"group_by": "type", "folder": "Index/Maps"},
    }
    root = make_vault(
        {
            "schema.json": json.dumps(schema),
            "a/One.md": card("person", None),
            "a/Two.md": card("contact", None),
            "a/Three.md": "no frontmatter\n",
        }
    )
    report = generate(root)
    assert report["written"] == ["Index/Maps/person MOC.md"] and report["ungrouped"] == 1
    assert len(entries_of((root / "Index/Maps/person MOC.md").read_text(encoding="utf-8"))) == 2
    # without moc.folder, the moc type's folder
    del schema["moc"]["folder"]
    (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    report = generate(root)
    assert [p["path"] for p in report["pages"]] == ["Maps/person MOC.md"]
    # the pages of the earlier folder are no longer moc.py's own (F9): left, and reported
    assert report["trashed"] == [] and report["not_owned"] == ["Index/Maps/person MOC.md"]


def test_domain_inference_gives_the_domain(make_vault):
    root = make_vault(
        {
            "schema.json": json.dumps({"domain_inference": {"people": "work"}}),
            "people/One.md": card("person", None),
            "people/Two.md": card("person", "private"),
        }
    )
    report = generate(root)
    assert sorted(p["path"] for p in report["pages"]) == ["MOC/private MOC.md", "MOC/work MOC.md"]


def test_a_card_with_a_list_of_domains_is_in_each_map(make_vault):
    root = make_vault(
        {
            "Both.md": "---\ntype: person\ndomain: [work, family]\n---\n",
            "Twice.md": "---\ntype: person\ndomain:\n  - work\n  - Work\n  - 3\n---\n",
            "Empty.md": "---\ntype: person\ndomain: []\n---\n",
        }
    )
    report = generate(root)
    assert sorted(p["path"] for p in report["pages"]) == ["MOC/family MOC.md", "MOC/work MOC.md"]
    work = (root / "MOC/work MOC.md").read_text()
    assert entries_of(work) == ["- [[Both]]", "- [[Twice]]"]  # listed once, though named twice
    assert entries_of((root / "MOC/family MOC.md").read_text()) == ["- [[Both]]"]
    assert report["ungrouped"] == 1  # Empty


def test_generated_mocs_are_hubs_never_orphans(make_vault):
    root = make_vault({"a/One.md": card("person", "work"), "a/Two.md": card("person", "work") + "[[One]]\n"})
    generate(root)
    vault = Vault.open(root)
    report = health_report(vault, load_schema(root), NoteIndex(vault))
    assert "MOC/work MOC.md" in report["hubs"]
    assert "MOC/work MOC.md" not in report["orphans"]


def test_a_moc_folder_that_is_never_written_is_refused(make_vault):
    root = make_vault(
        {"schema.json": json.dumps({"ignore_folders": ["Archive"], "moc": {"folder": "Archive/MOC"}}), "a.md": "x"}
    )
    proc = run(MOC, "generate", root)
    assert proc.returncode == 2 and "ignore_folders" not in proc.stdout
    assert "moc.folder" in proc.stderr and not (root / "Archive").exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"group_by": "tag"}, '$.moc.group_by: expected "domain" or "type"'),
        ({"folder": "../x"}, "$.moc.folder: '../x' leaves the vault"),
        ({"caps": {"lines": 5}}, "$.moc.caps.lines: expected a whole number of lines, at least 20"),
        ({"pages": 3}, "$.moc.pages: unknown key"),
    ],
)
def test_schema_moc_key_is_checked(tmp_path, value, message):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"moc": value}), encoding="utf-8")
    with pytest.raises(SchemaError, match=r".*" + message.replace("$", r"\$").replace("(", r"\(")[:40]):
        load_schema(None, path)


def test_schema_moc_defaults_follow_the_index_caps(tmp_path):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"index": {"hard": {"lines": 120, "bytes": 9000}}}), encoding="utf-8")
    assert load_schema(None, path).moc == {"group_by": "domain", "folder": "MOC", "lines": 120, "bytes": 9000}


# ---------------------------------------------------------------------------
# Every corpus


def link_tree(source: Path, dest: Path) -> Path:
    """A copy of a corpus whose files are hard links to the originals: fast
    for a corpus of thousands of files, and safe, as the store never writes
    a file with several hard links nor one without a write bit (the corpus
    files have none).  Falls back to copying across file systems.  Folders
    are new, so they are made writable."""

    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, symlinks=True, copy_function=link, ignore=shutil.ignore_patterns(".graph"))
    for folder, dirs, _ in os.walk(dest):
        for name in dirs:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    dest.chmod(dest.stat().st_mode | stat.S_IWUSR)
    return dest


def own_copy(root: Path, path: str) -> None:
    """Replace the hard link ``path`` with a writable copy of its own."""
    target = root / path
    data = target.read_bytes()
    target.unlink()
    target.write_bytes(data)


def _outside(text: str) -> str:
    out, last = [], 0
    for start, end in cleanup.related_spans(text):
        out.append(text[last:start])
        last = end
    return "".join(out) + text[last:]


def test_cleanup_and_moc_on_copies_of_every_corpus(tmp_path):
    figures = {}
    for name in CORPUS_NAMES:
        root = link_tree(require(CORPORA / name), tmp_path / name)
        tops = sorted({p.split("/")[0] for p in Vault.open(root).notes if "/" in p})
        (root / "schema.json").write_text(json.dumps({"domain_inference": {t: t for t in tops}}), encoding="utf-8")
        vault = Vault.open(root)
        schema = load_schema(root)
        index = NoteIndex(vault)  # its cache in the copy's .graph/ serves the runs below
        plan = cleanup.plan(vault, schema, index)
        save_index(index)
        for edit in plan.edits:
            before, after = edit.before.decode("utf-8"), edit.after.decode("utf-8")
            assert _outside(after) == _outside(before), edit.path  # no byte outside Related changes

            def kept(text, path=edit.path, vault=vault):
                note = Note.from_bytes(path, text.encode("utf-8"))
                return sorted(
                    (link.target, link.fragment, str(link.alias), link.embed)
                    for link in note_links(note)
                    if link.embed or vault.resolver.resolve(link.target, path).path is not None
                )

            assert kept(after) == kept(before), edit.path  # no resolving link, no embed removed
            own_copy(root, edit.path)
        if plan.edits:
            proc = run(CLEANUP, root, "--apply", "--json", "--quiet")
            assert proc.returncode == 0, proc.stderr
            assert sorted(json.loads(proc.stdout)["written"]) == sorted(e.path for e in plan.edits)
            assert cleanup.plan(Vault.open(root), schema).edits == []

        first = generate(root, "--quiet")
        assert first["code"] == 0 and first["conflicts"] == [] and first["failed"] == []
        caps = schema.moc
        after = Vault.open(root)
        listed = []
        for page in first["pages"]:
            size = measure((root / page["path"]).read_bytes())
            assert size.lines <= caps["lines"] and size.bytes <= caps["bytes"], page
            for line in entries_of(after.note(page["path"]).text):
                link = scan(line)[0]  # the entry's own link (a description may hold more)
                listed.append(after.resolver.resolve(link.target, page["path"]).path)
        cards = set(after.cards(schema)) - {page["path"] for page in first["pages"]}
        assert None not in listed and len(listed) == len(set(listed)) and set(listed) <= cards
        assert len(listed) + first["ungrouped"] == len(cards), name
        second = generate(root, "--quiet")
        assert second["edits"] == [] and second["written"] == [], name
        figures[name] = {
            "notes": len(vault.notes),
            "cleanup_notes": len(plan.edits),
            "cleanup_removed": len(plan.removed),
            "broken_left": len(plan.reported),
            "moc_groups": len({p["group"] for p in first["pages"]}),
            "moc_pages": len(first["pages"]),
            "moc_max_lines": max((p["lines"] for p in first["pages"]), default=0),
            "moc_max_bytes": max((p["bytes"] for p in first["pages"]), default=0),
        }
    print("corpus figures:", json.dumps(figures))
    assert figures["dendron-site"]["cleanup_removed"] > 0  # [[label|target]] links Obsidian cannot resolve
    assert figures["obsidian-hub"]["moc_pages"] > figures["obsidian-hub"]["moc_groups"]  # split into pages


def test_generated_paths_finds_the_generated_pages_only(make_vault):
    root = make_vault(
        {
            "schema.json": SCHEMA,
            **_many(650, "short"),
            "MOC/mine MOC.md": "# mine\n",
            "MOC/fake MOC.md": "---\ngenerated_by: autograph\ntype: note\n---\n",
            "elsewhere/x MOC.md": "---\ngenerated_by: autograph\ntype: moc\n---\n",
        }
    )
    pages = [page["path"] for page in generate(root)["pages"]]
    assert len(pages) > 1
    assert generated.generated_paths(Vault.open(root), load_schema(root)) == set(pages)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.sampled_from(["active", "done", None]), st.integers(1, 400)), min_size=1, max_size=120),
    lines=st.integers(20, 60),
    nbytes=st.integers(2000, 6000),
    name=st.text(alphabet="ab cé/", min_size=1, max_size=40),
)
def test_pages_hold_every_entry_in_order_within_any_caps(sizes, lines, nbytes, name):
    from autograph.read.links import Resolver

    entries = sorted(
        ((status, f"- [[Card {n}]] — " + "x" * size) for n, (status, size) in enumerate(sizes)),
        key=lambda e: {"active": 0, "done": 1, None: 2}[e[0]],
    )
    first = "MOC/" + moc.file_stem(name) + ".md"
    caps = {"lines": lines, "bytes": nbytes}
    pages = moc._paginate(name, "domain", entries, first, caps, Resolver([first]))
    for page in pages:
        size = measure(("\n".join(page) + "\n").encode("utf-8"))
        assert size.lines <= lines and size.bytes <= nbytes
    assert [line for page in pages for line in page if line.startswith("- [[Card")] == [line for _, line in entries]


def test_generated_mocs_are_not_cards_and_do_not_rescue_orphans(make_vault):
    root = make_vault(
        {
            "schema.json": json.dumps({"node_types": {"person": {"status": ["active", "superseded"]}}}),
            "a/One.md": card("person", "work", "active", "one"),
            "a/Two.md": card("person", "work", "active", "two") + "[[One]]\n",
        }
    )
    vault = Vault.open(root)
    before = health_report(vault, load_schema(root), NoteIndex(vault))
    generate(root)
    vault, schema = Vault.open(root), load_schema(root)
    assert "MOC/work MOC.md" in vault.notes and "MOC/work MOC.md" not in vault.cards(schema)
    after = health_report(vault, schema, NoteIndex(vault))
    assert after["orphans"] == before["orphans"] == ["a/Two.md"]
    from autograph.schema import compliance

    assert [f.path for f in compliance.check(vault, schema).findings if f.path.startswith("MOC/")] == []


def test_a_marked_note_outside_the_map_pages_is_never_trashed(make_vault):
    """F9: only pages moc.py names in moc.folder are its own; a person's
    copy of a map elsewhere (or a page-like name outside the folder, or an
    odd name inside it) stays, with their text."""
    root = make_vault({"a/One.md": card("person", "work")})
    generate(root)
    page = (root / "MOC/work MOC.md").read_text(encoding="utf-8")
    mine = {
        "ideas/My work notes.md": page + "- my own notes\n",
        "ideas/old MOC.md": page,
        "projects/Handmade.md": "---\ngenerated_by: autograph\ntype: moc\n---\nPrecious\n",
        "MOC/sub/gone MOC.md": page,
        "MOC/my notes.md": page,
    }
    for path, text in mine.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    report = generate(root)
    assert report["trashed"] == [] and report["edits"] == []
    assert sorted(report["not_owned"]) == sorted(mine)
    assert all((root / path).read_text(encoding="utf-8") == text for path, text in mine.items())
    (root / "MOC/gone MOC.md").write_text(page, encoding="utf-8")  # its own name for a group no card has
    (root / "MOC/kept MOC.md").write_text(page + "- my own line\n", encoding="utf-8")  # and a person wrote in it
    report = generate(root)
    assert report["trashed"] == ["MOC/gone MOC.md"] and "MOC/kept MOC.md" in report["not_owned"]
    assert (root / "MOC/kept MOC.md").read_text(encoding="utf-8") == page + "- my own line\n"


def test_groups_that_differ_only_in_case_or_normalisation_are_one_map(make_vault):
    """F4: a card typed ``Person`` (or a decomposed ``Café``) joins the
    ``person`` map; it does not take the map's file from under its links."""
    import unicodedata

    schema = json.dumps({"moc": {"group_by": "type", "folder": "MOC"}})
    root = make_vault({"schema.json": schema, **{f"p/P{n}.md": card("person", None) for n in range(3)}})
    root.joinpath("p/C1.md").write_text(card(unicodedata.normalize("NFC", "Café"), None), encoding="utf-8")
    generate(root)
    root.joinpath("inbox").mkdir()
    root.joinpath("inbox/New.md").write_text(card("Person", None), encoding="utf-8")
    root.joinpath("inbox/C2.md").write_text(card(unicodedata.normalize("NFD", "CAFÉ"), None), encoding="utf-8")
    report = generate(root)
    assert sorted(page["path"] for page in report["pages"]) == [
        unicodedata.normalize("NFC", "MOC/Café MOC.md"),
        "MOC/person MOC.md",
    ]
    assert len(entries_of((root / "MOC/person MOC.md").read_text(encoding="utf-8"))) == 4


def test_a_group_keeps_its_page_when_a_newcomer_gets_the_same_file_name(make_vault):
    """F4: ``a:b`` and ``a/b`` both make the file name ``a-b MOC``; the group
    whose page it is keeps it, the newcomer (sorted first) gets `` (2)``."""
    schema = json.dumps({"moc": {"group_by": "domain", "folder": "MOC"}})
    root = make_vault({"schema.json": schema, "x/One.md": card("person", '"a:b"')})
    generate(root)
    root.joinpath("x/Two.md").write_text(card("person", '"a/b"'), encoding="utf-8")
    report = generate(root)
    pages = {page["group"]: page["path"] for page in report["pages"]}
    assert pages == {"a:b": "MOC/a-b MOC.md", "a/b": "MOC/a-b MOC (2).md"}
    assert "[[One]]" in (root / "MOC/a-b MOC.md").read_text(encoding="utf-8")


@settings(max_examples=40, deadline=None)
@given(st.text(st.sampled_from("ab #[]|*`<>\\\n\t%$-"), min_size=1, max_size=12))
def test_heading_text_is_one_line_with_no_heading_link_or_tag(value):
    """F5: a status or group name is written into a heading: whatever it
    holds, the heading stays one line, one heading, no link, no tag."""
    if not value.strip():
        return
    text = moc.heading_text(value)
    assert "\n" not in text and "\r" not in text
    line = f"## {text}\n"
    assert scan(line, 0, 1) == [] and scan(f"**{text}**\n", 0, 1) == []
    assert not text.startswith("#") and "#" not in text.replace("\\#", "")


def test_a_status_or_group_with_markup_stays_one_plain_heading(make_vault):
    """F5: ``status: "st\\n## injected"`` gave two headings; type ``[[Home]]``
    gave a link from the map."""
    schema = json.dumps({"moc": {"group_by": "type", "folder": "MOC"}})
    root = make_vault(
        {
            "schema.json": schema,
            "Home.md": "home\n",
            "a/One.md": '---\ntype: "[[Home]]"\nstatus: "st\\n## injected"\n---\n',
        }
    )
    report = generate(root)
    [page] = report["pages"]
    text = (root / page["path"]).read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# \\[\\[Home\\]\\]", "## st \\#\\# injected"]
    vault = Vault.open(root)
    targets = {vault.resolver.resolve(link.target, page["path"]).path for link in note_links(vault.note(page["path"]))}
    assert targets == {"a/One.md"}
