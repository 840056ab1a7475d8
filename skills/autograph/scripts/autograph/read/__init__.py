"""read/: the vault as it is on disk, read as Obsidian reads it.

Frontmatter (parsed, and edited surgically in memory), code regions, links
and their resolution, a note's bytes, the vault walk and the notes
autograph generated, the incremental note index and the link graph built
from it, identity normalisers, tags, dates, sizes as a host loads them,
text safe to show, and the small readers the layers above share (JSON
files, two-core reads).

The lowest layer: imports only the standard library and other read/
modules.  Nothing here writes a file.
"""
