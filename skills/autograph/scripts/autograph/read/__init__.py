"""read/: the vault as it is on disk, read as Obsidian reads it.

Frontmatter (parsed and edited surgically in memory), code regions, links
and their resolution, a note's bytes, the vault walk, the incremental note
index, the link graph built from it, identity normalisers, tags, dates, and
the small readers the layers above share (JSON files, two-core reads).

The lowest layer: imports only the standard library and other read/
modules.  Nothing here writes a file.
"""
