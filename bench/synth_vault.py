#!/usr/bin/env python3
"""Generate a synthetic Obsidian vault of N notes for the benchmarks.

The shape follows the real corpora in /work/shared/corpora (obsidian-hub
above all, with touches of dendron-site, tasks-docs and kepano-obsidian):

* note sizes drawn like obsidian-hub's (median ~1.9 KB, mean ~2.2 KB, 95%
  between 1.6 and 2.3 KB, a long tail up to ~300 KB);
* ~96% of notes with frontmatter: ``aliases:`` and ``tags:`` block lists
  (often with an empty ``- `` item, as in obsidian-hub), inline lists,
  dates and datetimes, ``type``/``status``/``description``, quoted
  ``"[[...]]"`` property links; ~0.1% with invalid YAML;
* 3-5 links per note (more in long notes): wikilinks plain, with
  ``|alias``, ``#heading``, ``#^block`` and folder paths; ``![[...]]``
  embeds of notes and images; Markdown links (vault paths with ``%20``,
  ``./`` and ``../``); ~3% broken links and some broken anchors; external
  links;
* headings, ``^block`` ids, inline ``#tags``, ``%% %%`` and ``<!-- -->``
  comments, code fences and inline code with link-like text inside (none
  of which count as links);
* folders of ~100 notes nested ten to a parent (a folder note of type
  ``moc`` in each), ~1 small PNG per 80 notes in ``assets/`` folders, ~1%
  of names non-ASCII (accents, CJK, Greek, Cyrillic, emoji), names with
  spaces, dashes, dots and parentheses, a few daily notes.

The output is deterministic for a given N and --seed.  OUT must not exist or
be an empty folder, and must be outside the repository (use /tmp).

Usage: python3 bench/synth_vault.py N OUT [--seed S]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import struct
import sys
import unicodedata
import zlib
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]

WORDS = """
able about account acid across action active actor adapt added address adjust
after again agent agree ahead alarm album alert align allow alpha amber among
anchor angle annual answer anvil apple april arch archive area argue arrow
aspect asset atlas audio author autumn avenue award backup badge balance
bamboo banner barrel basic basin batch beacon beam bench berry beyond binary
birch blade blank block bloom board bonus border bottle branch brave bridge
brief bright broad bronze budget buffer bundle butter cabin cable cactus
camera canal candle canvas canyon carbon cargo carpet castle cedar cellar
center chain chalk chamber chapter charm chart cherry circle citrus clay
clever cliff clock cloud clover coast cobalt coffee column comet common
copper coral corner cotton crane crisp crystal current cycle dance dawn
debate decade delta desert detail device dialog diary digital direct domain
double draft dragon drift dune eager early earth echo edge editor effort
elder ember empire energy engine entry epoch equal essay event exact exile
export fabric falcon fancy feather fence fiber field filter final flame
flint float flower focus forest format fossil frame fresh frost future
galaxy garden garnet gather gentle giant glacier glass global golden grain
graph gravel green grid ground growth guide habit harbor harvest hazel
header helix herald hidden hollow honey horizon hunter icon idea image index
indigo inner input island ivory jacket jasmine jewel journal jungle kernel
kettle ladder lagoon lantern laser lattice layer leader legend lemon lens
letter level library light linen liquid little lively lotus lunar magnet
maple marble margin marsh meadow medium memory mental merit method metro
middle mineral mirror model modern moment monitor mosaic motion mountain
native nebula needle network neutral noble north notion novel oasis ocean
office olive onion open orange orbit orchid origin outline oxygen paddle
palace panel paper parade patch pattern pebble pencil pepper permit phrase
pilot pixel planet plaza pocket poem polar portal prairie prism profile
prompt proof pulse puzzle quarry quartz quest quiet rabbit radar radio
random rapid raven record reef relay remote rhythm ribbon ridge river
rocket rough route rubber saddle salmon sample satin scale scarlet scheme
scout season second secret select sensor shadow shelf signal silent silver
simple sketch slate smooth socket solar source spark spiral spring square
stable static stone storm story stream studio summit sunset syntax system
table talent target temple tender theory thread timber token topic torch
tower trace track trail tunnel twilight update urban valley vapor vector
velvet venture vertex violet vision vivid voyage walnut water wave willow
window winter wisdom wonder yellow zenith
""".split()

NON_ASCII = [
    "Café Crème",
    "Übersicht",
    "Straße und Weg",
    "Résumé",
    "naïve Bayes",
    "日本語のメモ",
    "読書ノート",
    "Ελληνικά σημειώσεις",
    "Москва заметки",
    "Español — notas",
    "Zürich Reise",
    "🗂️ Hub",
    "📚 Reading List",
    "Crème brûlée",
    "Ærø",
    "São Paulo",
    "Ångström",
    "Ça va",
]
SECTIONS = [
    "Overview",
    "Details",
    "Notes",
    "Related",
    "References",
    "Background",
    "How it works",
    "Usage",
    "Examples",
    "Open questions",
    "Summary",
    "Ideas",
    "Log",
    "Tasks",
    "See also",
    "Sources",
    "Settings",
    "FAQ",
]
TYPES = ["note", "concept", "project", "person", "reference", "meeting", "source"]
STATUSES = ["draft", "active", "done", "archived", "evergreen"]
LANGS = ["markdown", "python", "js", "yaml", "text", "dataview", ""]


def quantile_size(rng: random.Random) -> int:
    """A note size in bytes drawn like obsidian-hub's notes (bands fitted to
    its distribution: 94.6% under 2.3 KB, 4.4% up to ~9 KB, 0.9% up to
    ~20 KB, 0.08% up to ~310 KB)."""
    u = rng.random()
    if u < 0.9463:
        v = rng.random()
        if v < 0.03:
            return rng.randint(150, 1590)
        if v < 0.46:
            return rng.randint(1595, 1710)
        return rng.randint(1800, 2250)
    if u < 0.9463 + 0.0441:
        lo, hi = 2300, 9000
    elif u < 0.9463 + 0.0441 + 0.0088:
        lo, hi = 12000, 20000
    else:
        lo, hi = 60000, 310000
    return int(lo * (hi / lo) ** rng.random())


def png(k: int) -> bytes:
    """A valid 1x1 PNG whose colour depends on k."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    colour = bytes(((k * 37) % 256, (k * 91) % 256, (k * 53) % 256))
    raw = b"\x00" + colour
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


class Vault:
    def __init__(self, n: int, seed: int):
        self.n = n
        self.rng = random.Random(seed)
        rng = self.rng
        self.sentences = [self._sentence() for _ in range(4000)]
        self.used: set[str] = set()
        # folders: a ten-ary tree, folder 0 is the vault root; ~100 notes each
        self.folders: list[str] = []
        self.folder_notes: list[list[int]] = []
        counts = []
        left = n
        while left > 0:
            c = min(left, rng.randint(60, 140))
            counts.append(c)
            left -= c
        for k in range(len(counts)):
            if k == 0:
                self.folders.append("")
            else:
                parent = self.folders[(k - 1) // 10]
                depth = parent.count("/") + 1 if parent else 0
                label = self._title(2) if depth else f"{k:02d} - {self._title(2)}"
                label = self._unique(label)
                self.folders.append(f"{parent}/{label}" if parent else label)
            self.folder_notes.append([])
        # notes: the first note of each folder is its folder note (a moc)
        self.name: list[str] = []
        self.folder: list[int] = []
        self.sections: list[list[str]] = []
        self.block: list[str | None] = []
        self.is_moc: list[bool] = []
        day = dt.date(2012, 1, 1)
        for k, c in enumerate(counts):
            for j in range(c):
                i = len(self.name)
                if j == 0:
                    name = self._unique("Home") if k == 0 else self.folders[k].rsplit("/", 1)[-1]
                    moc = True
                else:
                    moc = False
                    u = rng.random()
                    if u < 0.01:
                        name = rng.choice(NON_ASCII)
                    elif u < 0.05:
                        day += dt.timedelta(days=rng.randint(1, 3))
                        name = day.isoformat()
                    elif u < 0.58:
                        name = self._title(rng.randint(1, 3))
                    elif u < 0.80:
                        name = "-".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
                    elif u < 0.91:
                        name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4)))
                    else:
                        name = rng.choice(
                            [
                                "{a} ({b})",
                                "{a}'s {b}",
                                "Q&A - {a}",
                                "v{d}.{e} {a}",
                                "{d:02d}.{e:02d} {a}",
                                "{a}, {b} and more",
                                "{a} + {b}",
                            ]
                        ).format(a=self._title(2), b=rng.choice(WORDS), d=rng.randint(0, 9), e=rng.randint(0, 20))
                    name = self._unique(name)
                self.name.append(name)
                self.folder.append(k)
                self.is_moc.append(moc)
                self.folder_notes[k].append(i)
                secs = ["Overview"] + rng.sample(SECTIONS[1:], rng.randint(1, 4))
                self.sections.append(secs)
                self.block.append(f"{rng.choice(WORDS)}-{rng.randint(0, 99)}" if rng.random() < 0.6 else None)
        # a few notes everybody links to (the popular ones)
        self.popular = rng.sample(range(n), max(1, n // 100))
        n_assets = max(1, n // 80)
        self.assets = [
            (f"{self.folders[rng.randrange(len(self.folders))]}/assets".lstrip("/"), f"image-{a}.png")
            for a in range(n_assets)
        ]

    # -- text pieces -----------------------------------------------------
    def _sentence(self) -> str:
        rng = self.rng
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
        words[0] = words[0].capitalize()
        if rng.random() < 0.1:
            words.insert(rng.randrange(1, len(words)), f"**{rng.choice(WORDS)}**")
        if rng.random() < 0.05:
            words.insert(rng.randrange(1, len(words)), f"#{rng.choice(WORDS)}")
        return " ".join(words) + rng.choice([".", ".", ".", "?", "!"])

    def _title(self, k: int) -> str:
        return " ".join(self.rng.choice(WORDS).capitalize() for _ in range(k))

    def _unique(self, name: str) -> str:
        base, n = name, 1
        while unicodedata.normalize("NFC", name).casefold() in self.used:
            n += 1
            name = f"{base} {n}"
        self.used.add(unicodedata.normalize("NFC", name).casefold())
        return name

    def _para(self, k: int | None = None) -> str:
        rng = self.rng
        return " ".join(rng.choice(self.sentences) for _ in range(k or rng.randint(2, 5)))

    def path(self, i: int) -> str:
        folder = self.folders[self.folder[i]]
        return f"{folder}/{self.name[i]}.md" if folder else f"{self.name[i]}.md"

    def _target(self, i: int) -> int:
        rng = self.rng
        u = rng.random()
        if u < 0.4:  # same folder
            t = rng.choice(self.folder_notes[self.folder[i]])
        elif u < 0.5:
            t = rng.choice(self.popular)
        else:
            t = rng.randrange(self.n)
        return t

    def link(self, i: int) -> str:
        """One link from note i, in one of the shapes seen in the corpora."""
        rng = self.rng
        t = self._target(i)
        name = self.name[t]
        u = rng.random()
        label = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        if u < 0.03:  # broken wikilink / markdown link
            missing = f"{self._title(2)} missing {rng.randint(0, 10**6)}"
            if rng.random() < 0.7:
                return f"[[{missing}]]"
            return f"[{label}]({quote(missing)}.md)"
        if u < 0.28:
            return f"[[{name}]]"
        if u < 0.58:
            return f"[[{name}|{label}]]"
        if u < 0.63:  # folder path
            return f"[[{self.path(t)[:-3]}|{label}]]"
        if u < 0.71:  # heading (10% of them broken)
            sec = rng.choice(self.sections[t]) if rng.random() < 0.9 else "No such section"
            return f"[[{name}#{sec}]]" if rng.random() < 0.5 else f"[[{name}#{sec}|{label}]]"
        if u < 0.73:  # block reference
            if self.block[t] is None:
                return f"[[{name}]]"
            return f"[[{name}#^{self.block[t]}]]"
        if u < 0.79:  # embeds
            v = rng.random()
            if v < 0.5:
                folder, file = rng.choice(self.assets)
                return f"![[{file}]]" if rng.random() < 0.95 else f"![[missing-{file}]]"
            if v < 0.8:
                return f"![[{name}]]"
            return f"![[{name}#{rng.choice(self.sections[t])}]]"
        if u < 0.93:  # Markdown links
            v = rng.random()
            if v < 0.6:
                return f"[{label}]({quote(self.path(t))})"
            src = self.folders[self.folder[i]]
            rel = os.path.relpath(self.path(t), src or ".")
            if not rel.startswith("."):
                rel = "./" + rel
            return f"[{label}]({quote(rel)})"
        return f"[[{name.lower()}]]"  # letter case differs

    def frontmatter(self, i: int) -> str:
        rng = self.rng
        lines = ["---"]
        if self.is_moc[i]:
            lines += ["type: moc", f"description: Index of {self.name[i]}", "tags:", "- moc"]
            lines.append("---")
            return "\n".join(lines) + "\n"
        if rng.random() < 0.7:
            lines.append("aliases:")
            lines.append(f"- {self.name[i].lower()}")
            if rng.random() < 0.3:
                lines.append(f"- {self._title(2)}")
        u = rng.random()
        if u < 0.45:
            lines += ["tags:", "- "]  # obsidian-hub's empty item
        elif u < 0.75:
            lines.append("tags:")
            lines += [f"- {rng.choice(WORDS)}/{rng.choice(WORDS)}" for _ in range(rng.randint(1, 3))]
        elif u < 0.9:
            lines.append("tags: [" + ", ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + "]")
        if rng.random() < 0.35:
            d = dt.date(2019, 1, 1) + dt.timedelta(days=rng.randrange(2000))
            lines.append(f"created: {d.isoformat()}")
            if rng.random() < 0.3:
                lines.append(f"updated: {d.isoformat()}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00")
        if rng.random() < 0.4:
            lines.append(f"type: {rng.choice(TYPES)}")
        if rng.random() < 0.2:
            lines.append(f"status: {rng.choice(STATUSES)}")
        if rng.random() < 0.4:
            lines.append(f"description: {rng.choice(self.sentences)}")
        if rng.random() < 0.05:
            lines.append(f'related: "[[{self.name[self._target(i)]}]]"')
        if rng.random() < 0.03:
            lines.append("sources:")
            lines += [f'  - "[[{self.name[self._target(i)]}]]"' for _ in range(2)]
        if rng.random() < 0.3:
            lines.append("publish: true")
        if rng.random() < 0.001:
            lines.append(f'title: "{self._title(2)}')  # invalid: unclosed quote
        lines.append("---")
        return "\n".join(lines) + "\n"

    def note(self, i: int, size: int) -> str:
        rng = self.rng
        parts: list[str] = []
        if self.is_moc[i] or rng.random() < 0.96:
            parts.append(self.frontmatter(i))
        if not self.is_moc[i] and rng.random() < 0.02:
            parts.append("\n")  # empty-ish note, no title
        else:
            parts.append(f"\n# {self.name[i]}\n\n")
        if self.is_moc[i]:
            k = self.folder[i]
            members = self.folder_notes[k][1:]
            picked = rng.sample(members, min(len(members), rng.randint(8, 15)))
            parts += [f"- [[{self.name[m]}]]\n" for m in picked]
            for child in range(10 * k + 1, min(10 * k + 11, len(self.folders))):
                parts.append(f"- [[{self.name[self.folder_notes[child][0]]}]]\n")
            parts.append("\n")
        links = [self.link(i) for _ in range(rng.randint(3, 5))]
        has_block = False
        for sec in self.sections[i]:
            parts.append(f"## {sec}\n\n")
            para = self._para(rng.randint(1, 3))
            if links and rng.random() < 0.7:
                para += f" See {links.pop()}."
            parts.append(para + "\n\n")
            u = rng.random()
            if u < 0.25:
                items = [rng.choice(self.sentences) for _ in range(rng.randint(2, 4))]
                if links:
                    items[0] += f" {links.pop()}"
                if self.block[i] and not has_block:
                    items[-1] += f" ^{self.block[i]}"
                    has_block = True
                parts.append("".join(f"- {x}\n" for x in items) + "\n")
            elif u < 0.30:
                lang = rng.choice(LANGS)
                fake = rng.choice(
                    [
                        f"[[{self.name[self._target(i)]}]]",
                        "[[not a link]]",
                        f"[text]({quote(self.name[self._target(i)])}.md)",
                        "![[image.png]]",
                    ]
                )
                parts.append(f"```{lang}\nsee {fake} here\n{rng.choice(self.sentences)}\n```\n\n")
            elif u < 0.36:
                parts.append(f"Use `[[{rng.choice(WORDS)}]]` or `{rng.choice(WORDS)}()` inline.\n\n")
            elif u < 0.42:
                parts.append(f"%% {rng.choice(self.sentences)} [[{self.name[self._target(i)]}]] %%\n\n")
            elif u < 0.45:
                parts.append(f"<!-- - [[{self._title(2)}|x]]: <https://> ^{rng.choice(WORDS)}-->\n\n")
            elif u < 0.47:
                parts.append("$$\n\\sum_{i} [[x_i]] + y\n$$\n\n")
            elif u < 0.55:
                site = f"[{rng.choice(WORDS)}](https://example.org/{rng.choice(WORDS)})"
                parts.append(f"- Website: {site} ^{rng.choice(WORDS)}\n\n")
        if self.block[i] and not has_block:
            parts.append(f"{rng.choice(self.sentences)} ^{self.block[i]}\n\n")
        for link in links:
            parts.append(f"- {link}\n")
        parts.append("\n")
        if rng.random() < 0.5:
            parts.append(f"\n[{rng.choice(WORDS)}](https://github.com/{rng.choice(WORDS)}/{rng.choice(WORDS)})\n")
        text = "".join(parts)
        length = len(text.encode("utf-8"))
        while length < size:
            if size - length > 600 and rng.random() < 0.15:
                chunk = f"\n### {self._title(rng.randint(1, 3))}\n\n"
            elif size - length < 400:  # close to the size: a sentence at a time
                chunk = rng.choice(self.sentences) + "\n"
            else:
                chunk = self._para() + "\n\n"
                if length > 2300 and rng.random() < 0.25:
                    chunk = f"- {self.link(i)} {chunk}"
            parts.append(chunk)
            length += len(chunk.encode("utf-8"))
        return "".join(parts)

    def write(self, out: Path) -> dict:
        rng = self.rng
        out.mkdir(parents=True, exist_ok=True)
        (out / ".obsidian").mkdir(exist_ok=True)
        (out / ".obsidian" / "app.json").write_text('{\n  "alwaysUpdateLinks": true\n}\n', encoding="utf-8")
        for folder in self.folders:
            (out / folder).mkdir(parents=True, exist_ok=True)
        sizes = []
        for i in range(self.n):
            text = self.note(i, quantile_size(rng))
            data = text.encode("utf-8")
            sizes.append(len(data))
            with open(out / self.path(i), "wb") as handle:
                handle.write(data)
        for k, (folder, file) in enumerate(self.assets):
            (out / folder).mkdir(parents=True, exist_ok=True)
            (out / folder / file).write_bytes(png(k))
        return {
            "notes": self.n,
            "folders": len(self.folders),
            "attachments": len(self.assets),
            "median_bytes": statistics.median(sizes) if sizes else 0,
            "mean_bytes": round(statistics.mean(sizes)) if sizes else 0,
            "max_bytes": max(sizes, default=0),
            "total_mb": round(sum(sizes) / 1e6, 1),
        }


def generate(n: int, out: str | Path, seed: int = 0) -> dict:
    """Write a vault of ``n`` notes to ``out``; a summary of what was written."""
    out = Path(out).resolve()
    if out == REPO or REPO in out.parents:
        raise SystemExit(f"refusing to write a vault inside the repository: {out}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SystemExit(f"{out} exists and is not an empty folder")
    return Vault(n, seed).write(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, help="number of notes")
    parser.add_argument("out", help="the vault folder to create (outside the repository, e.g. under /tmp)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.n < 1:
        parser.error("N must be at least 1")
    summary = generate(args.n, args.out, args.seed)
    print(" ".join(f"{k}={v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
