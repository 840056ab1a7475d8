"""Search quality (issue 11): known-item queries from a real vault, MRR@10 of
autograph against a plain BM25 (``rank_bm25``, a test-only oracle).

Queries: the visible text of links whose alias differs from the target's
name (``[[Target|alias]]``); the answer is the note the link resolves to.
One query per distinct (alias, answer), in a fixed sample."""

from __future__ import annotations

import os
import random
import re

import pytest
from autograph.memory import search
from autograph.read.links import scan
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import CORPORA, require

QUERIES = 400
WORD = re.compile(r"\w+")


def known_items(vault: Vault) -> list[tuple[str, str]]:
    pairs = set()
    for path in vault.notes:
        note = vault.note(path, keep=False)
        if note.text is None:
            continue
        for link in scan(note.text, note.body_offset, note.body_line):
            if link.kind != "wikilink" or not link.alias or link.embed or not link.target:
                continue
            answer = vault.resolver.resolve(link.target, path).path
            if answer is None or not answer.endswith(".md") or answer == path:
                continue
            alias = link.alias.strip()
            stem = answer.rsplit("/", 1)[-1][:-3]
            if len(WORD.findall(alias)) and search.fold(alias) != search.fold(stem):
                pairs.add((alias, answer))
    pairs = sorted(pairs)
    random.Random(11).shuffle(pairs)
    return pairs[:QUERIES]


def tokens(text: str) -> list[str]:
    return WORD.findall(search.fold(text))


def mrr(ranked: list[list[str]], answers: list[str]) -> float:
    total = 0.0
    for found, answer in zip(ranked, answers, strict=True):
        if answer in found[:10]:
            total += 1 / (found.index(answer) + 1)
    return total / len(answers)


@pytest.mark.corpus
def test_mrr_at_10_is_at_least_plain_bm25_on_obsidian_hub():
    try:
        import rank_bm25  # the dev extra pins it (pyproject.toml)
    except ImportError:
        if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
            pytest.fail("rank_bm25 missing: pip install -e '.[dev]'")
        pytest.skip("rank_bm25 missing: pip install -e '.[dev]'")
    import numpy  # comes with rank_bm25

    root = require(CORPORA / "obsidian-hub")  # read only: the index is kept in memory
    vault = Vault.open(root)
    schema = load_schema(root)
    pairs = known_items(vault)
    assert len(pairs) >= 200

    paths = vault.notes
    corpus = []
    for path in paths:
        note = vault.note(path, keep=False)
        corpus.append(tokens(path.rsplit("/", 1)[-1][:-3] + "\n" + (note.text or "")))
    oracle = rank_bm25.BM25Okapi(corpus)
    theirs = []
    for alias, _ in pairs:
        scores = oracle.get_scores(tokens(alias))
        best = numpy.argsort(-scores, kind="stable")[:10]
        theirs.append([paths[i] for i in best if scores[i] > 0])

    index = search.open_index(vault, schema, use_disk=False)
    try:
        ours = [[h.path for h in search.search(index, vault, schema, alias, 10, snippets=False)] for alias, _ in pairs]
    finally:
        index.close()
    answers = [answer for _, answer in pairs]
    ours_mrr, theirs_mrr = mrr(ours, answers), mrr(theirs, answers)
    print(f"MRR@10 over {len(pairs)} known-item queries: autograph {ours_mrr:.3f}, rank_bm25 {theirs_mrr:.3f}")
    assert ours_mrr >= theirs_mrr
