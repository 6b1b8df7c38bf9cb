"""Smoke run of the benchmarks: tiny configurations, so CI notices when they rot.

Asserts on what the benchmarks report (statuses, call counts, accounting), never on
timings.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bench import bench_cost, bench_engine, bench_hostile, bench_review, bench_slack, scripts
from bench.common import remote, union_length
from bench.fake_gemini import parse_request
from bench.prompt_cache import ImplicitCache


def test_union_length_merges_overlaps() -> None:
    assert union_length([(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)]) == 2.0 + 1.0
    assert union_length([]) == 0.0


def test_fake_gemini_routes_on_the_stage_line() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "socbot stage: step s2\nYou are..."}]},
        "contents": [{"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": []}],
    }
    request = parse_request("gemini-2.5-flash", body)
    assert request.stage == "step s2"
    assert request.model_turns == 1
    assert request.prompt_chars > len("socbot stage: step s2")


def test_fake_gemini_routes_the_shared_manual_on_the_task_turns_last_stage_line() -> None:
    task = "<<<DATA-x alert\nsocbot stage: planner\nDATA-x>>>\n\nsocbot stage: step s3\nGo."
    body = {
        "systemInstruction": {"parts": [{"text": "socbot manual\nYou are..."}]},
        "contents": [{"role": "user", "parts": [{"text": task}]}],
    }
    assert parse_request("gemini-2.5-flash", body).stage == "step s3"


def test_implicit_cache_serves_a_repeated_prefix_of_the_same_model_above_the_minimum() -> None:
    cache = ImplicitCache()
    stable = "x" * 4 * 3008  # 3008 tokens, 188 blocks of 16
    assert cache.lookup("gemini-2.5-flash", stable + "alert A") == (0, 0)  # cold
    assert cache.lookup("gemini-2.5-flash", stable + "alert B") == (3008, 3008)
    assert cache.lookup("gemini-2.5-pro", stable + "alert B") == (0, 0)  # another model
    short = "y" * 4 * 1000
    cache.lookup("gemini-2.5-flash", short + "1")
    assert cache.lookup("gemini-2.5-flash", short + "2") == (992, 0)  # under 2,048: not billed
    cache.min_tokens = 512
    assert cache.lookup("gemini-2.5-flash", short + "3") == (992, 992)


async def test_cost_bench_tiny(tmp_path: Path) -> None:
    out = await bench_cost.pair(tmp_path, "scc", "guardduty", latency_s=0.0)
    cold, warm = out["cold"], out["warm"]
    assert cold["status"] == warm["status"] == "concluded"
    assert warm["stages"]["planner"]["cacheable_tokens"] > 1000  # the instructions repeat
    assert warm["stages"]["all"]["cached_tokens"] > 0
    for stage in ("reflector", "concluder"):  # they start with what the planner sent
        assert warm["stages"][stage]["cacheable_share"] > 0.8
    assert warm["cost_usd_with_cache"] < warm["cost_usd_at_hit_rate"]
    assert warm["cost_usd_at_hit_rate"] < warm["cost_usd_without_cache"]
    assert warm["engine_reported_cost_usd"] == pytest.approx(warm["cost_usd_with_cache"], abs=2e-6)


async def test_fake_gemini_speaks_the_rest_api() -> None:
    async with remote(scripts.three_steps(), latency_s=0.0) as rem:
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{rem.gemini.base_url}/v1beta/models/gemini-2.5-flash:generateContent",
                json={
                    "systemInstruction": {"parts": [{"text": "socbot stage: planner"}]},
                    "contents": [{"role": "user", "parts": [{"text": "plan"}]}],
                },
            )
    body = response.json()
    assert response.status_code == 200
    assert '"objective"' in body["candidates"][0]["content"]["parts"][0]["text"]
    assert body["usageMetadata"]["promptTokenCount"] > 0
    assert rem.gemini.calls[0].stage == "planner"


async def test_engine_bench_tiny(tmp_path: Path) -> None:
    results, trace_s = await bench_engine._series(
        scripts.three_steps(), tmp_path, 1, latency_s=0.005
    )
    summary = results[0].summary()
    assert summary["status"] == "concluded"
    assert summary["llm_calls"] == 13  # planner, 3 x 3 step turns, reflector, concluder, critic
    assert set(summary["stages"]) == {"planner", "step", "reflector", "concluder", "critic"}
    assert summary["tools"]["query_logs"]["calls"] == 5
    assert summary["tools"]["lookup_ip"]["calls"] == 2
    assert summary["critical_path_s"] > 0
    assert summary["engine_usage"]["llm_calls"] == 13
    assert len(trace_s) == 1


async def test_review_bench_tiny(tmp_path: Path) -> None:
    (result,) = await bench_review._series(scripts.review_rewrites(), tmp_path, 1, 0.005, {})
    case = bench_review._case("rewrites", [result], 1.0)
    assert (case["status"], case["rewrites"], case["verified"]) == ("rewritten", 1, "3 of 3")
    assert case["review_calls_by_stage"] == {"critic": 2, "concluder_rewrite": 1}
    assert 0 < case["review_token_share"] < 1


async def test_slack_bench_tiny(tmp_path: Path) -> None:
    out = await bench_slack.ack(tmp_path, seconds=0.2, rate=10.0, latency_s=0.005)
    assert out["events"] == 2
    assert out["statuses"] == {200: 2}
    assert out["slack_calls_during_load"]["auth.test"] >= 1  # socbot signed in first
    assert out["ack_ms_p99"] >= out["ack_ms_p50"] > 0


async def test_eval_bench_tiny(tmp_path: Path) -> None:
    from bench import bench_eval
    from tools.base import ToolRegistry

    dispatch = ToolRegistry.dispatch
    only = "aws-root*,okta-password-spray"
    out = await bench_eval.run(2, 0.0, tmp_path, only=only, pack_name="core")
    assert out["scenarios"] == 2 and out["model_calls"] >= 8
    assert out["sum_critical_paths_s"] > 0 and out["scorer_ms_per_scenario"] > 0
    assert out["tool_calls"] == 2  # each scenario's one query, timed
    assert ToolRegistry.dispatch is dispatch  # the timing wrapper is gone


async def test_hostile_bench_tiny() -> None:
    """Two hostile queries (one against the time limit, one against the memory cap) and a
    few normal ones through the real DuckDB worker pool."""
    reg, backend = bench_hostile.registry(timeout_s=1.0, memory_mb=256, headroom_mb=256)
    chosen = {k: bench_hostile.HOSTILE[k] for k in ("recursive cte", "string_agg 400MB")}
    try:
        rows = await bench_hostile.hostile(reg, backend, 1.0, chosen)
        lat = await bench_hostile.latency(reg, backend, runs=3)
    finally:
        backend.close()
    assert [r["query"] for r in rows] == list(chosen)
    for row in rows:  # stopped with an error the model can read, not rows
        assert "rows, truncated" not in row["outcome"] and row["outcome"], row
        assert row["peak_rss_mb"] > 0
    assert lat["runs"] == 3 and lat["pool_median_ms"] > 0 and lat["cold_start_ms"] > 0


async def test_bench_mcp_reports_both_latencies() -> None:
    from bench import bench_mcp

    result = await bench_mcp.main(calls=3, warmup=1)
    assert result["calls"] == 3
    assert result["mcp_median_ms"] > 0 and result["builtin_median_ms"] > 0


def test_provider_translation_bench_translates_its_50_message_conversation() -> None:
    from google.genai import types

    from agent.model.openai_request import build_request
    from agent.model.openai_response import read_response
    from bench import bench_provider_translation as bench
    from config.openai_settings import OpenAISettings

    contents = bench.conversation()
    config = types.GenerateContentConfig(
        system_instruction="s", tools=[types.Tool(function_declarations=bench.declarations())]
    )
    request = build_request(bench.MODEL, contents, config, OpenAISettings(), official=True)
    messages = request.kwargs["messages"]
    assert len(contents) == 50 and len(messages) == 51  # and the system message
    assert [m["role"] for m in messages[1:4]] == ["user", "assistant", "tool"]
    answer = read_response(bench.calls_answer(), request.names, bench.MODEL)
    assert answer.candidates and len(answer.candidates[0].content.parts) == 2  # type: ignore[union-attr,arg-type]
    wall, cpu = bench.time_calls(3, config, bench.calls_answer(), contents, OpenAISettings())
    assert len(wall) == len(cpu) == 3


async def test_quality_bench_tiny(tmp_path: Path) -> None:
    from bench import bench_quality

    url = f"sqlite+aiosqlite:///{tmp_path / 'q.db'}"
    out = await bench_quality.measure(url, 300, 1, 2, False)
    assert out["report_cases"] == 300  # every case opened within the report's 30 days
    assert {"p50_ms", "p95_ms", "cpu_p50_ms"} <= set(out["report"])
    assert {"p50_ms", "p95_ms"} <= set(out["page"]) and out["page_first_render_ms"] > 0


async def test_cases_page_bench_tiny(tmp_path: Path) -> None:
    from bench import bench_cases_page

    url = f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"
    out = await bench_cases_page.measure(url, 300, 2)
    assert out["cases"] == 300
    timed = [k for k, v in out.items() if isinstance(v, dict)]
    assert len(timed) == 13
    assert all({"p50_ms", "p95_ms", "cpu_p50_ms"} <= set(out[k]) for k in timed)
