"""Issue 34: the overhead of translating one model call to the OpenAI Chat Completions
API and its answer back (``agent.model.openai_request`` / ``openai_response``), for a
50-message conversation. Target: at most 1 ms per call.

::

    .venv/bin/python -m bench.bench_provider_translation --runs 2000   # ~10 s

Two kinds of call on the same conversation (a 5,000-character system instruction, a
3,000-character task, then 24 tool calls each answered with a 2,000-character result,
and a last user turn: 50 contents; 8 tool declarations): a **tool turn** (tools offered,
the answer two tool calls) and a **structured turn** (the plan's JSON schema made strict,
the answer the plan's JSON). Timed: building the request's keyword arguments from the
google-genai types, and reading the answer (the SDK's parsed ``ChatCompletion``) back
into a ``GenerateContentResponse``; not the SDK's own serialisation nor the network.
Median and 95th percentile per call, of the wall time and of the thread's CPU time (on
a loaded machine the wall time's tail is the scheduler's, not ours): the target is met
when the wall median and the CPU p95 are within 1 ms. The load average is recorded.

Writes ``var/bench/provider_translation.json`` (``SOCBOT_BENCH_RESULTS`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from google.genai import types
from openai.types.chat import ChatCompletion

from agent.model.genai_types import build_genai_types, json_schema
from agent.model.openai_request import build_request
from agent.model.openai_response import read_response
from agent.planner import Plan
from bench.common import print_table, write_json
from config.openai_settings import OpenAISettings

TARGET_MS = 1.0
MODEL = "gpt-5-mini"


def declarations(n: int = 8) -> list[types.FunctionDeclaration]:
    params = {
        "type": "object",
        "properties": {
            "sql": {"type": "string", "description": "one read-only SELECT over the log tables"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "fields": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["sql"],
    }
    return [
        types.FunctionDeclaration(
            name=f"tool_{i}",
            description="A tool the step may call. " * 4,
            parameters_json_schema=params,
        )
        for i in range(n)
    ]


def conversation(pairs: int = 24) -> list[types.Content]:
    """50 contents: the task, ``pairs`` call/result pairs, and a last user turn."""
    task = "Investigate the alert.\n" + "x" * 3000
    contents = [types.Content(role="user", parts=[types.Part(text=task)])]
    result = {"ref": "s1#1", "output": json.dumps([{"user": "alice", "ip": "203.0.113.7"}] * 40)}
    for i in range(pairs):
        call = types.FunctionCall(id=f"call_{i}", name=f"tool_{i % 8}", args={"sql": "SELECT 1"})
        reply = types.FunctionResponse(id=f"call_{i}", name=f"tool_{i % 8}", response=result)
        contents.append(types.Content(role="model", parts=[types.Part(function_call=call)]))
        contents.append(types.Content(role="user", parts=[types.Part(function_response=reply)]))
    contents.append(types.Content(role="user", parts=[types.Part(text="Summarise.")]))
    return contents


def answer(message: dict[str, Any]) -> ChatCompletion:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1727346143,
        "model": "gpt-5-mini-2025-08-07",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 20000,
            "completion_tokens": 300,
            "total_tokens": 20300,
            "completion_tokens_details": {"reasoning_tokens": 100},
            "prompt_tokens_details": {"cached_tokens": 18000},
        },
    }
    return ChatCompletion.model_validate(body)


def calls_answer() -> ChatCompletion:
    calls = [
        {
            "id": f"call_x{i}",
            "type": "function",
            "function": {"name": "tool_1", "arguments": '{"sql": "SELECT 2"}'},
        }
        for i in range(2)
    ]
    return answer({"content": None, "tool_calls": calls})


def plan_answer() -> ChatCompletion:
    step = {
        "id": "s1",
        "description": "Check the IP",
        "tools": ["tool_1"],
        "expected": "a verdict",
        "depends_on": [],
        "status": "pending",
        "findings": "",
    }
    plan = {
        "objective": "Decide whether 203.0.113.7 got in",
        "steps": [step] * 4,
        "used_bullets": [],
    }
    return answer({"content": json.dumps(plan)})


def time_calls(
    runs: int,
    config: types.GenerateContentConfig,
    completion: ChatCompletion,
    contents: list[types.Content],
    settings: OpenAISettings,
) -> tuple[list[float], list[float]]:
    """Wall and CPU (this thread's) milliseconds per call, sorted."""
    wall, cpu = [], []
    for _ in range(runs):
        started, used = time.perf_counter(), time.thread_time()
        request = build_request(MODEL, contents, config, settings, official=True)
        read_response(completion, request.names, MODEL)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - used) * 1000)
    return sorted(wall), sorted(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    build_genai_types()
    settings = OpenAISettings()
    contents = conversation()
    system = "socbot manual\n" + "y" * 5000
    tools = types.GenerateContentConfig(
        system_instruction=system,
        temperature=0.2,
        tools=[types.Tool(function_declarations=declarations())],
    )
    structured = types.GenerateContentConfig(
        system_instruction=system,
        temperature=0.2,
        response_mime_type="application/json",
        response_json_schema=json_schema(Plan),
    )
    load_before = os.getloadavg()
    rows, results = [], {}
    for name, config, completion in (
        ("tool turn", tools, calls_answer()),
        ("structured turn", structured, plan_answer()),
    ):
        time_calls(50, config, completion, contents, settings)  # warm-up
        wall, cpu = time_calls(args.runs, config, completion, contents, settings)
        figures = {
            "median_ms": statistics.median(wall),
            "p95_ms": wall[int(len(wall) * 0.95)],
            "cpu_median_ms": statistics.median(cpu),
            "cpu_p95_ms": cpu[int(len(cpu) * 0.95)],
        }
        met = figures["median_ms"] <= TARGET_MS and figures["cpu_p95_ms"] <= TARGET_MS
        rows.append([name, len(contents), *(round(v, 3) for v in figures.values()), met])
        results[name] = {"messages": len(contents), **figures, "met": met}
    load_after = os.getloadavg()
    print_table(
        "translation per call (build request + read answer), 50-message conversation",
        rows,
        ["call", "contents", "median ms", "p95 ms", "cpu median", "cpu p95", "met"],
    )
    print(f"load average before {load_before}, after {load_after}")
    path = write_json(
        "provider_translation",
        {
            "runs": args.runs,
            "target_ms": TARGET_MS,
            "results": results,
            "load_before": load_before,
            "load_after": load_after,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
