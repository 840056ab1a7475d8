"""agents/: work done with language models and agent swarms.

The language-model client, enrichment, orchestration, the research swarm,
and review batches.

May import every layer below: read/, write/, schema/, memory/, graph/ and
hosts/.
"""
