"""graph/: the vault's links as a whole: health, repair, moves, Maps of Content.

Health (the score and what it counts), backlinks and orphans, link fix,
moves and renames, link cleanup, Maps of Content, and the HTML report;
also the JSON and the human text of ``graph.py``'s commands (long lists
cut short by ``listing``).

May import read/, write/, schema/ and memory/.
"""
