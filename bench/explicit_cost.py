"""When explicit context caching pays (``bench_cost --explicit-cache``).

Compares the second (warm) investigation of each pair run twice by ``bench.bench_cost``:
implicit caching only, and with the manual in explicit caches. Implicit hits are best
effort, so both are priced at a share ``h`` of the implicit hits served (0, the
``--hit-rate``, 1; billing is linear in cached tokens); explicit hits are always served.
The explicit caches' storage (``ModelPrice.cache_storage`` times their tokens) is billed per
hour, used or not: explicit caching pays from ``storage per hour / saving per
investigation`` investigations per hour (the break-even). Creating a cache is counted once,
at the input price (Vertex AI documents that; the Gemini API page does not say), and
recurs only after an idle TTL.
"""

from __future__ import annotations

from typing import Any

from agent.model.pricing import price_for, storage_cost_per_hour
from bench.common import print_table
from config.settings import DEFAULT_PRICES


def at(run: dict[str, Any], share: float) -> float:
    """USD of ``run`` with ``share`` of its implicit hits served (explicit ones always)."""
    floor, best = run["cost_usd_no_implicit_hit"], run["cost_usd_with_cache"]
    return float(floor - share * (floor - best))


def storage_per_hour(caches: list[tuple[str, int]]) -> float:
    return sum(
        storage_cost_per_hour(price_for(DEFAULT_PRICES, model), tokens) or 0.0
        for model, tokens in caches
    )


def creation_cost(caches: list[tuple[str, int]]) -> float:
    total = 0.0
    for model, tokens in caches:
        price = price_for(DEFAULT_PRICES, model)
        total += tokens * (price.input if price else 0.0) / 1_000_000
    return total


def explicit_report(
    implicit: list[dict[str, Any]], explicit: list[dict[str, Any]], hit_rate: float
) -> dict[str, Any]:
    """Per pair order and implicit hit share: both costs, the saving, the break-even."""
    rows: list[list[object]] = []
    out: list[dict[str, Any]] = []
    for plain, cached in zip(implicit, explicit, strict=True):
        storage = storage_per_hour(cached["caches"])
        entry: dict[str, Any] = {
            "order": plain["order"],
            "caches": [{"model": m, "tokens": t} for m, t in cached["caches"]],
            "storage_usd_per_hour": round(storage, 6),
            "creation_usd_once": round(creation_cost(cached["caches"]), 6),
            "explicit_cached_tokens": cached["warm"]["explicit_cached_tokens"],
            "by_implicit_hit_share": {},
        }
        for share in sorted({0.0, hit_rate, 1.0}):
            before, after = at(plain["warm"], share), at(cached["warm"], share)
            saving = before - after
            breakeven = storage / saving if saving > 0 else None
            entry["by_implicit_hit_share"][f"{share:.2f}"] = {
                "cost_usd_implicit_only": round(before, 6),
                "cost_usd_explicit": round(after, 6),
                "saving_usd_per_investigation": round(saving, 6),
                "breakeven_investigations_per_hour": None
                if breakeven is None
                else round(breakeven, 2),
            }
            rows.append(
                [
                    " → ".join(plain["order"]),
                    f"{share:.0%}",
                    f"{before:.5f}",
                    f"{after:.5f}",
                    f"{saving:+.5f}",
                    f"{storage:.4f}",
                    "never" if breakeven is None else f"{breakeven:.1f}",
                ]
            )
        out.append(entry)
    print_table(
        "Explicit context caching: warm investigation, USD at list prices",
        rows,
        [
            "order",
            "implicit hits served",
            "implicit only",
            "explicit",
            "saving / inv",
            "storage / hour",
            "break-even inv / hour",
        ],
    )
    return {
        "counted": "warm (second) investigation of each pair; implicit hits priced at the "
        "share served, explicit hits always; storage = cached tokens x cache_storage per "
        "hour; break-even = storage per hour / saving per investigation",
        "pairs": out,
    }
