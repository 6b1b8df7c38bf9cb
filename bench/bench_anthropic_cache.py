"""Anthropic prompt caching and translation overhead (issue 34, part B).

::

    .venv/bin/python -m bench.bench_anthropic_cache        # ~10 s

**Cache share.** A scripted investigation laid out as the engine lays out its requests
(``agent.prompts``: one shared manual as the system of the planner, reflector, concluder
and critic; a step's system is the manual's head plus its section; the task turn is the
fenced case file, then the results, then the ``socbot stage:`` section) goes through the
real ``LLMGateway`` and ``AnthropicBackend`` on the real SDK against the wire fake
(``tests.fakes.anthropic_api``: breakpoints, 20-block lookback, 1,024-token minimum).
Planner, 3 steps of 3 calls (two tool rounds and an answer), reflector, concluder on
claude-sonnet-4-6, the critic on claude-haiku-4-5; then a second investigation of another
alert. Per call the *repeated prefix* is the longest prefix of its prompt (tools, system,
messages, as the API orders them) an earlier request to the same model sent — what any
cache could serve; the share is the tokens the API reported as ``cache_read_input_tokens``
over the repeated tokens. Goal ≥ 70 %. Cache writes are reported apart (billed 1.25x).

**Translation overhead.** ``build_request`` + ``to_response`` for a 50-message tool loop
(25 calls and their results, 6 tools, the manual as system): median of 300, goal ≤ 1 ms.

Writes ``bench/results/anthropic_cache.json``. Figures against a scripted model measure
mechanics, never the quality of a verdict.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

from anthropic.types import Message
from google.genai import types

from agent.model.anthropic_backend import AnthropicBackend
from agent.model.anthropic_reply import to_response
from agent.model.anthropic_request import build_request
from agent.model.gateway import CallContext, LLMGateway
from bench.common import print_table, run_async, write_json
from config.settings import GeminiSettings, fixed_settings
from tests.fakes.anthropic_api import AnthropicAPI, Reply, reply, text, tool_use
from tests.fakes.anthropic_rules import blocks_of
from tests.fakes.sink import EventSink

MAIN, LIGHT = "claude-sonnet-4-6", "claude-haiku-4-5"
GOAL_SHARE, GOAL_MS = 0.70, 1.0
SECTIONS = [f"## {name}\n" + f"How the {name} works. " * 120 for name in ("env", "tables", "tools")]
STAGES = [
    f"## stage {s}\n" + f"What {s} must do. " * 40
    for s in ("step", "reflector", "concluder", "critic")
]
MANUAL = "socbot manual\n" + "".join(SECTIONS + STAGES)
HEAD = "socbot manual\n" + "".join(SECTIONS) + STAGES[0]
TOOLS = [
    types.FunctionDeclaration(
        name=f"tool_{i}",
        description=f"Tool {i}: looks something up. " * 8,
        parameters_json_schema={
            "type": "object",
            "properties": {"q": {"type": "string", "description": "what to look up"}},
            "required": ["q"],
        },
    )
    for i in range(6)
]
_SINK = EventSink()


def fence(label: str, body: str) -> str:
    return f"<<<DATA-b3nch {label}\n{body}\nDATA-b3nch>>>\n"


def case_file(alert: str) -> str:
    return "".join(fence(f"alert {k}", f"{alert} {k} " * 40) for k in range(8))


def user(text_: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text_)])]


def script(body: dict[str, Any]) -> Reply:
    """Two tool rounds then an answer inside a step; an answer anywhere else."""
    rounds = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if body.get("tools") and rounds < 2:
        return reply(tool_use("tool_1", {"q": f"r{rounds}"}))
    return reply(text('{"ok": true}'))


async def investigate(gw: LLMGateway, alert: str) -> None:
    ctx = CallContext(alert, _SINK, 10_000_000, time.monotonic() + 600)
    case = case_file(alert)
    await gw.generate(
        ctx, stage="planner", system=MANUAL, contents=user(case + "socbot stage: planner\n")
    )
    results = ""
    for s in (1, 2, 3):
        contents = user(fence("alert", f"summary of {alert}") + f"socbot stage: step s{s}\n")
        system = HEAD + f"\nYour step: s{s}\n"
        for _ in range(3):
            turn = await gw.generate(
                ctx, stage=f"step s{s}", system=system, contents=contents, tools=TOOLS
            )
            if not turn.function_calls:
                break
            contents.append(turn.content)
            for call in turn.function_calls:
                answer = types.FunctionResponse(
                    id=call.id, name=call.name, response={"output": f"{alert} rows " * 30}
                )
                contents.append(
                    types.Content(role="user", parts=[types.Part(function_response=answer)])
                )
        results += fence(f"step s{s}", f"finding {s} of {alert} " * 20)
    for stage in ("reflector", "concluder"):
        await gw.generate(
            ctx,
            stage=stage,
            system=MANUAL,
            contents=user(case + results + f"socbot stage: {stage}\n"),
            thinking=False,
        )
    await gw.generate(
        ctx,
        stage="critic",
        system=MANUAL,
        contents=user(case + results + "socbot stage: critic\n"),
        light=True,
        thinking=False,
    )


def repeated_tokens(bodies: list[dict[str, Any]]) -> list[int]:
    """Per request: tokens of the longest prefix an earlier request to its model sent
    (whole blocks, then the common start of the first differing block, 4 chars a token)."""
    seen: dict[str, list[list[str]]] = {}
    out = []
    for body in bodies:
        blocks = [
            json.dumps({k: v for k, v in b.items() if k != "cache_control"}, sort_keys=True)
            for b in blocks_of(body)
        ]
        best = 0
        for earlier in seen.get(body["model"], []):
            tokens = 0
            for mine, theirs in zip(blocks, earlier, strict=False):
                if mine == theirs:
                    tokens += max(1, len(mine) // 4)
                    continue
                tokens += _common(mine, theirs) // 4
                break
            best = max(best, tokens)
        seen.setdefault(body["model"], []).append(blocks)
        out.append(best)
    return out


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


async def cache_share() -> dict[str, Any]:
    api = AnthropicAPI(script)
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench")
    backend = AnthropicBackend.from_settings(fixed_settings(), http_client=api.http_client())
    gw = LLMGateway(backend, GeminiSettings(model=MAIN, light_model=LIGHT))
    for alert in ("guardduty-finding", "scc-xmrig"):
        await investigate(gw, alert)
    await backend.aclose()
    assert not api.refusals, api.refusals
    repeated = repeated_tokens(api.requests)
    read = [u["cache_read_input_tokens"] for u in api.usages]
    written = [u["cache_creation_input_tokens"] for u in api.usages]
    prompt = [u["input_tokens"] + r + w for u, r, w in zip(api.usages, read, written, strict=True)]
    half = len(api.requests) // 2
    rows = []
    for label, part in (
        ("first", slice(0, half)),
        ("second", slice(half, None)),
        ("both", slice(None)),
    ):
        share = sum(read[part]) / max(1, sum(repeated[part]))
        rows.append(
            [
                label,
                sum(prompt[part]),
                sum(repeated[part]),
                sum(read[part]),
                sum(written[part]),
                round(share, 4),
            ]
        )
    print_table(
        "Anthropic cache: repeated prefix served from cache",
        rows,
        ["investigation", "prompt", "repeated", "read", "written", "share"],
    )
    return {
        "calls": len(api.requests),
        "rows": [
            dict(
                zip(
                    [
                        "investigation",
                        "prompt_tokens",
                        "repeated_tokens",
                        "cache_read_tokens",
                        "cache_write_tokens",
                        "share",
                    ],
                    r,
                    strict=True,
                )
            )
            for r in rows
        ],
        "share": rows[-1][-1],
        "goal_share": GOAL_SHARE,
    }


def overhead(runs: int = 300) -> dict[str, Any]:
    contents = user(case_file("overhead") + "socbot stage: step s1\n")
    for i in range(25):
        call = types.FunctionCall(id=f"toolu_{i:04d}", name="tool_1", args={"q": f"q{i}"})
        contents.append(types.Content(role="model", parts=[types.Part(function_call=call)]))
        answer = types.FunctionResponse(
            id=call.id, name=call.name, response={"output": "row " * 50}
        )
        contents.append(types.Content(role="user", parts=[types.Part(function_response=answer)]))
    config = types.GenerateContentConfig(
        system_instruction=MANUAL, tools=[types.Tool(function_declarations=TOOLS)]
    )
    settings = fixed_settings().anthropic
    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": MAIN,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "content": [
                {"type": "text", "text": "next"},
                {"type": "tool_use", "id": "toolu_x", "name": "tool_1", "input": {"q": "x"}},
            ],
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 0,
            },
        }
    )
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        request = build_request(MAIN, contents, config, settings)
        to_response(message, request.names)
        times.append((time.perf_counter() - started) * 1000)
    median = statistics.median(times)
    p95 = sorted(times)[int(runs * 0.95)]
    print_table(
        "Translation per call (50 messages)",
        [[len(contents), round(median, 3), round(p95, 3)]],
        ["messages", "median ms", "p95 ms"],
    )
    return {
        "messages": len(contents),
        "median_ms": round(median, 4),
        "p95_ms": round(p95, 4),
        "goal_ms": GOAL_MS,
    }


async def main() -> dict[str, Any]:
    result = {"cache": await cache_share(), "translation": overhead(), "load": os.getloadavg()}
    write_json("anthropic_cache", result)
    return result


if __name__ == "__main__":
    run_async(main)
