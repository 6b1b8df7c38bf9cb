"""Waves: run the ready steps of a plan concurrently, then reflect once, until done.

A step is ready when every step it depends on has finished (done, failed or
cancelled); a step after a failed or cancelled dependency still runs, told what
is missing, unless the reflector cancels it. Steps of a wave run at most
``limits.max_parallel_steps`` at a time. The reflector runs once per wave (not
after the last possible wave); its failure is fail-open. The wave phase stops
on ``achieved``, on the wave limit, and on the work deadline or token budget
(which stop short of the share kept for the conclusion); steps that cannot run
any more are cancelled with the reason, and the limit is recorded in
``run.limits_hit``.

Speculative conclusion (``limits.speculative_conclusion``): when a wave leaves no
step pending, the reflection can only mark the objective achieved, add insights or
add steps, so the conclusion is started at the same time as the reflection
(``agent.concluding.speculate``) and saves one model call's latency. It is discarded when the
reflection adds a step (the loop goes on as without speculation) or a step it
wanted to add hit ``max_steps`` (the conclusion should name that limit). Otherwise
the run uses it although its prompt lacks that last reflection's insights: the
reflector sees a subset of what the concluder sees (objective and step findings;
no alert, no request), so its insights add no fact the concluder lacked, only a
second reading of the same findings. They stay in the record (``reflections``,
and ``speculative_conclusions[].insights_not_seen``). A budget or deadline stop
during that reflection skips nothing, so the conclusion is kept then too. The
reflector is not run after the last possible wave, so nothing is speculated there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Literal

from agent import concluding
from agent.concluder import Speculation
from agent.errors import AgentError, BudgetExceeded, DeadlineExceeded
from agent.executor import StepResult, run_step
from agent.kit import Kit
from agent.planner import Plan, Step
from agent.playbook.selection import for_step
from agent.prompts import alert_summary
from agent.reflector import apply_updates, reflect
from agent.run import Run, ms_since
from core.events import PlanUpdated, Reflected, StepFinished, StepStarted

log = logging.getLogger(__name__)

SUMMARY_CHARS = 500


class WaveRunner:
    """Executes one run's plan wave by wave; collects the reflections' insights."""

    def __init__(self, kit: Kit, run: Run) -> None:
        if run.plan is None:
            raise ValueError("WaveRunner needs a plan")
        self.kit = kit
        self.run = run
        self.plan: Plan = run.plan
        self.limits = kit.limits
        self.insights: list[str] = []
        self.speculations: list[tuple[Speculation, int, int]] = []  # (it, wave, insights seen)

    @property
    def speculation(self) -> Speculation | None:
        """The speculative conclusion the run should use, if the last one still stands."""
        last = self.speculations[-1][0] if self.speculations else None
        return last if last is not None and last.state == "running" else None

    async def close_speculations(self) -> None:
        """Cancel speculative calls still in flight; record what became of each."""
        for spec, wave, seen in self.speculations:
            await spec.close()
            self.run.record.setdefault("speculative_conclusions", []).append(
                {
                    "after_wave": wave,
                    "outcome": spec.state,
                    "reason": spec.reason,
                    "insights_not_seen": self.insights[seen:] if spec.state == "used" else [],
                    "llm_calls": spec.usage.calls,
                    "total_tokens": spec.usage.total_tokens,
                }
            )

    async def run_all(self) -> list[str]:
        """Run waves until the plan is done or a limit stops it; returns the insights."""
        left = max(self.run.work.deadline - time.monotonic(), 0.0)
        timeout = asyncio.timeout(left)
        try:
            async with timeout:
                await self._loop()
        except TimeoutError:
            if not timeout.expired():
                raise
            for step in self.plan.steps:
                if step.status == "running":
                    step.status = "failed"
                    step.findings = "Interrupted: the investigation deadline was reached."
                    await self._finished(step.id, "failed", step.findings)
            await self._stop("deadline", "the deadline was reached")
        return self.insights

    async def _loop(self) -> None:
        wave = 0
        while ready := self.plan.ready():
            if wave >= self.limits.max_waves:
                await self._stop(
                    "max_waves", f"the wave limit ({self.limits.max_waves}) was reached"
                )
                return
            wave += 1
            results = await self._wave(wave, ready)
            for r in results:
                if r.forced_summary:
                    self._limit(
                        f"max_tool_calls_per_step: step {r.step_id} used all "
                        f"{self.limits.max_tool_calls_per_step} tool calls; its summary was forced"
                    )
            hit = next((r.limit for r in results if r.limit), None)
            if hit is not None:
                await self._stop(hit, _LIMIT_REASONS[hit])
                return
            if wave >= self.limits.max_waves:
                continue  # no wave left to act on a reflection; the loop head records the limit
            if await self._reflect(wave, ready) == "stop":
                return

    async def _wave(self, wave: int, steps: list[Step]) -> list[StepResult]:
        started = time.monotonic()
        earlier = [s.model_copy() for s in self.plan.steps if s.status in ("done", "failed")]
        gate = asyncio.Semaphore(self.limits.max_parallel_steps)
        results = await asyncio.gather(*(self._step(s, earlier, gate) for s in steps))
        self.run.record["waves"].append(
            {
                "wave": wave,
                "steps": [s.id for s in steps],
                "duration_ms": ms_since(started),
            }
        )
        return list(results)

    async def _step(self, step: Step, earlier: list[Step], gate: asyncio.Semaphore) -> StepResult:
        async with gate:
            step.status = "running"
            await self.run.sink.emit(
                StepStarted(
                    investigation_id=self.run.id, step_id=step.id, description=step.description
                )
            )
            alert = self.run.request.alert
            states = {s.id: s for s in self.plan.steps}
            prompt = self.kit.prompts.render(
                "step",
                source=self.run.request.source,
                **{
                    **self.run.variables,
                    "alert": alert_summary(alert) if alert else None,
                    "objective": self.plan.objective,
                    "step": step,
                    "earlier": earlier,
                    "incomplete_deps": [
                        states[d] for d in step.depends_on if states[d].status != "done"
                    ],
                    "tool_catalogue": self.kit.registry.catalogue_text(step.tools),
                    "max_calls": self.limits.max_tool_calls_per_step,
                    "playbook": for_step(self.run.variables["playbook"], step.tools),
                },
            )
            result = await run_step(
                self.kit.gateway,
                self.run.work,
                self.run.runner,
                step_id=step.id,
                tools=step.tools,
                system=prompt.system,
                user=prompt.user,
                max_calls=self.limits.max_tool_calls_per_step,
            )
            step.status = result.status
            step.findings = result.findings
            await self._finished(step.id, result.status, result.findings[:SUMMARY_CHARS])
            return result

    async def _reflect(self, wave: int, wave_steps: list[Step]) -> Literal["go", "stop"]:
        in_wave = {s.id for s in wave_steps}
        steps = self.plan.steps
        prompt = self.kit.prompts.render(
            "reflector",
            source=self.run.request.source,
            **{
                **self.run.variables,
                "objective": self.plan.objective,
                "wave": wave,
                "wave_steps": wave_steps,
                "steps": steps,
                "earlier": [
                    s for s in steps if s.id not in in_wave and s.status in ("done", "failed")
                ],
                "pending": self.plan.pending(),
                "cancelled": [s for s in steps if s.status == "cancelled"],
                "insights": self.insights,
                "steps_left": max(self.limits.max_steps - len(steps), 0),
                "waves_left": self.limits.max_waves - wave,
                "tool_catalogue": self.kit.registry.catalogue_text(),
            },
        )
        if self.limits.speculative_conclusion and not self.plan.pending():
            spec = concluding.speculate(self.kit, self.run, self.plan, self.insights)
            self.speculations.append((spec, wave, len(self.insights)))
        try:
            reflection = await reflect(
                self.kit.gateway, self.run.work, system=prompt.system, user=prompt.user
            )
        except BudgetExceeded:
            await self._stop("token_budget", _LIMIT_REASONS["token_budget"])
            return "stop"
        except DeadlineExceeded:
            await self._stop("deadline", _LIMIT_REASONS["deadline"])
            return "stop"
        except AgentError as exc:  # fail open: go on with the plan as it is
            log.warning("reflection after wave %d failed, keeping the plan: %s", wave, exc)
            self.run.record["reflections"].append({"wave": wave, "error": str(exc)})
            return "go"
        self.insights.extend(i for i in reflection.insights if i.strip())
        applied = apply_updates(
            self.plan, reflection.plan_updates, self.kit.registry.names(), self.limits.max_steps
        )
        entry = {
            "wave": wave,
            **reflection.model_dump(),
            "changes": applied.changes,
            "rejected": applied.rejected,
        }
        self.run.record["reflections"].append(entry)
        await self.run.sink.emit(
            Reflected(investigation_id=self.run.id, wave=wave, reflection=entry)
        )
        if applied.step_cap_hit:
            self._limit(f"max_steps: the plan is at its limit of {self.limits.max_steps} steps")
        if (live := self.speculation) is not None and (applied.changes or applied.step_cap_hit):
            live.discard("the reflection added steps" if applied.changes else "max_steps was hit")
        if applied.changes:
            await self._plan_updated(applied.changes, applied.cancelled)
        if reflection.achieved:
            skipped = self.plan.skip_pending("the objective was already achieved")
            if skipped:
                await self._plan_updated(
                    [f"skipped {i}: objective achieved" for i in skipped], skipped
                )
            return "stop"
        return "go"

    async def _stop(self, limit: str, reason: str) -> None:
        skipped = self.plan.skip_pending(reason)
        detail = f"; {len(skipped)} step(s) not run" if skipped else ""
        self._limit(f"{limit}: {reason}{detail}")
        if skipped:
            await self._plan_updated([f"skipped {i}: {reason}" for i in skipped], skipped)

    async def _plan_updated(self, changes: list[str], cancelled: list[str]) -> None:
        self.run.record["plan_versions"].append(self.plan.model_dump())
        for step_id in cancelled:
            step = self.plan.step(step_id)
            await self._finished(step_id, "cancelled", step.findings if step else "")
        await self.run.sink.emit(
            PlanUpdated(investigation_id=self.run.id, plan=self.plan.model_dump(), changes=changes)
        )

    async def _finished(
        self, step_id: str, status: Literal["done", "failed", "cancelled"], summary: str
    ) -> None:
        await self.run.sink.emit(
            StepFinished(
                investigation_id=self.run.id, step_id=step_id, status=status, summary=summary
            )
        )

    def _limit(self, text: str) -> None:
        if text not in self.run.limits_hit:
            self.run.limits_hit.append(text)


_LIMIT_REASONS = {
    "token_budget": "the token budget ran out",
    "deadline": "the deadline was reached",
}
