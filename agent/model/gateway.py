"""The LLM gateway: one place where the engine talks to the model (any provider).

``LLMGateway`` turns an engine request (stage, system instruction, contents, tools)
into one ``GenerateContentConfig``, enforces the investigation's token budget and
deadline before every call, records usage and list-price cost per stage
(``core.usage``, ``agent.model.pricing``), emits ``LLMCalled`` and turns odd finish
reasons into the engine's errors. Structured
calls parse the model's JSON into a pydantic model with one repair attempt. What a
reply means (text, calls, refusals, JSON) is read in ``agent.model.replies``.

Nothing one-off runs on the event loop per call: the google-genai types are built when
the gateway is, and each output schema's JSON schema once (``agent.model.genai_types``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from google.genai import types
from pydantic import BaseModel

from agent.errors import BudgetExceeded, DeadlineExceeded, LLMOutputInvalid
from agent.model.fence import Fence, user_turn
from agent.model.genai_types import build_genai_types, json_schema
from agent.model.llm import ModelBackend
from agent.model.pricing import Pricer
from agent.model.privacy import Pseudonymiser, incoming, outgoing
from agent.model.replies import (
    ModelTurn,
    parse_structured,
    raise_if_refused,
    repair_request,
    turn_from_response,
)
from agent.model.thinking import thinking_config
from config.model_names import canonical
from config.model_names import provider_label as who
from config.settings import GeminiSettings, ModelsSettings
from core.events import LLMCalled, Sink
from core.usage import Usage

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
ToolMode = Literal["AUTO", "ANY", "NONE"]

Maps = Callable[[], Pseudonymiser] | None  # [privacy] on: a map for calls that bring none
# Worth sending the same request once more: the model garbled its own output.
RETRY_REASONS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"})


@dataclass
class CallContext:
    """Per-investigation state every model call is checked and accounted against."""

    investigation_id: str
    sink: Sink
    token_budget: int
    deadline: float  # a time.monotonic() value
    usage: Usage = field(default_factory=Usage)
    fence: Fence = field(default_factory=Fence)  # the run's data fence (repair turns use it)
    model: str | None = None  # instead of ``models.main`` (a policy rule's); light keeps its
    privacy: Pseudonymiser | None = None  # the conversation's pseudonyms ([privacy])


class LLMGateway:
    """Budgeted, accounted access to the model for every engine stage."""

    def __init__(
        self,
        backend: ModelBackend,
        settings: GeminiSettings,
        models: ModelsSettings | None = None,
        *,
        privacy: Maps = None,
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.models = (models or ModelsSettings()).resolved(settings)
        self.privacy = privacy
        self.pricer = Pricer(settings.prices)
        build_genai_types()

    async def generate(
        self,
        ctx: CallContext,
        *,
        stage: str,
        system: str,
        contents: list[types.Content],
        tools: list[types.FunctionDeclaration] | None = None,
        allowed: list[str] | None = None,
        tool_mode: ToolMode = "AUTO",
        light: bool = False,
        thinking: bool = True,
    ) -> ModelTurn:
        """One model turn (text and/or function calls); a garbled turn is retried once."""
        model = self._model(ctx, light)
        config = self._config(system, model, thinking=thinking, stage=stage)
        if tools:
            config.tools = [types.Tool(function_declarations=tools)]
            config.tool_config = types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode(tool_mode),
                    allowed_function_names=list(allowed)
                    if tool_mode == "ANY" and allowed
                    else None,
                )
            )
        for attempt in (1, 2):
            turn = await self._call(ctx, stage, model, contents, config)
            if turn.function_calls or turn.text.strip():
                if turn.finish_reason not in RETRY_REASONS:
                    return turn
            elif turn.finish_reason == "MAX_TOKENS":
                raise LLMOutputInvalid(
                    f"{who(model)} hit its output token limit in stage {stage!r} before answering."
                )
            log.warning(
                "stage %s: unusable model turn (finish %s), attempt %d",
                stage,
                turn.finish_reason,
                attempt,
            )
        raise LLMOutputInvalid(
            f"{who(model)} returned an unusable reply in stage {stage!r} twice "
            f"(finish reason {turn.finish_reason})."
        )

    async def generate_structured(
        self,
        ctx: CallContext,
        *,
        stage: str,
        system: str,
        contents: list[types.Content],
        schema: type[T],
        light: bool = False,
        thinking: bool = True,
    ) -> T:
        """The model's JSON answer parsed into ``schema``; one repair call on bad output."""
        model = self._model(ctx, light)
        config = self._config(system, model, thinking=thinking, stage=stage)
        config.response_mime_type = "application/json"
        config.response_json_schema = json_schema(schema)
        turn = await self._call(ctx, stage, model, contents, config)
        try:
            return parse_structured(schema, turn)
        except ValueError as exc:
            problem = str(exc)
        log.warning("stage %s: invalid structured output, asking for a repair", stage)
        repair: list[types.Content] = list(contents)
        if turn.content.parts:
            repair.append(turn.content)
        repair.extend(user_turn(repair_request(ctx.fence("validation error", problem))))
        turn = await self._call(ctx, stage, model, repair, config)
        try:
            return parse_structured(schema, turn)
        except ValueError as exc:
            log.warning("stage %s: repair failed: %s", stage, str(exc)[:200])
            raise LLMOutputInvalid(
                f"{who(model)}'s {stage!r} output did not match the expected format "
                "after one repair attempt."
            ) from exc

    def _model(self, ctx: CallContext, light: bool) -> str:
        """The light model for light stages; else the investigation's own (a policy rule
        chose it), else ``models.main`` (all canonical: ``config.model_names``)."""
        if light:
            return self.models.light
        return canonical(ctx.model) if ctx.model else self.models.main

    def _config(
        self, system: str, model: str, *, thinking: bool, stage: str
    ) -> types.GenerateContentConfig:
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=self.settings.temperature,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        config.thinking_config = thinking_config(
            model, stage, thinking=thinking, levels=self.settings.thinking_levels
        )
        return config

    def _check_limits(self, ctx: CallContext, stage: str) -> float:
        """Raise when the budget or deadline is spent; return the seconds left."""
        spent = ctx.usage.total_tokens
        if spent >= ctx.token_budget:
            raise BudgetExceeded(
                f"The token budget of {ctx.token_budget} is spent ({spent} used) "
                f"before stage {stage!r}."
            )
        left = ctx.deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"The investigation deadline passed before stage {stage!r}.")
        return left

    async def _call(
        self,
        ctx: CallContext,
        stage: str,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> ModelTurn:
        left = self._check_limits(ctx, stage)
        seam = ctx.privacy = ctx.privacy or (self.privacy() if self.privacy else None)
        if seam is not None:
            contents, config = outgoing(seam, contents, config)
        started = time.monotonic()
        try:
            async with asyncio.timeout(left):
                response = await self.backend.generate_content(
                    model=model, contents=contents, config=config
                )
        except TimeoutError as exc:
            if time.monotonic() >= ctx.deadline:
                raise DeadlineExceeded(
                    f"The investigation deadline passed during stage {stage!r}."
                ) from exc
            raise
        latency_ms = (time.monotonic() - started) * 1000
        if seam is not None:
            response = incoming(seam, response, config)
        turn = turn_from_response(response)
        await self._record(ctx, stage, model, response, turn, latency_ms)
        raise_if_refused(response, turn, stage, who=who(model))
        return turn

    async def _record(
        self,
        ctx: CallContext,
        stage: str,
        model: str,
        response: types.GenerateContentResponse,
        turn: ModelTurn,
        latency_ms: float,
    ) -> None:
        meta = response.usage_metadata or types.GenerateContentResponseUsageMetadata()
        prompt = meta.prompt_token_count or 0
        output = meta.candidates_token_count or 0
        thoughts = meta.thoughts_token_count or 0
        cached = meta.cached_content_token_count or 0
        cost = self.pricer.cost(
            response.model_version or model,
            model,
            prompt_tokens=prompt,
            cached_tokens=cached,
            output_tokens=output,
            thinking_tokens=thoughts,
        )
        ctx.usage.add(
            stage,
            model=response.model_version or model,
            prompt_tokens=prompt,
            output_tokens=output,
            thinking_tokens=thoughts,
            cached_tokens=cached,
            latency_ms=latency_ms,
            cost_usd=cost,
        )
        await ctx.sink.emit(
            LLMCalled(
                investigation_id=ctx.investigation_id,
                stage=stage,
                model=response.model_version or model,
                prompt_tokens=prompt,
                output_tokens=output,
                thinking_tokens=thoughts,
                cached_tokens=cached,
                latency_ms=round(latency_ms, 1),
                finish_reason=turn.finish_reason,
                cost_usd=None if cost is None else round(cost, 8),
            )
        )
