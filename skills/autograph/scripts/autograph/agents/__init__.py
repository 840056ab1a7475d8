"""agents/: work done with language models and agent swarms.

The language-model client, enrichment, orchestration, the research swarm,
review batches, and the JSON files their commands hand over (output).

May import every layer below: read/, write/, schema/, memory/, graph/ and
hosts/.
"""
