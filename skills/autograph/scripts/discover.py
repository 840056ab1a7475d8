#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""discover.py: what an Obsidian vault actually uses (for drafting a schema)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
Reads every note (nothing is written but the parsed-note cache in
VAULT/.graph/cache/, not with --dry-run) and reports: folders and their notes,
explicit types (the "type" property) and types inferred for untyped notes
from their folder, statuses per type, every property with its count, kinds
(text, number, checkbox, date, datetime, list, mapping, empty) and example
values, tags, link statistics, notes without frontmatter and notes whose
frontmatter does not parse (line and column).

Templates: notes in the vault's templates folders (Obsidian's Templates and
Templater settings in .obsidian/) are counted in "notes" and their links in
"links", but left out of everything else: their placeholders ({{date}},
<% tp... %>, empty values) are not what the notes hold, and enforce.py never
checks them, so the schema drafted from this report describes only the other
notes.

JSON keys (--json): vault, scanned, notes (every note, templates included),
templates{folders[], notes}, folders{folder: n}, frontmatter
{valid, invalid, none}, without_frontmatter[], invalid_frontmatter[{path, line,
column, error}], unreadable[{path, error}], types{type: {explicit, inferred,
folders{}, statuses{}, keys{}}}, keys{key: {count, kinds{}, examples[]}},
obsidian_types{property: type} (from .obsidian/types.json), tags{tag: n},
links{total, resolved, broken, embeds, markdown, in_properties, per_note}.

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, and not with --dry-run).

Exit codes: 0 done; 2 bad usage or vault; 3 I/O failure or bug.

Examples:
  discover.py --vault ~/vault
  discover.py --vault ~/vault --json > discovery.json && generate_schema.py discovery.json -o ~/vault/schema.json
"""


def _human(data: dict) -> str:
    fm = data["frontmatter"]
    lines = [
        f"{data['notes']} notes in {len(data['folders'])} folders · frontmatter: {fm['valid']} valid,"
        f" {fm['invalid']} invalid, {fm['none']} none",
        f"links: {data['links']['total']} ({data['links']['per_note']} per note), {data['links']['broken']} broken",
    ]
    templates = data["templates"]
    if templates["notes"]:
        lines.append(
            f"templates: {cli.plural(templates['notes'], 'note')} in "
            + cli.printable(", ".join(templates["folders"]))
            + " (links counted; left out of folders, types and properties)"
        )
    lines += ["", f"Types ({len(data['types'])}):"]
    for name, info in data["types"].items():
        statuses = ", ".join(f"{s} {n}" for s, n in list(info["statuses"].items())[:6])
        lines.append(
            f"  {cli.printable(name)}: {info['explicit']} explicit, {info['inferred']} inferred"
            + (f" · status: {cli.printable(statuses)}" if statuses else "")
        )
    lines += ["", "Properties (most used first):"]
    for key, info in list(data["keys"].items())[:30]:
        kinds = ", ".join(f"{k} {n}" for k, n in info["kinds"].items())
        lines.append(f"  {cli.printable(key)}: {info['count']} ({kinds})")
    if len(data["keys"]) > 30:
        lines.append(f"  ... {len(data['keys']) - 30} more (--json lists all)")
    tags = list(data["tags"].items())[:15]
    if tags:
        lines += ["", "Tags: " + cli.printable(", ".join(f"{t} {n}" for t, n in tags))]
    if data["invalid_frontmatter"]:
        lines += ["", f"Invalid frontmatter ({len(data['invalid_frontmatter'])}):"]
        lines += [
            f"  {cli.printable(r['path'])}:{r['line']}:{r['column']}  {r['error']}"
            for r in data["invalid_frontmatter"][:20]
        ]
    return "\n".join(lines)


def cmd_discover(args) -> int:
    from autograph.schema import discovery
    from autograph.write.derived import save_index
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    data = discovery.discover(vault, index)
    cli.warn(index.warnings)
    save_index(index)
    if args.json:
        cli.print_json(data)
    else:
        print(_human(data))
    return cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "discover.py", "Describe what a vault uses: folders, types, statuses, properties, tags, links.", EPILOG
    )
    cli.add_common(parser, schema=False)
    parser.set_defaults(func=cmd_discover)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
