"""Tool loops: one per plan step, and the direct-mode loop.

A step's loop offers the model only the step's tools (declarations; the registry
re-checks every call with ``allowed=``), dispatches parallel calls of one turn
concurrently, sends results back wrapped as untrusted data (already truncated by
the registry; errors are data too), and after ``max_calls`` forces a summary
turn with function calling off. Every dispatched call emits ``ToolCalled`` and
gets an evidence reference (``s2#3``, see ``agent.review.evidence``) that travels with its
result to the model and is recorded, with the result, in ``ToolRunner.evidence``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from google.genai import types

from agent.approving import Asking, RunApprover
from agent.errors import AgentError, BudgetExceeded, DeadlineExceeded
from agent.model.fence import Fence, user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.review.evidence import Evidence
from core.events import STORED_RESULT_CHARS, Sink, ToolCalled
from core.scope import NOTHING
from tools.base import Budget, ToolRegistry, ToolResult

log = logging.getLogger(__name__)

ERROR_CHARS = 600  # a failed call's reason, as the trace keeps it
FINDINGS_CHARS = 4000  # a step's findings as later prompts see them
FORCED_SUMMARY_REQUEST = (
    "The tool call budget is spent: no more tools can be called. Write your final "
    "answer now from what the tool results above show, and say what you could not check."
)
CALL_LIMIT_ERROR = "not run: the tool call limit was reached; answer with what you have"


@dataclass
class LoopResult:
    """How a tool loop ended."""

    text: str
    tool_calls: int
    forced_summary: bool


@dataclass
class StepResult:
    """A finished step: its status, findings and why it stopped, when that matters."""

    step_id: str
    status: Literal["done", "failed"]
    findings: str
    tool_calls: int = 0
    forced_summary: bool = False
    limit: Literal["token_budget", "deadline"] | None = None


CUT_OFF = "timed out: the call was still running when the investigation was stopped"


class ToolRunner:
    """Dispatches the model's function calls through the registry, concurrently."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        investigation_id: str,
        sink: Sink,
        fence: Fence,
        budget: Budget | None = None,
        request: Asking | None = None,
    ) -> None:
        self.registry = registry
        self.scope = request.scope if request is not None else NOTHING  # fail closed
        self.approver = None
        if request is not None and request.approver is not None:
            self.approver = RunApprover(
                request.approver,
                sink,
                investigation_id=investigation_id,
                conversation_id=request.conversation_id,
                requested_by=request.user,
            )
        self.investigation_id = investigation_id
        self.sink = sink
        self.fence = fence
        self.budget = budget or Budget()
        self.evidence = Evidence()

    async def run(
        self,
        calls: list[types.FunctionCall],
        *,
        allowed: list[str],
        step_id: str | None,
        budget_left: int,
        deadline: float | None = None,
    ) -> list[types.Part]:
        """Run up to ``budget_left`` calls at once; the rest get an error result. A call
        still running at ``deadline`` is stopped and answered with an error."""
        runnable = calls[: max(budget_left, 0)]
        refs = [self.evidence.next_ref(step_id) for _ in runnable]  # in call order
        results = await asyncio.gather(
            *(
                self._one(c, ref, allowed, step_id, deadline)
                for c, ref in zip(runnable, refs, strict=True)
            )
        )
        parts = []
        for call, ref, result in zip(runnable, refs, results, strict=True):
            self.evidence.add(ref, step_id, result)
            parts.append(self._part(call, ref, result))
        for call in calls[len(runnable) :]:
            parts.append(_response_part(call, {"error": CALL_LIMIT_ERROR}))
        return parts

    async def _one(
        self,
        call: types.FunctionCall,
        ref: str,
        allowed: list[str],
        step_id: str | None,
        deadline: float | None,
    ) -> ToolResult:
        name = call.name or ""
        args: dict[str, Any] = dict(call.args or {})
        started = time.monotonic()
        try:
            result = await self.registry.dispatch(
                name,
                args,
                allowed=allowed,
                investigation_id=self.investigation_id,
                budget=self.budget,
                deadline=deadline,
                approver=self.approver,
                scope=self.scope,
            )
        except asyncio.CancelledError:  # the run's own deadline (or a stop) came first
            await self._cut_off(name, args, ref, step_id, started)
            raise
        await self.sink.emit(
            ToolCalled(
                investigation_id=self.investigation_id,
                step_id=step_id,
                ref=ref,
                tool=name,
                args=args,
                ok=result.ok,
                duration_ms=round(result.duration_ms, 1),
                result_chars=result.chars,
                truncated=result.truncated,
                result_preview=(result.whole or result.as_json())[:STORED_RESULT_CHARS],
                error=None if result.ok else _error_text(result.data),
            )
        )
        return result

    async def _cut_off(
        self, name: str, args: dict[str, Any], ref: str, step_id: str | None, started: float
    ) -> None:
        """A call cancelled mid-flight stays in the trace, as timed out."""
        with contextlib.suppress(Exception):  # fail open: the cancellation goes on regardless
            await self.sink.emit(
                ToolCalled(
                    investigation_id=self.investigation_id,
                    step_id=step_id,
                    ref=ref,
                    tool=name,
                    args=args,
                    ok=False,
                    duration_ms=round((time.monotonic() - started) * 1000, 1),
                    result_chars=0,
                    truncated=False,
                    error=CUT_OFF,
                )
            )

    def _part(self, call: types.FunctionCall, ref: str, result: ToolResult) -> types.Part:
        key = "output" if result.ok else "error"
        label = f"result of {result.name}" if result.ok else f"error from {result.name}"
        return _response_part(call, {"ref": ref, key: self.fence(label, result.as_json())})


def _response_part(call: types.FunctionCall, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call.id, name=call.name, response=response)
    )


async def tool_loop(
    gateway: LLMGateway,
    ctx: CallContext,
    runner: ToolRunner,
    *,
    stage: str,
    system: str,
    contents: list[types.Content],
    tools: list[str],
    max_calls: int,
    step_id: str | None = None,
) -> LoopResult:
    """Call the model until it answers in text or ``max_calls`` tool calls are spent."""
    contents = list(contents)
    declarations = runner.registry.declarations(tools)
    used = 0
    while used < max_calls and declarations:
        turn = await gateway.generate(
            ctx, stage=stage, system=system, contents=contents, tools=declarations, allowed=tools
        )
        contents.append(turn.content)
        if not turn.function_calls:
            return LoopResult(text=turn.text.strip(), tool_calls=used, forced_summary=False)
        parts = await runner.run(
            turn.function_calls,
            allowed=tools,
            step_id=step_id,
            budget_left=max_calls - used,
            deadline=ctx.deadline,
        )
        used += min(len(turn.function_calls), max_calls - used)
        contents.append(types.Content(role="user", parts=parts))
    forced = used >= max_calls and bool(declarations)
    if forced:
        contents.extend(user_turn(FORCED_SUMMARY_REQUEST))
    turn = await gateway.generate(
        ctx,
        stage=stage,
        system=system,
        contents=contents,
        tools=declarations or None,
        allowed=tools,
        tool_mode="NONE",
    )
    return LoopResult(text=turn.text.strip(), tool_calls=used, forced_summary=forced)


async def run_step(
    gateway: LLMGateway,
    ctx: CallContext,
    runner: ToolRunner,
    *,
    step_id: str,
    tools: list[str],
    system: str,
    user: str,
    max_calls: int,
) -> StepResult:
    """Run one step's tool loop; model and limit failures end the step, not the run."""
    try:
        result = await tool_loop(
            gateway,
            ctx,
            runner,
            stage=f"step {step_id}",
            system=system,
            contents=user_turn(user),
            tools=tools,
            max_calls=max_calls,
            step_id=step_id,
        )
    except BudgetExceeded as exc:
        return StepResult(step_id, "failed", str(exc), limit="token_budget")
    except DeadlineExceeded as exc:
        return StepResult(step_id, "failed", str(exc), limit="deadline")
    except AgentError as exc:
        log.warning("step %s failed: %s", step_id, exc)
        return StepResult(step_id, "failed", f"The step failed: {exc}")
    findings = result.text or "The step ended without a summary."
    if len(findings) > FINDINGS_CHARS:
        findings = findings[:FINDINGS_CHARS] + " …[findings truncated]"
    return StepResult(
        step_id,
        "done",
        findings,
        tool_calls=result.tool_calls,
        forced_summary=result.forced_summary,
    )


def _error_text(data: dict[str, Any]) -> str:
    """A failed call's reason, as the model was told it (clipped for the trace)."""
    error = data.get("error", data)
    return str(error)[:ERROR_CHARS]
