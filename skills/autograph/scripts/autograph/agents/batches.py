"""Batches of work for agents, within a token budget (``orchestrate.py``).

An agent reviewing a vault reads its work in batches that each fit its
context.  :func:`pack` cuts a list of items into batches whose estimated
tokens stay within a budget: items keep their order (callers sort them, by
vault path, so that one folder's notes sit together), a batch is closed when
the next item would take it over the budget, and an item that alone is over
the budget gets a batch of its own, flagged ``over_budget``.  Every item is
in exactly one batch, and the same items give the same batches.

Tokens are estimated as bytes / 4 (rounded up), the usual rule of thumb for
English text with a BPE tokenizer; it overestimates for code and
underestimates for CJK text, which is why budgets should keep a margin.
"""

from __future__ import annotations

from ..read import jsonfile
from ..read.secrets import mask
from ..read.text import printable

__all__ = ["DEFAULT_BUDGET", "dumps", "estimate", "item_tokens", "over_budget_warnings", "pack", "summary"]

DEFAULT_BUDGET = 50_000  # tokens per batch: a fifth of a 200k context, leaving room for the agent's own work


def estimate(size: int) -> int:
    """Estimated tokens of ``size`` bytes: ``ceil(size / 4)``, at least 1."""
    return max(1, -(-size // 4))


def dumps(data) -> str:
    """The one JSON form of batches and their items: compact, UTF-8, key
    order as built (so the same input gives the same bytes)."""
    return jsonfile.dumps(data, separators=(",", ":"), allow_nan=False)


def item_tokens(item) -> int:
    """Estimated tokens of a JSON-ready item as an agent reads it."""
    return estimate(len(dumps(item).encode("utf-8")))


def pack(
    items: list, budget: int, tokens=item_tokens, prefix: str = "batch", max_items: int | None = None
) -> list[dict]:
    """Cut ``items`` into batches of at most ``budget`` estimated tokens.

    ``tokens(item)`` gives an item's tokens (default: its JSON's bytes / 4);
    ``max_items`` also caps the items per batch.  Returns ``[{"id":
    "batch-001", "tokens": n, "over_budget": bool, "items": [...]}]`` in
    item order; ``over_budget`` is true only for a batch holding one item
    whose tokens alone exceed ``budget``.  Raises ValueError for a budget or
    ``max_items`` under 1.
    """
    if budget < 1:
        raise ValueError("the budget must be at least 1 token")
    items = [_masked(item) for item in items]
    if max_items is not None and max_items < 1:
        raise ValueError("a batch must hold at least 1 item")
    batches: list[dict] = []
    current: list = []
    used = 0

    def close() -> None:
        nonlocal current, used
        if current:
            batches.append({"tokens": used, "over_budget": used > budget, "items": current})
        current, used = [], 0

    for item in items:
        cost = tokens(item)
        full = max_items is not None and len(current) >= max_items
        if current and (used + cost > budget or full):
            close()
        current.append(item)
        used += cost
        if cost > budget:  # alone over the budget: its own batch
            close()
    close()
    width = max(3, len(str(len(batches))))
    return [{"id": f"{prefix}-{n:0{width}d}", **batch} for n, batch in enumerate(batches, 1)]


def _masked(item):
    """``item`` with each text in it that holds a secret masked
    (:func:`secrets.mask`): a batch is handed to an agent, never a secret
    with it.  The item itself when none does."""
    if isinstance(item, str):
        return mask(item)
    if isinstance(item, list):
        items = [_masked(value) for value in item]
        return item if all(a is b for a, b in zip(items, item, strict=True)) else items
    if isinstance(item, dict):
        values = {key: _masked(value) for key, value in item.items()}
        return item if all(values[key] is item[key] for key in item) else values
    return item


def over_budget_warnings(data: dict) -> list[str]:
    """A warning (text, without ``warning:``) per batch of ``data`` (a
    command's JSON with ``budget`` and ``batches``) flagged ``over_budget``:
    which item it holds alone, and its tokens."""
    found = []
    for batch in data.get("batches", ()):
        if batch["over_budget"]:
            item = batch["items"][0]
            label = item.get("path") or item.get("group") or "one item"
            found.append(
                f"{batch['id']} holds {printable(label)} alone: ~{batch['tokens']} tokens, over the budget of "
                f"{data['budget']}"
            )
    return found


def summary(data: dict, *keys: str) -> dict:
    """What a batch command says when its JSON went to a file: ``{"batches":
    number of batches, key: data[key] for each of keys}``."""
    return {"batches": len(data["batches"]), **{key: data[key] for key in keys}}
