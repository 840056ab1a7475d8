"""memory/: cards an agent keeps, and their life.

Cards (remember, set, log, link, retire), decay and recall, identity-based
dedup, supersede, search (BM25 over SQLite FTS5), and daily notes.

May import read/, write/ and schema/.
"""
