"""The engine: classify → (direct loop | plan → waves of steps → reflect → conclude).

``Engine.run`` reads like the diagram in DESIGN.md. Every run is an investigation
row plus an append-only trace (every progress event goes to the trace recorder and
to the caller's sink). Hard limits always hold: steps, waves, tool calls per step,
a wall-clock deadline and a token budget; a slice of the deadline and budget is
kept for the conclusion, so a run that hits a limit still concludes and says so.
With ``limits.speculative_conclusion`` the conclusion is started beside the last
reflection when no step is pending, and used unless that reflection adds a step
(``agent.waves`` explains the rule; ``agent.concluder.Speculation`` the mechanics).
The run's state and record live in ``agent.run``, the direct mode in ``agent.direct``,
the waves of steps and reflections in ``agent.waves`` and the conclusion and its
review in ``agent.concluding``.

Dependency policy: a step whose dependency failed or was cancelled still runs
after it (its prompt names the missing dependency) unless the reflector cancels
it; a cancelled step is never run.

``run`` never raises for model, tool or limit failures (``Outcome.status`` is
``failed`` with a one-sentence ``error``); on cancellation it records the
investigation as cancelled and re-raises ``asyncio.CancelledError``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from random import Random

from agent import concluding, direct
from agent.classifier import classify
from agent.concluder import to_markdown
from agent.errors import AgentError, LLMUnavailable
from agent.history import History
from agent.kit import Kit
from agent.model.gateway import LLMGateway
from agent.planner import Plan, make_plan
from agent.playbook import use as team
from agent.playbook.learning.corrections import Corrections
from agent.playbook.use import PlaybookSource
from agent.prompts import Prompts, history_text
from agent.pseudonyms import ConversationMaps, privacy_record
from agent.review.critic import Reviewer
from agent.run import (
    Mode,
    Outcome,
    Request,
    Run,
    close_run,
    failed,
    history_user_text,
    ms_since,
    open_run,
    outcome,
    record_ended,
)
from agent.waves import WaveRunner
from config.settings import Settings
from core.events import Answered, Concluded, ModeChosen, PlanCreated, Sink
from core.quality import drawn
from store.investigations.runs import InvestigationStore
from store.schema import InvestigationStatus
from tools.base import ToolRegistry

__all__ = ["Engine", "Outcome", "Request"]

log = logging.getLogger(__name__)


class Engine:
    """Runs investigations; one instance serves many concurrent runs."""

    def __init__(
        self,
        *,
        gateway: LLMGateway,
        registry: ToolRegistry,
        history: History,
        investigations: InvestigationStore,
        settings: Settings,
        prompts: Prompts | None = None,
        playbook: PlaybookSource | None = None,
        corrections: Corrections | None = None,
        rng: Random | None = None,
    ) -> None:
        self.gateway = gateway
        self.registry = registry
        self.history = history
        self.investigations = investigations
        self.settings = settings
        self.limits = settings.limits
        self.prompts = prompts or Prompts()
        self.reviewer = Reviewer(gateway, self.prompts, settings.review)
        self.kit = Kit(gateway, registry, self.prompts, self.reviewer, history, settings)
        self.playbook = playbook
        self.corrections = corrections  # thread corrections as votes (set by `serve`)
        self.rng = rng or Random()  # draws the playbook's holdout (learning.holdout_share)
        self.maps = ConversationMaps(investigations.db, settings)  # [privacy]

    async def run(self, request: Request, sink: Sink) -> Outcome:
        """Investigate or answer ``request``, emitting progress events to ``sink``."""
        privacy = await self.maps.open(request.conversation_id, request.alert)
        run = await open_run(
            request,
            sink,
            investigations=self.investigations,
            registry=self.registry,
            settings=self.settings,
        )
        if privacy is not None:  # every call of the run crosses the seam with this map
            run.work.privacy = run.final.privacy = run.review_ctx.privacy = privacy
        try:
            result = await self._execute(run)
        except asyncio.CancelledError:
            self._note(run)
            await record_ended(
                self.investigations,
                run,
                InvestigationStatus.CANCELLED,
                "The investigation was cancelled.",
            )
            raise
        except Exception:  # a bug: record the run as failed, then let it surface
            log.exception("investigation %s crashed", run.id)
            self._note(run)
            await record_ended(
                self.investigations,
                run,
                InvestigationStatus.FAILED,
                "socbot hit an internal error.",
            )
            raise
        finally:
            if privacy is not None:  # what the model saw stays the same in a follow-up
                await self.maps.keep(request.conversation_id, privacy)
        self._note(run)
        await close_run(self.investigations, result)
        return result

    @staticmethod
    def _note(run: Run) -> None:
        """The run's pseudonyms in its record (counts and the map's id, never a value)."""
        if run.work.privacy is not None:
            record = privacy_record(run.request.conversation_id, run.work.privacy)
            run.record["privacy"] = record

    async def _execute(self, run: Run) -> Outcome:
        history = history_text(await self.history.load(run.request.conversation_id))
        run.variables["history"] = history
        mode, reason = await self._choose_mode(run)
        run.mode = mode
        await run.sink.emit(ModeChosen(investigation_id=run.id, mode=mode, reason=reason))
        try:
            if mode == "direct":
                return await self._noted(run) or await direct.answer(self.kit, run)
            return await self._planned(run)
        except AgentError as exc:
            result = await failed(run, str(exc))
            result.unavailable = isinstance(exc, LLMUnavailable)
            return result

    async def _noted(self, run: Run) -> Outcome | None:
        """A correction of the thread's verdict: recorded as a vote, acknowledged, learned from."""
        said = run.record.get("classification") or {}
        if not said.get("feedback") or self.corrections is None:
            return None
        text = await self.corrections.note(run.request, said.get("verdict"))
        if text is None:
            return None
        await self.history.append(run.request.conversation_id, run.request.text, text, run.id)
        await run.sink.emit(Answered(investigation_id=run.id, text=text))
        return outcome(run, InvestigationStatus.ANSWERED, answer=text)

    async def _choose_mode(self, run: Run) -> tuple[Mode, str]:
        if run.request.mode is not None:
            return run.request.mode, "the alert policy asks for this mode"
        if run.request.alert is not None:
            return "planned", "alerts are always investigated with a plan"
        prompt = self.prompts.render("classifier", **run.variables)
        try:
            verdict = await classify(self.gateway, run.work, system=prompt.system, user=prompt.user)
        except AgentError as exc:  # fail open: answer directly
            log.warning("classifier failed, answering directly: %s", exc)
            return "direct", "the classifier failed; answering directly"
        run.record["classification"] = verdict.model_dump()
        return ("planned" if verdict.needs_plan else "direct"), verdict.reason

    async def _planned(self, run: Run) -> Outcome:
        holdout = self.settings.learning.holdout_share
        await team.load(
            run, self.playbook, self.settings.playbook, held_out=drawn(holdout, self.rng)
        )
        plan = await self._plan(run)
        waves = WaveRunner(self.kit, run)
        try:
            insights = await waves.run_all()
            conclusion, by_model = await concluding.conclude_plan(
                self.kit, run, plan, insights, waves.speculation
            )
        finally:
            await waves.close_speculations()
        conclusion = await concluding.review(self.kit, run, plan, insights, conclusion, by_model)
        await team.cited(run, "concluder", conclusion.used_bullets)
        await team.settle(run, self.playbook)
        summary = f"Objective: {plan.objective}\n\n{to_markdown(conclusion, None, run.limits_hit)}"
        await self.history.append(
            run.request.conversation_id, history_user_text(run.request), summary, run.id
        )
        await run.sink.emit(
            Concluded(
                investigation_id=run.id,
                conclusion=conclusion.model_dump(),
                limits_hit=run.limits_hit,
            )
        )
        return outcome(run, InvestigationStatus.CONCLUDED, conclusion=conclusion)

    async def _plan(self, run: Run) -> Plan:
        started = time.monotonic()
        prompt = self.prompts.render(
            "planner",
            source=run.request.source,
            **run.variables,
        )
        plan = await make_plan(
            self.gateway,
            run.work,
            system=prompt.system,
            user=prompt.user,
            tool_names=self.registry.names(),
            max_steps=self.limits.max_steps,
        )
        run.plan = plan
        await team.cited(run, "planner", plan.used_bullets)
        run.record["plan_versions"].append(plan.model_dump())
        run.record["timings"]["plan_ms"] = ms_since(started)
        await run.sink.emit(PlanCreated(investigation_id=run.id, plan=plan.model_dump()))
        return plan
