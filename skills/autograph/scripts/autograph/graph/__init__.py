"""graph/: the vault's links as a whole: health, repair, moves, Maps of Content.

Health (the score and what it counts), link fix, moves and renames, link
cleanup, Maps of Content, and the HTML report.

May import read/, write/, schema/ and memory/.
"""
