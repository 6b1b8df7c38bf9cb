"""A local fake of the Gemini REST API for benchmarks: an aiohttp server on 127.0.0.1.

The real google-genai client reaches it through ``GeminiSettings.base_url``
(``SOCBOT_GEMINI_BASE_URL``): ``POST /v1beta/models/{model}:generateContent``. Each
call is routed on the stage it names (``agent.prompts.stage_named``: the first
system-instruction line ``socbot stage: <stage>``, or for the investigation stages,
which share one system instruction, the last such line of the task turn; ``step <id>``
for a step) to a ``Responder``: a function of the parsed request that
returns one ``Turn``. Responders are stateless (a step's answer is chosen by how many
model turns its contents already hold), so any number of investigations can run
against one server at once.

Every call waits ``latency_s`` (per stage if a mapping is given) before answering,
answers with ``usageMetadata`` computed from what was received (prompt tokens ≈
characters / 4 of the system instruction, the tool declarations as JSON and the
contents as the model reads them, ``contents_text``; cached
tokens as Gemini's implicit cache would report them, ``bench.prompt_cache``) and is
recorded as a ``CallRecord`` with its start and end (``time.monotonic``), so the
benchmarks can compute the critical path from the server's side.

Explicit context caches (``/v1beta/cachedContents``: create, get, patch, delete) are
``bench.cached_contents``: a generateContent naming ``cachedContent`` is read as the
cached system instruction followed by the request, and reports the cache's tokens as
cached.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agent.prompts import stage_named
from bench.cached_contents import CachedContents, RestError
from bench.loopback import serve
from bench.prompt_cache import ImplicitCache
from bench.thought_signatures import is_gemini3, signature_problem, unsigned_model_turns

CHARS_PER_TOKEN = 4
FAKE_SIGNATURE = base64.b64encode(b"bench-fake-thought-signature").decode()


@dataclass(frozen=True)
class Turn:
    """One model reply: text, or function calls (run in parallel by the engine)."""

    text: str | None = None
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    thoughts_tokens: int = 0

    @staticmethod
    def json(obj: object, thoughts_tokens: int = 0) -> Turn:
        return Turn(text=json.dumps(obj), thoughts_tokens=thoughts_tokens)

    @staticmethod
    def call(*calls: tuple[str, dict[str, Any]], thoughts_tokens: int = 0) -> Turn:
        return Turn(calls=tuple(calls), thoughts_tokens=thoughts_tokens)

    def parts(self, *, sign_text: bool = False) -> list[dict[str, Any]]:
        """The reply's parts: the first function call signed (as Gemini does), and with
        ``sign_text`` (Gemini 3) a text reply too."""
        if self.calls:
            return [
                {
                    "functionCall": {"name": name, "args": args},
                    **({"thoughtSignature": FAKE_SIGNATURE} if i == 0 else {}),
                }
                for i, (name, args) in enumerate(self.calls)
            ]
        signed = {"thoughtSignature": FAKE_SIGNATURE} if sign_text else {}
        return [{"text": self.text or "", **signed}]

    def output_chars(self) -> int:
        if self.calls:
            return sum(len(name) + len(json.dumps(args)) for name, args in self.calls)
        return len(self.text or "")


@dataclass(frozen=True)
class GeminiRequest:
    """What the fake received, parsed: the stage, the body and its size."""

    model: str
    stage: str
    body: dict[str, Any]
    system: str
    prompt_text: str  # system instruction, tool declarations, contents: the cache's view
    prompt_chars: int  # system instruction + contents + tool declarations
    system_chars: int
    contents_chars: int
    tools_chars: int

    @property
    def contents(self) -> list[dict[str, Any]]:
        value = self.body.get("contents")
        return value if isinstance(value, list) else []

    @property
    def model_turns(self) -> int:
        """How many model turns the contents already hold (the step's position)."""
        return sum(1 for c in self.contents if isinstance(c, dict) and c.get("role") == "model")

    @property
    def tool_names(self) -> list[str]:
        names: list[str] = []
        for tool in self.body.get("tools") or []:
            for decl in tool.get("functionDeclarations") or []:
                names.append(str(decl.get("name")))
        return names

    def user_text(self) -> str:
        """All text parts of the contents (history, task, data blocks)."""
        return "\n".join(
            str(p.get("text"))
            for c in self.contents
            for p in c.get("parts") or []
            if isinstance(p, dict) and p.get("text")
        )


Responder = Callable[[GeminiRequest], Turn]


@dataclass
class CallRecord:
    """One generateContent call as the server saw it (monotonic seconds)."""

    stage: str
    model: str
    start: float
    end: float
    prompt_chars: int
    system_chars: int
    contents_chars: int
    tools_chars: int
    text_chars: int  # system instruction + text parts, unescaped (what a reader sees)
    prompt_tokens: int
    output_tokens: int
    thoughts_tokens: int
    cached_tokens: int = 0  # reported as cached (a repeated prefix of at least the minimum)
    repeated_tokens: int = 0  # the longest prefix an earlier request sent (cacheable)
    status: int = 200
    cached_content: str = ""  # the explicit cache the request named, if any


@dataclass
class FakeGemini:
    """Serve scripted Gemini answers with latency; record every call."""

    script: Mapping[str, Responder]
    latency_s: float | Mapping[str, float] = 0.3
    model_version: str = "gemini-2.5-flash"
    calls: list[CallRecord] = field(default_factory=list)
    cache: ImplicitCache = field(default_factory=ImplicitCache)
    cached_contents: CachedContents = field(default_factory=CachedContents)
    base_url: str = ""
    refused_signatures: list[str] = field(default_factory=list)  # Gemini 3's 400s, as sent
    unsigned_turns: int = 0  # Gemini 3 model turns sent back without their signature
    returned_turns: int = 0  # Gemini 3 model turns sent back (signed or not)
    _runner: web.AppRunner | None = None

    async def start(self) -> str:
        """Listen on a free loopback port; returns the base URL for ``GeminiSettings``."""
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/{version}/models/{target}", self._serve)
        app.router.add_post("/{version}/cachedContents", self._caches)
        app.router.add_route("*", "/{version}/cachedContents/{id}", self._caches)
        self._runner, self.base_url = await serve(app)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def reset(self) -> None:
        self.calls.clear()

    def responder(self, stage: str) -> Responder:
        for key in (stage, stage.split(" ", 1)[0]):
            if key in self.script:
                return self.script[key]
        raise KeyError(f"no script for stage {stage!r}")

    def _latency(self, stage: str) -> float:
        if isinstance(self.latency_s, Mapping):
            value = self.latency_s.get(stage, self.latency_s.get(stage.split(" ", 1)[0]))
            return float(value if value is not None else self.latency_s.get("*", 0.0))
        return self.latency_s

    async def _serve(self, request: web.Request) -> web.Response:
        start = time.monotonic()
        model, _, action = request.match_info["target"].partition(":")
        if action != "generateContent":
            return _error(404, "NOT_FOUND", f"unsupported action {action!r}")
        body = await request.json()
        explicit, name = 0, str(body.get("cachedContent") or "")
        if name:
            try:
                body, explicit = self.cached_contents.resolve(model, body)
            except RestError as exc:
                return web.json_response(exc.body, status=exc.code)
        problem = signature_problem(model, body, FAKE_SIGNATURE)
        if problem is not None:  # Gemini 3 refuses a call turn whose signature was dropped
            self.refused_signatures.append(problem)
            return _error(400, "INVALID_ARGUMENT", problem)
        if is_gemini3(model):
            self.unsigned_turns += unsigned_model_turns(body, FAKE_SIGNATURE)
            self.returned_turns += sum(c.get("role") == "model" for c in body.get("contents") or [])
        parsed = parse_request(model, body)
        try:
            turn = self.responder(parsed.stage)(parsed)
        except (KeyError, IndexError, ValueError) as exc:
            record = _record(parsed, start, Turn(text=""), status=400)
            self.calls.append(record)
            return _error(400, "INVALID_ARGUMENT", f"bench script: {exc}")
        await asyncio.sleep(self._latency(parsed.stage))
        record = _record(parsed, start, turn)
        record.repeated_tokens, record.cached_tokens = self.cache.lookup(
            parsed.model, parsed.prompt_text
        )
        if explicit:
            record.cached_tokens, record.cached_content = explicit, name
        response = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": turn.parts(sign_text=is_gemini3(model))},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": _usage(record),
            "modelVersion": model or self.model_version,
            "responseId": f"bench-{len(self.calls)}",
        }
        text = json.dumps(response)
        record.end = time.monotonic()
        self.calls.append(record)
        return web.Response(text=text, content_type="application/json")

    async def _caches(self, request: web.Request) -> web.Response:
        """``cachedContents``: POST creates; GET, PATCH, DELETE on ``cachedContents/{id}``."""
        name = f"cachedContents/{request.match_info['id']}" if "id" in request.match_info else ""
        body = await request.json() if request.can_read_body else {}
        try:
            answer = self.cached_contents.handle(request.method, name, body)
        except RestError as exc:
            return web.json_response(exc.body, status=exc.code)
        return web.json_response(answer)


def parse_request(model: str, body: dict[str, Any]) -> GeminiRequest:
    """Stage and sizes of a generateContent body (REST camelCase shape)."""
    si = body.get("systemInstruction") or body.get("system_instruction") or {}
    system = "".join(str(p.get("text") or "") for p in si.get("parts") or [])
    contents = body.get("contents") or []
    first = (contents[0].get("parts") or []) if contents else []
    task = "".join(str(p.get("text") or "") for p in first)
    stage = stage_named(system, task)
    contents_seen = contents_text(contents)
    tools_json = json.dumps(body.get("tools") or [], ensure_ascii=False)
    contents_chars, tools_chars = len(contents_seen), len(tools_json)
    return GeminiRequest(
        model=model,
        stage=stage,
        body=body,
        system=system,
        prompt_text=system + tools_json + contents_seen,
        prompt_chars=len(system) + contents_chars + tools_chars,
        system_chars=len(system),
        contents_chars=contents_chars,
        tools_chars=tools_chars,
    )


def contents_text(contents: list[Any]) -> str:
    """The contents as the model reads them: each turn's role, then its text parts as text
    (not JSON-escaped: the escaping is the HTTP body's, not tokens) and any other part
    (function call or response) as JSON."""
    out: list[str] = []
    for content in contents:
        if not isinstance(content, dict):
            continue
        out.append(f"{content.get('role', 'user')}:\n")
        for part in content.get("parts") or []:
            text = part.get("text") if isinstance(part, dict) else None
            out.append(text if isinstance(text, str) else json.dumps(part, ensure_ascii=False))
            out.append("\n")
    return "".join(out)


def tokens(chars: int) -> int:
    """Approximate tokens for ``chars`` characters (Gemini: about 4 per token)."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def _record(parsed: GeminiRequest, start: float, turn: Turn, status: int = 200) -> CallRecord:
    return CallRecord(
        stage=parsed.stage,
        model=parsed.model,
        start=start,
        end=time.monotonic(),
        prompt_chars=parsed.prompt_chars,
        system_chars=parsed.system_chars,
        contents_chars=parsed.contents_chars,
        tools_chars=parsed.tools_chars,
        text_chars=parsed.system_chars + len(parsed.user_text()),
        prompt_tokens=tokens(parsed.prompt_chars),
        output_tokens=max(1, tokens(turn.output_chars())),
        thoughts_tokens=turn.thoughts_tokens,
        status=status,
    )


def _usage(record: CallRecord) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "promptTokenCount": record.prompt_tokens,
        "candidatesTokenCount": record.output_tokens,
        "totalTokenCount": record.prompt_tokens + record.output_tokens + record.thoughts_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": record.prompt_tokens}],
    }
    if record.thoughts_tokens:
        usage["thoughtsTokenCount"] = record.thoughts_tokens
    if record.cached_tokens:
        usage["cachedContentTokenCount"] = record.cached_tokens
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": record.cached_tokens}]
    return usage


def _error(code: int, status: str, message: str) -> web.Response:
    body = {"error": {"code": code, "message": message, "status": status}}
    return web.json_response(body, status=code)
