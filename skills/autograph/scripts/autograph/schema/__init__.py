"""schema/: what a vault's notes should look like, and making them so.

Loading and validating ``schema.json``, discovery (what a vault actually
uses), a drafted schema, compliance and its fixes, frontmatter repair, and
frontmatter for bare notes.

May import read/ and write/.
"""
