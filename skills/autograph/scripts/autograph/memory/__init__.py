"""memory/: cards an agent keeps, and their life.

Cards (new, set, log, link, retire), the retirement rule, decay and recall
(and what its commands report), identity-based dedup, supersede, search
(BM25 over SQLite FTS5), and daily notes.

May import read/, write/ and schema/.
"""
