"""relink: the one link rewriter (retarget_text, plan_retarget).

The rule, tested on random link forms: after a rewrite every link that
resolved before resolves to ``mapping[old]`` (or to the same file, for a
file that does not move), and the text outside the links keeps its bytes.
"""

from __future__ import annotations

import posixpath
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "skills" / "autograph" / "scripts"))

from autograph.read.links import Resolver  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.write.changes import Edit  # noqa: E402
from autograph.write.relink import Change, link_settings, link_spans, plan_retarget, retarget_text  # noqa: E402


def outside(text: str) -> list[str]:
    """The text between the links (the bytes a rewrite must keep)."""
    pieces, at = [], 0
    for span in link_spans(text):
        pieces.append(text[at : span.start])
        at = span.end
    pieces.append(text[at:])
    return pieces


def targets(text: str, source: str, resolver: Resolver) -> list[str | None]:
    return [resolver.resolve(span.link.target, source).path for span in link_spans(text)]


# ---------------------------------------------------------------------------
# Examples


FILES = ["a/Old.md", "b/x.md", "c/Other.md", "img.png", "a/src.md"]
TEXT = """\
---
up: "[[Old]]"
list:
  - "[[a/Old#H|al]]"
# [[Old]] in a YAML comment is not a link
---
See [[Old]], ![[Old#^blk]], [[a/Old.md|x]], [t](a/Old.md#H) and [u](<a/Old.md>) `[[Old]]`
| t | [[Old\\|tab]] |
[[./Old]] and [[../a/Old]] [[Other]] [[Missing]]

```
[[Old]] in code
```
"""


def test_every_form_is_kept_and_only_the_path_part_changes():
    resolver = Resolver(FILES)
    text, changes = retarget_text(TEXT, "a/src.md", resolver, {"a/Old.md": "n/New Name.md"})
    assert text == (
        """\
---
up: "[[New Name]]"
list:
  - "[[n/New Name#H|al]]"
# [[Old]] in a YAML comment is not a link
---
See [[New Name]], ![[New Name#^blk]], [[n/New Name.md|x]], [t](n/New%20Name.md#H) and [u](<n/New Name.md>) `[[Old]]`
| t | [[New Name\\|tab]] |
[[../n/New Name]] and [[../n/New Name]] [[Other]] [[Missing]]

```
[[Old]] in code
```
"""
    )
    assert changes[0] == Change("a/src.md", 2, "[[Old]]", "[[New Name]]")
    assert [c.line for c in changes] == [2, 4, 7, 7, 7, 7, 7, 8, 9, 9]


def test_a_link_that_still_resolves_is_left_byte_for_byte():
    resolver = Resolver(FILES)
    text, changes = retarget_text(TEXT, "a/src.md", resolver, {"a/Old.md": "b/Old.md"})
    assert "See [[Old]], ![[Old#^blk]]" in text and 'up: "[[Old]]"' in text  # the bare name still finds it
    assert "[[b/Old.md|x]]" in text and "[[../b/Old]]" in text  # a path stays a path
    assert all("[[Old]]" != c.old for c in changes)


def test_keep_text_gives_the_old_visible_text_as_alias():
    resolver = Resolver(["people/Alex Example.md", "people/A. Example.md", "log.md"])
    text = "Emailed [[A. Example]] today, see [[A. Example#Role]] and [[A. Example|Alex]].\n"
    new, _ = retarget_text(text, "log.md", resolver, {"people/A. Example.md": "people/Alex Example.md"}, True)
    assert new == (
        "Emailed [[Alex Example|A. Example]] today, see [[Alex Example#Role|A. Example > Role]]"
        " and [[Alex Example|Alex]].\n"
    )


def test_a_takeover_of_a_bare_name_is_rewritten_to_keep_its_target():
    # moving a note named "Note" into the linking note's folder would win [[Note]]
    resolver = Resolver(["b/Note.md", "x/Note.md", "x/src.md", "src2.md"])
    text = "[[Note]]\n"
    assert resolver.resolve("Note", "x/src.md").path == "x/Note.md"
    new, _ = retarget_text(text, "src2.md", resolver, {"x/Note.md": "Note.md"})
    # src2's [[Note]] went to b/Note.md (shortest); the root Note.md would take it over
    assert resolver.resolve("Note", "src2.md").path == "b/Note.md"
    assert new == "[[b/Note]]\n"


def test_app_json_settings(tmp_path):
    assert link_settings(tmp_path) == {"format": "shortest", "markdown": False}
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text('{"newLinkFormat": "absolute", "useMarkdownLinks": true}')
    assert link_settings(tmp_path) == {"format": "absolute", "markdown": True}
    resolver = Resolver(["a/N.md", "b/N.md", "s.md"])
    new, _ = retarget_text("[[N]]\n", "s.md", resolver, {"a/N.md": "c/d/N.md"}, settings={"format": "absolute"})
    # a/N.md was the shortest; after the move b/N.md is, so the bare name must become a path
    assert new == "[[c/d/N]]\n"


def test_plan_retarget_folds_a_pending_edit_into_one_edit(tmp_path):
    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    (root / "people" / "A. Example.md").write_text("a\n")
    (root / "people" / "Alex Example.md").write_text("b\n")
    (root / "log.md").write_text("Emailed [[A. Example]] today.\n")
    (root / "other.md").write_text("Nothing here.\n")
    vault = Vault.open(root)
    mapping = {"people/A. Example.md": "people/Alex Example.md"}
    pending = {"people/Alex Example.md": "b\nmerged\nsee [[A. Example]]\n"}
    edits, changes = plan_retarget(vault, mapping, keep_text=True, texts=pending)
    assert [(e.path, e.after) for e in edits] == [
        ("log.md", b"Emailed [[Alex Example|A. Example]] today.\n"),
        ("people/Alex Example.md", b"b\nmerged\nsee [[Alex Example|A. Example]]\n"),
    ]
    assert all(isinstance(e, Edit) and e.before == (root / e.path).read_bytes() for e in edits)
    assert len(changes) == 2


# ---------------------------------------------------------------------------
# The rule, on random vaults, link forms and moves

NAMES = ["Note", "note", "Alpha Beta", "Zeta", "Ünïcode", "x.y"]
FOLDERS = ["", "a", "a/b", "B", "c d"]


@st.composite
def vaults(draw):
    files = draw(
        st.lists(
            st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.sampled_from([".md", ".md", ".png"])),
            min_size=1,
            max_size=8,
            unique_by=lambda t: (t[0] + "/" + t[1] + t[2]).lower(),
        )
    )
    paths = [f"{folder}/{name}{ext}".lstrip("/") for folder, name, ext in files]
    return paths


def link_forms(path: str, source: str) -> list[str]:
    """Ways to write a link to ``path`` (some may resolve elsewhere)."""
    name = path.rsplit("/", 1)[-1]
    stem = name[:-3] if name.endswith(".md") else name
    no_ext = path[:-3] if path.endswith(".md") else path
    forms = [stem, stem.upper(), no_ext, path]
    rel = posixpath.relpath(no_ext, source.rsplit("/", 1)[0] if "/" in source else ".")
    forms.append(rel if rel.startswith("../") else "./" + rel)
    forms.append("../" + no_ext)  # resolves only from a note one folder down
    return forms


@st.composite
def scenarios(draw):
    files = draw(vaults())
    source = draw(st.sampled_from([p for p in files if p.endswith(".md")] or ["src.md"]))
    if source not in files:
        files = [*files, source]
    pieces = []
    for _ in range(draw(st.integers(1, 8))):
        target = draw(st.sampled_from(files))
        form = draw(st.sampled_from(link_forms(target, source)))
        fragment = draw(st.sampled_from(["", "#Heading", "#^blk", "#A#B"]))
        alias = draw(st.sampled_from(["", "|shown", "|Ali as"]))
        style = draw(st.sampled_from(["wiki", "embed", "markdown", "table"]))
        if style == "markdown":
            dest = form.replace(" ", "%20") + (".md" if target.endswith(".md") and not form.endswith(".md") else "")
            link = f"[text]({dest}{fragment})"
        elif style == "embed":
            link = f"![[{form}{fragment}{alias}]]"
        elif style == "table":
            link = f"| [[{form}{fragment}{alias.replace('|', chr(92) + '|')}]] |"
        else:
            link = f"[[{form}{fragment}{alias}]]"
        pieces.append(draw(st.sampled_from(["", "text ", "\n", "- ", "`code` "])) + link)
    text = "".join(pieces) + "\n"
    head = []
    for _ in range(draw(st.integers(0, 3))):
        target = draw(st.sampled_from(files))
        form = draw(st.sampled_from(link_forms(target, source)))
        fragment = draw(st.sampled_from(["", "#Heading"]))
        alias = draw(st.sampled_from(["", "|shown"]))
        quote = draw(st.sampled_from(["'", '"']))
        head.append(f"  - {quote}[[{form}{fragment}{alias}]]{quote}\n")
    if head:
        text = "---\nup:\n" + "".join(head) + "# [[not a link]]\n---\n" + text
    moved = draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True))
    mapping = {}
    taken = {p.lower() for p in files}
    for path in moved:
        folder = draw(st.sampled_from(FOLDERS + ["new", "a/new"]))
        name = draw(st.sampled_from([*NAMES, "Renamed", "Other Name"]))
        ext = ".md" if path.endswith(".md") else ".png"
        new = f"{folder}/{name}{ext}".lstrip("/")
        if new.lower() in taken:
            continue
        taken.add(new.lower())
        mapping[path] = new
    return files, source, text, mapping


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_resolved_link_follows_its_target_and_nothing_else_changes(scenario):
    files, source, text, mapping = scenario
    before = Resolver(files)
    after = Resolver([mapping.get(p, p) for p in files])
    new_source = mapping.get(source, source)
    new_text, changes = retarget_text(text, source, before, mapping)
    assert outside(new_text) == outside(text)
    old_targets = targets(text, source, before)
    new_targets = targets(new_text, new_source, after)
    assert len(old_targets) == len(new_targets)
    for old, new in zip(old_targets, new_targets, strict=True):
        if old is not None:
            assert new == mapping.get(old, old)
    # the link kinds, fragments and aliases are kept
    old_links = [s.link for s in link_spans(text)]
    new_links = [s.link for s in link_spans(new_text)]
    assert [(k.kind, k.fragment, k.alias, k.embed) for k in old_links] == [
        (k.kind, k.fragment, k.alias, k.embed) for k in new_links
    ]
    assert len(changes) == sum(a != b for a, b in zip(outside_links(text), outside_links(new_text), strict=True))
    if text.startswith("---"):  # the frontmatter still reads, with the same number of links
        from autograph.read import frontmatter

        assert len(frontmatter.parse(new_text).properties["up"]) == text.count("  - ")
    # a second pass with nothing moving changes nothing
    assert retarget_text(new_text, new_source, after, {})[0] == new_text


def outside_links(text: str) -> list[str]:
    return [text[s.start : s.end] for s in link_spans(text)]


def test_frontmatter_links_follow_yaml_quoting_and_only_string_values_count():
    resolver = Resolver(["a.md", "s.md"])
    text = (
        "---\nup: [[a]]\nl:\n  - '[[a|x]]'\n  - it's \"[[a]]\" # [[a]] in a comment\n"
        "m: ['[[a]]', \"[[a]]\"]\n---\n[[a]]\n"
    )
    new, changes = retarget_text(text, "s.md", resolver, {"a.md": 'Don\'t say "no".md'})
    assert new == (
        "---\nup: [[a]]\nl:\n  - '[[Don''t say \"no\"|x]]'\n  - it's \"[[Don't say \"no\"]]\" # [[a]] in a comment\n"
        'm: [\'[[Don\'\'t say "no"]]\', "[[Don\'t say \\"no\\"]]"]\n---\n[[Don\'t say "no"]]\n'
    )
    assert [c.line for c in changes] == [4, 5, 6, 6, 8]
    from autograph.read import frontmatter

    assert frontmatter.parse(new).properties["m"] == ['[[Don\'t say "no"]]'] * 2
