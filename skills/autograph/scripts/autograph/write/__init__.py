"""write/: every write autograph makes, and taking one back.

Confinement and refusals (confine), the atomic replace (replace), the merge
of another writer's edit (merge), the changes a plan is made of (changes),
derived and output files (derived), the writer lock (lock), the journal,
a run taken back file by file (rollback) and undo, the store (the only
writer of notes: a plan carried out as one journaled run), body sections,
and the one link rewriter (relink).

May import read/.
"""
