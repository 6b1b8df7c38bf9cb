"""Cost benchmark (issue 12): how much of each prompt Gemini's implicit cache can serve,
and what an investigation costs at list prices.

::

    .venv/bin/python -m bench.bench_cost            # ~20 s

Two different alerts (the SCC XMRig finding and a GuardDuty finding, ``examples/alerts``)
are investigated one after the other against one fake Gemini (``three_steps`` script:
planner, 3 steps of 3 calls, reflector, concluder on gemini-2.5-flash; the review's
critic on gemini-2.5-flash-lite), in both orders. For the second investigation of each
pair, per stage: prompt tokens, the *cacheable* tokens (the longest prefix an earlier
request to the same model sent, whatever its size: the share the issue asks for) and
the *cached* tokens the fake reports (that prefix when it reaches Gemini's documented
minimum, ``bench.prompt_cache``). Cost per investigation at the list prices of
``config.agent_settings.DEFAULT_PRICES``: with the cache as reported, without any cache
(every prompt token at the input price), and at ``--hit-rate`` (default 50 %) of the
reported cached tokens really served: implicit caching is best effort ("no cost saving
guarantee"), and billing is linear in the cached tokens. The first investigation of
each pair is reported too (cold cache: only its own repeats).

``--explicit-cache`` runs the same pairs a second time with explicit context caching
on (``gemini.context_cache``: the manual cached once per model, ``bench.cached_contents``)
and compares: cost per investigation in both modes at 0 %, ``--hit-rate`` and 100 % of the
implicit hits served (explicit hits are certain), the caches' storage cost per hour and
the break-even investigations per hour (``bench.explicit_cost``); ``--cache-light-model``
caches for the critic's light model too.

Writes ``bench/results/engine_cost.json`` (``engine_cost_explicit[_light].json`` with the
flags).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

from agent.engine import Request
from agent.model.pricing import call_cost, price_for
from alerts.parse import parse_alert
from bench import scripts
from bench.common import REPO, measure, print_table, remote, run_async, runtime, write_json
from bench.explicit_cost import explicit_report
from bench.fake_gemini import CallRecord
from config.settings import DEFAULT_PRICES

ALERTS = {
    "scc": REPO / "examples" / "alerts" / "leveret-scc.json",
    "guardduty": REPO / "examples" / "alerts" / "leveret-guardduty.json",
}
TARGET_SHARE = 0.70
HIT_RATE = 0.5


def request_for(name: str) -> Request:
    alert = parse_alert(json.loads(ALERTS[name].read_text()))
    return Request(
        conversation_id=f"bench-{uuid.uuid4().hex}",
        text=f"Investigate this {alert.source} alert: {alert.title}",
        alert=alert,
    )


def cost(calls: list[CallRecord], *, cached: bool, explicit_only: bool = False) -> float:
    """USD at list prices; ``cached=False`` bills every prompt token as fresh input,
    ``explicit_only`` counts only the hits of explicit caches (no implicit hit served)."""
    total = 0.0
    for c in calls:
        served = cached and (bool(c.cached_content) or not explicit_only)
        price = price_for(DEFAULT_PRICES, c.model)
        if price is None:
            raise ValueError(f"no price for {c.model!r}")
        total += call_cost(
            price,
            prompt_tokens=c.prompt_tokens,
            cached_tokens=c.cached_tokens if served else 0,
            output_tokens=c.output_tokens,
            thinking_tokens=c.thoughts_tokens,
        )
    return total


def stage_rows(calls: list[CallRecord]) -> dict[str, dict[str, Any]]:
    """Per stage (``step s1`` folded into ``step``) and ``all``: tokens and shares."""
    out: dict[str, dict[str, Any]] = {}
    for c in calls:
        for stage in (c.stage.split(" ", 1)[0], "all"):
            row = out.setdefault(
                stage, {"calls": 0, "prompt_tokens": 0, "cacheable_tokens": 0, "cached_tokens": 0}
            )
            row["calls"] += 1
            row["prompt_tokens"] += c.prompt_tokens
            row["cacheable_tokens"] += min(c.repeated_tokens, c.prompt_tokens)
            row["cached_tokens"] += c.cached_tokens
    for row in out.values():
        prompt = row["prompt_tokens"] or 1
        row["cacheable_share"] = round(row["cacheable_tokens"] / prompt, 4)
        row["cached_share"] = round(row["cached_tokens"] / prompt, 4)
    return out


def summary(calls: list[CallRecord], engine_cost: object, hit_rate: float) -> dict[str, Any]:
    cached, uncached = cost(calls, cached=True), cost(calls, cached=False)
    floor = cost(calls, cached=True, explicit_only=True)  # = uncached without explicit caches
    return {
        "llm_calls": len(calls),
        "models": sorted({f"{c.stage.split(' ', 1)[0]}: {c.model}" for c in calls}),
        "stages": stage_rows(calls),
        "cost_usd_with_cache": round(cached, 6),
        "cost_usd_without_cache": round(uncached, 6),
        "cost_usd_at_hit_rate": round(floor - hit_rate * (floor - cached), 6),
        "cost_usd_no_implicit_hit": round(floor, 6),
        "explicit_cached_tokens": sum(c.cached_tokens for c in calls if c.cached_content),
        "engine_reported_cost_usd": engine_cost,
    }


async def pair(
    tmp: Path,
    first: str,
    second: str,
    latency_s: float,
    min_tokens: int | None = None,
    hit_rate: float = HIT_RATE,
    explicit: bool = False,
    light: bool = False,
    models: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Investigate ``first`` then ``second`` on one fake Gemini (its cache shared);
    ``explicit``: with explicit context caching on (``light``: for the light model too);
    ``models``: ``model`` / ``light_model`` instead of the defaults."""
    gemini = {"context_cache": {"enabled": explicit, "light_model": light}, **(models or {})}
    async with (
        remote(scripts.three_steps(), latency_s=latency_s) as rem,
        runtime(rem, tmp, gemini=gemini) as (rt, timer),
    ):
        rem.gemini.cache.min_tokens = min_tokens
        runs = [await measure(rt, timer, rem, request_for(name)) for name in (first, second)]
        caches = [(c.model, c.tokens) for c in rem.gemini.cached_contents.live()]
    out: dict[str, Any] = {"order": [first, second], "caches": caches}
    for label, result in zip(("cold", "warm"), runs, strict=True):
        out[label] = {
            "alert": first if label == "cold" else second,
            "status": result.outcome.status,
            **summary(result.calls, result.outcome.usage.get("cost_usd"), hit_rate),
        }
    return out


def _usd(value: object) -> str:
    return f"{value:.5f}" if isinstance(value, float) else "n/a"


def report(pairs: list[dict[str, Any]], hit_rate: float) -> dict[str, Any]:
    rows: list[list[object]] = []
    worst: dict[str, float] = {}
    for p in pairs:
        warm = p["warm"]
        for stage, row in warm["stages"].items():
            rows.append(
                [
                    " → ".join(p["order"]),
                    stage,
                    row["calls"],
                    row["prompt_tokens"],
                    row["cacheable_tokens"],
                    f"{row['cacheable_share']:.1%}",
                    f"{row['cached_share']:.1%}",
                ]
            )
            worst[stage] = min(worst.get(stage, 1.0), row["cacheable_share"])
    print_table(
        "Cacheable share of prompt tokens, second investigation of each pair",
        rows,
        ["order", "stage", "calls", "prompt tok", "cacheable tok", "cacheable", "cached (billed)"],
    )
    cost_rows = [
        [
            " → ".join(p["order"]),
            label,
            p[label]["alert"],
            f"{p[label]['cost_usd_without_cache']:.5f}",
            f"{p[label]['cost_usd_at_hit_rate']:.5f}",
            f"{p[label]['cost_usd_with_cache']:.5f}",
            _usd(p[label]["engine_reported_cost_usd"]),
        ]
        for p in pairs
        for label in ("cold", "warm")
    ]
    print_table(
        "Cost per investigation at list prices (USD)",
        cost_rows,
        [
            "order",
            "run",
            "alert",
            "no cache",
            f"{hit_rate:.0%} of hits",
            "with cache",
            "engine reported",
        ],
    )
    return {
        "target": f"cacheable share of prompt tokens per stage >= {TARGET_SHARE:.0%} across two "
        "different alerts (second investigation of a pair)",
        "counted": "prompt tokens = ceil(chars / 4) of the JSON request the fake receives "
        "(system instruction, tool declarations, contents); cacheable = the longest prefix "
        "an earlier request to the same model sent, in 16-token blocks; cached = that "
        "prefix when >= the model's documented minimum (2,048 tokens for 2.5 Flash)",
        "prices": {k: v.model_dump() for k, v in DEFAULT_PRICES.items()},
        "hit_rate": hit_rate,
        "pairs": pairs,
        "worst_cacheable_share_per_stage": worst,
        "met": all(share >= TARGET_SHARE for share in worst.values()),
    }


async def main(
    latency_s: float,
    min_tokens: int | None,
    hit_rate: float,
    explicit: bool = False,
    light: bool = False,
    model: str | None = None,
) -> dict[str, Any]:
    orders = (("scc", "guardduty"), ("guardduty", "scc"))
    models = {"model": model, "light_model": model} if model else None
    with tempfile.TemporaryDirectory(prefix="socbot-bench-") as d:
        tmp = Path(d)
        pairs = [
            await pair(tmp, a, b, latency_s, min_tokens, hit_rate, models=models) for a, b in orders
        ]
        with_cache = [
            await pair(
                tmp,
                a,
                b,
                latency_s,
                min_tokens,
                hit_rate,
                explicit=True,
                light=light,
                models=models,
            )
            for a, b in (orders if explicit else ())
        ]
    result = {**report(pairs, hit_rate), "min_tokens_override": min_tokens, "model": model}
    name = "engine_cost" if min_tokens is None else f"engine_cost_min{min_tokens}"
    name += f"_{model}" if model else ""
    if explicit:
        result["explicit"] = explicit_report(pairs, with_cache, hit_rate)
        name += "_explicit_light" if light else "_explicit"
    write_json(name, result)
    return result


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per model call")
    parser.add_argument(
        "--min-tokens", type=int, default=None, help="cache minimum instead of the documented one"
    )
    parser.add_argument(
        "--hit-rate",
        type=float,
        default=HIT_RATE,
        help="share of the reported cached tokens really served (implicit caching: best effort)",
    )
    parser.add_argument(
        "--explicit-cache",
        action="store_true",
        help="also run with explicit context caching and report its break-even",
    )
    parser.add_argument(
        "--cache-light-model",
        action="store_true",
        help="with --explicit-cache: cache for the light model (the critic) too",
    )
    parser.add_argument(
        "--model", default=None, help="model and light model (e.g. gemini-3-flash-preview)"
    )
    args = parser.parse_args()
    run_async(
        lambda: main(
            args.latency,
            args.min_tokens,
            args.hit_rate,
            args.explicit_cache,
            args.cache_light_model,
            args.model,
        )
    )


if __name__ == "__main__":
    cli()
