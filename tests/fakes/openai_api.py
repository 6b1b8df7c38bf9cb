"""The OpenAI Chat Completions API on a respx router, for the real ``openai`` SDK client:
the network edge only.

The openai SDK (3.x) sends through ``httpx2``, which respx does not patch, so the
client is given ``transport()``: an ``httpx2`` transport whose every request is answered
by the respx router (what ``respx.mock`` does for httpx). Answers are shaped as the
bodies recorded in the SDK's own tests (``tests/lib/chat/test_completions.py`` of
openai/openai-python: ``chat.completion`` objects with ``usage`` and
``completion_tokens_details``).

Like the real service, a request is refused (400, OpenAI's error body) when it leaves a
tool call unanswered or answers a call nobody made, names a tool outside
``^[a-zA-Z0-9_-]{1,64}$``, sends a strict schema with an open object, an optional
property or a ``default``, sends ``reasoning_effort`` to a model that does not reason or
a temperature to one that does, or asks for ``json_object`` without saying "JSON". A
``compatible`` server (vLLM, Ollama) refuses a ``tool_choice`` other than ``auto`` and a
strict schema.

Each call is routed by its stage (``agent.prompts.stage_named`` on the system message
and the first user message) to a queue of answers; an answer is a body (``text``,
``calls``, ``structured``), an ``httpx.Response``, or a callable ``(body) -> either``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import httpx2
import respx

from agent.prompts import stage_named

API = "https://api.openai.com/v1"
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
Answer = dict[str, Any] | httpx.Response | Callable[[dict[str, Any]], Any]


def completion(
    message: dict[str, Any],
    *,
    finish: str = "stop",
    model: str | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    reasoning_tokens: int = 0,
    cached_tokens: int = 0,
) -> dict[str, Any]:
    """A ``chat.completion`` body as the SDK's recorded fixtures have them (``model``
    None: the fake says it served the model asked for)."""
    return {
        "id": "chatcmpl-ABfvbtVnTu5DeC4EFnRYj8mtfOM99",
        "object": "chat.completion",
        "created": 1727346143,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "refusal": None, "content": None, **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
        "system_fingerprint": "fp_5050236cbd",
    }


def text(content: str, **kwargs: Any) -> dict[str, Any]:
    return completion({"content": content}, **kwargs)


def structured(value: Any, **kwargs: Any) -> dict[str, Any]:
    return text(json.dumps(value), **kwargs)


def calls(*calls: tuple[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Tool calls; an argument that is not a str is sent as its JSON."""
    tool_calls = [
        {
            "id": f"call_{abs(hash((name, str(args)))) % 10**8:08d}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for name, args in calls
    ]
    return completion({"tool_calls": tool_calls}, finish="tool_calls", **kwargs)


def error(status: int, message: str, **headers: str) -> httpx.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return httpx.Response(status, json=body, headers=headers)


class OpenAIAPI:
    """``POST /chat/completions`` on ``router``; ``requests`` keeps every body received."""

    def __init__(
        self,
        router: respx.MockRouter,
        script: dict[str, list[Answer] | Callable[[dict[str, Any]], Any]],
        *,
        base_url: str = API,
        compatible: bool = False,
        reasoning: tuple[str, ...] = ("gpt-5", "o1", "o3", "o4"),
    ) -> None:
        self.router = router
        self.script = script
        self.compatible = compatible  # a local server: no strict schema, tool_choice "auto"
        self.reasoning = reasoning
        self.requests: list[dict[str, Any]] = []
        self.route = router.post(f"{base_url.rstrip('/')}/chat/completions")
        self.route.side_effect = self._answer

    def transport(self) -> httpx2.AsyncBaseTransport:
        """An httpx2 transport answered by the respx router."""
        return _RespxTransport(self.router)

    def stages(self) -> list[str]:
        return [stage_of(body) for body in self.requests]

    def for_stage(self, stage: str) -> list[dict[str, Any]]:
        """The bodies received for ``stage`` (``step s1``), in order."""
        return [body for body in self.requests if stage_of(body) == stage]

    def _answer(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        problem = self.refusal(body)
        if problem is not None:
            return error(400, problem)
        stage = stage_of(body)
        entry = self.script.get(stage)
        if entry is None:
            entry = self.script.get(stage.split(" ", 1)[0])
        if entry is None:
            raise AssertionError(f"unscripted OpenAI call for stage {stage!r}")
        answer = entry(body) if callable(entry) else _pop(entry, stage)
        if callable(answer):
            answer = answer(body)
        if isinstance(answer, httpx.Response):
            return answer
        if answer.get("model") is None:
            answer = {**answer, "model": body.get("model")}
        return httpx.Response(200, json=answer)

    def refusal(self, body: dict[str, Any]) -> str | None:
        """What the real service would refuse in ``body`` (None: nothing)."""
        messages = body.get("messages") or []
        if not messages:
            return "[] is too short - 'messages'"
        problem = _tool_pairing(messages)
        if problem:
            return problem
        for tool in body.get("tools") or []:
            name = tool.get("function", {}).get("name", "")
            if not _NAME.match(name):
                return f"Invalid 'tools[0].function.name': string does not match pattern. ({name})"
        model = str(body.get("model", ""))
        reasons = model.startswith(self.reasoning)
        if "reasoning_effort" in body and not reasons:
            return "Unrecognized request argument supplied: reasoning_effort"
        if reasons and body.get("temperature") not in (None, 1):
            return "Unsupported value: 'temperature' does not support 0.2 with this model."
        choice = body.get("tool_choice")
        if self.compatible and choice not in (None, "auto"):
            return '"auto" tool choice is the only one supported by this server'
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_object" and "json" not in json.dumps(messages).lower():
            return "'messages' must contain the word 'json' in some form"
        schema = fmt.get("json_schema") or {}
        if fmt.get("type") == "json_schema" and schema.get("strict"):
            if self.compatible:
                return "strict JSON schemas are not supported by this server"
            return strict_problem(schema.get("schema") or {}, "response_format")
        return None


def stage_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    return stage_named(system or "", user or "")


def _pop(queue: list[Answer], stage: str) -> Answer:
    if not queue:
        raise AssertionError(f"no answer left for stage {stage!r}")
    return queue.pop(0)


def _tool_pairing(messages: list[dict[str, Any]]) -> str | None:
    waiting: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in waiting:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        if role == "assistant":
            waiting = [c["id"] for c in message.get("tool_calls") or []]
    return None


def strict_problem(schema: Any, path: str) -> str | None:
    """Why OpenAI's strict mode refuses ``schema`` (None: it accepts it)."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            problem = strict_problem(item, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if not isinstance(schema, dict):
        return None
    if "default" in schema:
        return f"Invalid schema for {path}: 'default' is not permitted."
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return (
                f"Invalid schema for {path}: 'additionalProperties' is required to be supplied "
                "and to be false."
            )
        props = list((schema.get("properties") or {}).keys())
        if sorted(schema.get("required") or []) != sorted(props):
            return f"Invalid schema for {path}: 'required' must include every key in properties."
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for name, sub in value.items():
                problem = strict_problem(sub, f"{path}.{name}")
                if problem:
                    return problem
        elif key in ("items", "anyOf", "allOf"):
            problem = strict_problem(value, f"{path}.{key}")
            if problem:
                return problem
    return None


class _RespxTransport(httpx2.AsyncBaseTransport):
    def __init__(self, router: respx.MockRouter) -> None:
        self.router = router

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        sent = httpx.Request(
            request.method, str(request.url), headers=list(request.headers.raw), content=body
        )
        answer = await self.router.async_handler(sent)
        return httpx2.Response(
            answer.status_code, headers=list(answer.headers.raw), content=answer.content
        )


def openai_backend(api: OpenAIAPI, settings: Any) -> Any:
    """The real ``OpenAIBackend`` (real SDK client) whose HTTP goes to ``api``."""
    from agent.model.openai_backend import OpenAIBackend

    http = httpx2.AsyncClient(transport=api.transport())
    return OpenAIBackend.from_settings(settings, http_client=http)
