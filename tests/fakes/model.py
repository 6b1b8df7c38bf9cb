"""A scripted stand-in for Gemini built from real ``google.genai.types`` responses.

Every request names its stage (``agent.prompts.stage_named``): a stage with a system
instruction of its own on its first line ``socbot stage: <stage>``; the investigation
stages, which share one system instruction, on the last ``socbot stage: <stage>`` line
of their task turn (``step <id>`` for a step: ``step s2``). ``ScriptedModel`` routes
each call by that key to a queue of responses::

    model = ScriptedModel({
        "classifier": [json_response({"needs_plan": True, "reason": "alert"})],
        "step s1": [call_response(("query_logs", {"sql": "SELECT 1"})), text_response("ok")],
        "step": lambda request: text_response("any other step"),  # fallback for "step *"
    })

A queue entry may be a response, an exception to raise, a ``Delayed`` response, or
a callable ``(request) -> response`` (sync or async). A key mapped to a callable
serves every call of that stage. An unscripted call raises ``AssertionError``
naming the stage. ``requests`` records every call as ``(model, contents, config)``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from google.genai import types
from pydantic import BaseModel

from agent.prompts import stage_named
from tests.fakes.signals import Changes

DEFAULT_MODEL_VERSION = "gemini-2.5-flash"
FAKE_THOUGHT_SIGNATURE = b"fake-thought-signature"


class ModelRequest(NamedTuple):
    """One recorded call; unpacks as ``(model, contents, config)``."""

    model: str
    contents: list[types.Content]
    config: types.GenerateContentConfig

    @property
    def system(self) -> str:
        """The system instruction as plain text."""
        return system_text(self.config)

    @property
    def stage(self) -> str:
        """The routing key (``agent.prompts.stage_named``), e.g. ``planner``, ``step s1``."""
        return stage_named(self.system, first_user_text(self.contents))

    @property
    def tool_names(self) -> list[str]:
        """Names of the function declarations offered in this call."""
        return [
            d.name or ""
            for tool in self.config.tools or []
            if isinstance(tool, types.Tool)
            for d in tool.function_declarations or []
        ]

    @property
    def allowed_function_names(self) -> list[str] | None:
        tc = self.config.tool_config
        fcc = tc.function_calling_config if tc else None
        return fcc.allowed_function_names if fcc else None


Responder = Callable[
    [ModelRequest], types.GenerateContentResponse | Awaitable[types.GenerateContentResponse]
]


@dataclass(frozen=True)
class Delayed:
    """A scripted response served after ``seconds`` (to make calls overlap)."""

    response: types.GenerateContentResponse | Exception
    seconds: float


Entry = types.GenerateContentResponse | Exception | Delayed | Responder


def system_text(config: types.GenerateContentConfig) -> str:
    si: Any = config.system_instruction
    if si is None:
        return ""
    if isinstance(si, str):
        return si
    if isinstance(si, types.Content):
        return "".join(p.text or "" for p in si.parts or [])
    if isinstance(si, types.Part):
        return si.text or ""
    return "".join(p if isinstance(p, str) else (p.text or "") for p in si)


def first_user_text(contents: Sequence[types.Content]) -> str:
    """The text of the first content's parts (the task turn)."""
    if not contents:
        return ""
    return "".join(p.text or "" for p in contents[0].parts or [])


class ScriptedModel:
    """Implements ``agent.model.llm.ModelBackend`` from per-stage scripts."""

    def __init__(
        self,
        script: Mapping[str, Sequence[Entry] | Responder],
        *,
        delay: float | Mapping[str, float] = 0.0,
    ) -> None:
        self.queues: dict[str, list[Entry]] = {}
        self.responders: dict[str, Responder] = {}
        for key, value in script.items():
            if callable(value):
                self.responders[key] = value
            else:
                self.queues[key] = list(value)
        self.delay = delay
        self.requests: list[ModelRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.changes = Changes()  # notified on each request (``model.changes.until(...)``)

    def requests_for(self, stage: str) -> list[ModelRequest]:
        """Recorded calls whose stage is ``stage`` (or starts with it, e.g. ``"step"``)."""
        return [r for r in self.requests if r.stage == stage or r.stage.startswith(stage + " ")]

    def remaining(self) -> dict[str, int]:
        """Scripted responses not yet served, per key (empty queues left out)."""
        return {k: len(q) for k, q in self.queues.items() if q}

    def _entry(self, stage: str) -> Entry:
        for key in (stage, stage.split(" ", 1)[0]):
            queue = self.queues.get(key)
            if queue:
                return queue.pop(0)
            if key in self.responders:
                return self.responders[key]
        raise AssertionError(
            f"unscripted model call for stage {stage!r}; "
            f"scripted left: {self.remaining()}, callables: {sorted(self.responders)}"
        )

    def _delay_for(self, stage: str) -> float:
        if isinstance(self.delay, Mapping):
            return self.delay.get(stage, self.delay.get(stage.split(" ", 1)[0], 0.0))
        return self.delay

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        request = ModelRequest(model, list(contents), config)
        self.requests.append(request)
        self.changes.notify()
        entry = self._entry(request.stage)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            seconds = self._delay_for(request.stage)
            if isinstance(entry, Delayed):
                seconds, entry = entry.seconds, entry.response
            if seconds:
                await asyncio.sleep(seconds)
            if isinstance(entry, Exception):
                raise entry
            if isinstance(entry, types.GenerateContentResponse):
                return entry
            result = entry(request)
            if inspect.isawaitable(result):
                result = await result
            assert isinstance(result, types.GenerateContentResponse)
            return result
        finally:
            self.in_flight -= 1


# ---------------------------------------------------------------- response builders


def usage(
    *,
    prompt_tokens: int = 1200,
    output_tokens: int = 40,
    thoughts_tokens: int = 0,
    cached_tokens: int = 0,
) -> types.GenerateContentResponseUsageMetadata:
    """Usage metadata shaped like the API's (total = prompt + output + thoughts)."""
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_tokens,
        candidates_token_count=output_tokens,
        thoughts_token_count=thoughts_tokens or None,
        cached_content_token_count=cached_tokens or None,
        total_token_count=prompt_tokens + output_tokens + thoughts_tokens,
        prompt_tokens_details=[
            types.ModalityTokenCount(modality=types.MediaModality.TEXT, token_count=prompt_tokens)
        ],
    )


def response(
    parts: list[types.Part],
    *,
    finish_reason: str = "STOP",
    prompt_tokens: int = 1200,
    output_tokens: int | None = None,
    thoughts_tokens: int = 0,
    cached_tokens: int = 0,
    model_version: str = DEFAULT_MODEL_VERSION,
) -> types.GenerateContentResponse:
    """A one-candidate response with the given model parts."""
    if output_tokens is None:
        size = sum(len(p.text or "") for p in parts) + sum(
            len(json.dumps(p.function_call.args or {})) + 8 for p in parts if p.function_call
        )
        output_tokens = max(1, size // 4)
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=parts),
                finish_reason=types.FinishReason(finish_reason),
                index=0,
            )
        ],
        usage_metadata=usage(
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            thoughts_tokens=thoughts_tokens,
            cached_tokens=cached_tokens,
        ),
        model_version=model_version,
        response_id="fake-response-id",
    )


def text_response(text: str, **kwargs: Any) -> types.GenerateContentResponse:
    """The model answers with text (kwargs: finish_reason, prompt_tokens, ...)."""
    return response([types.Part(text=text)], **kwargs)


def json_response(
    obj: BaseModel | Mapping[str, Any] | list[Any], **kwargs: Any
) -> types.GenerateContentResponse:
    """A structured-output answer: the JSON text of ``obj``."""
    text = obj.model_dump_json() if isinstance(obj, BaseModel) else json.dumps(obj)
    return text_response(text, **kwargs)


def call_response(
    *calls: tuple[str, Mapping[str, Any]], **kwargs: Any
) -> types.GenerateContentResponse:
    """The model asks for one or more function calls in one turn (parallel calls).

    The first part carries a thought signature, as Gemini's thinking models send.
    """
    parts = [
        types.Part(
            function_call=types.FunctionCall(name=name, args=dict(args)),
            thought_signature=FAKE_THOUGHT_SIGNATURE if i == 0 else None,
        )
        for i, (name, args) in enumerate(calls)
    ]
    return response(parts, **kwargs)


def blocked_response(reason: str = "SAFETY") -> types.GenerateContentResponse:
    """The prompt itself was blocked: no candidates, ``promptFeedback.blockReason``."""
    return types.GenerateContentResponse(
        prompt_feedback=types.GenerateContentResponsePromptFeedback(
            block_reason=types.BlockedReason(reason)
        ),
        usage_metadata=usage(output_tokens=0),
        model_version=DEFAULT_MODEL_VERSION,
    )


def function_response_content(
    name: str, result: Mapping[str, Any], *more: tuple[str, Mapping[str, Any]]
) -> types.Content:
    """The user turn that answers function calls (one part per call, in order)."""
    pairs = [(name, result), *more]
    return types.Content(
        role="user",
        parts=[types.Part.from_function_response(name=n, response=dict(r)) for n, r in pairs],
    )
