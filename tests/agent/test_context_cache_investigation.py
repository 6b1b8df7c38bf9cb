"""A whole investigation with explicit context caching on: the real runtime, google-genai
and engine against the bench's fake Gemini (``bench.fake_gemini``, caches in
``bench.cached_contents``), on the genuine SCC finding in ``examples/alerts``.

What was cached is scanned as the server received it: only the shared manual, never a
fence, the request or a value of the alert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import bench_cost, scripts
from bench.common import REPO, measure, remote, runtime
from bench.explicit_cost import explicit_report

FENCE = re.compile(r"DATA-[0-9a-fA-F]{16}")  # agent.prompts.Fence: token_hex(8)
# The deployment's own configuration may name what an alert names too (the catalogue
# describes production-project-12345's tables): that text is configuration, not the alert.
CONFIGURED = (REPO / "config" / "socbot.toml").read_text()
CACHE = {"enabled": True, "light_model": True}
ALLOWED_FIELDS = {"model", "systemInstruction", "ttl", "displayName"}


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


async def test_an_investigation_caches_the_manual_and_nothing_of_the_alert(
    tmp_path: Path,
) -> None:
    request = bench_cost.request_for("scc")
    alert_values = [
        v
        for v in strings(json.loads(bench_cost.ALERTS["scc"].read_text()))
        if len(v) >= 6 and any(ch.isdigit() for ch in v)  # ids, IPs, hosts, times, wallets
    ]
    assert len(alert_values) > 20
    async with (
        remote(scripts.three_steps(), latency_s=0.0) as rem,
        runtime(rem, tmp_path, gemini={"context_cache": CACHE}) as (rt, timer),
    ):
        result = await measure(rt, timer, rem, request)
        store = rem.gemini.cached_contents
        live = store.live()
    assert result.outcome.status == "concluded"

    assert [body["model"] for body in store.created] == [
        "models/gemini-2.5-flash",
        "models/gemini-2.5-flash-lite",  # the review's critic shares the manual
    ]
    for body in store.created:
        assert set(body) <= ALLOWED_FIELDS
        text = "".join(p["text"] for p in body["systemInstruction"]["parts"])
        assert text.startswith("socbot manual")
        assert not FENCE.search(text)  # no fence token (the manual names only "<token>")
        assert request.text not in text
        leaked = [v for v in alert_values if v in text and v not in CONFIGURED]
        assert leaked == []
    assert len(live) == len(store.created)  # one per model, reused by every later call

    by_stage: dict[str, set[str]] = {}
    for call in result.calls:
        by_stage.setdefault(call.stage.split(" ", 1)[0], set()).add(call.cached_content)
    for stage in ("planner", "reflector", "concluder", "critic"):
        assert by_stage[stage] and "" not in by_stage[stage], stage
    assert by_stage["step"] == {""}  # steps offer tools: always inline
    cached = [c for c in result.calls if c.cached_content]
    tokens = {c.name: c.tokens for c in live}
    assert all(c.cached_tokens == tokens[c.cached_content] for c in cached)
    engine_cost = result.outcome.usage.get("cost_usd")
    assert isinstance(engine_cost, float)
    assert abs(engine_cost - bench_cost.cost(result.calls, cached=True)) < 2e-6
    assert store.caches == {}  # deleted when the runtime closed


def warm(floor: float, best: float, explicit_tokens: int = 0) -> dict[str, Any]:
    return {
        "cost_usd_no_implicit_hit": floor,
        "cost_usd_with_cache": best,
        "explicit_cached_tokens": explicit_tokens,
    }


def test_break_even_is_storage_per_hour_over_the_saving_per_investigation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    caches = [("gemini-2.5-flash", 5000), ("gemini-2.5-flash-lite", 5000)]  # $0.01 / hour
    implicit = [{"order": ["a", "b"], "caches": [], "warm": warm(0.020, 0.010)}]
    explicit = [{"order": ["a", "b"], "caches": caches, "warm": warm(0.015, 0.011, 9000)}]
    report = explicit_report(implicit, explicit, hit_rate=0.5)
    (pair,) = report["pairs"]
    assert pair["storage_usd_per_hour"] == pytest.approx(0.01)
    assert pair["creation_usd_once"] == pytest.approx((5000 * 0.30 + 5000 * 0.10) / 1e6)
    shares = pair["by_implicit_hit_share"]
    assert shares["0.00"]["saving_usd_per_investigation"] == pytest.approx(0.005)
    assert shares["0.00"]["breakeven_investigations_per_hour"] == pytest.approx(2.0)
    assert shares["0.50"]["cost_usd_implicit_only"] == pytest.approx(0.015)
    assert shares["0.50"]["cost_usd_explicit"] == pytest.approx(0.013)
    assert shares["0.50"]["breakeven_investigations_per_hour"] == pytest.approx(5.0)
    assert shares["1.00"]["breakeven_investigations_per_hour"] is None  # it never pays
    assert "never" in capsys.readouterr().out
