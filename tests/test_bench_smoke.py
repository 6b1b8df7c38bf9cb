"""Smoke run of the benchmarks: tiny configurations, so CI notices when they rot.

Asserts on what the benchmarks report (statuses, call counts, accounting), never on
timings.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from bench import bench_engine, bench_slack, scripts
from bench.common import remote, union_length
from bench.fake_gemini import parse_request


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


async def test_slack_bench_tiny(tmp_path: Path) -> None:
    out = await bench_slack.ack(tmp_path, seconds=0.2, rate=10.0, latency_s=0.005)
    assert out["events"] == 2
    assert out["statuses"] == {200: 2}
    assert out["slack_calls_during_load"]["auth.test"] >= 1  # socbot signed in first
    assert out["ack_ms_p99"] >= out["ack_ms_p50"] > 0
