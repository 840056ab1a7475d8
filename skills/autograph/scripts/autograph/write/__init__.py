"""write/: every write autograph makes, and taking one back.

The store (the only writer of notes: the writer lock, confinement, the
atomic change-checked replace, the merge of another writer's edit, derived
and output files), the journal, crash recovery and undo planning, body
sections, and the one link rewriter.

May import read/.
"""
