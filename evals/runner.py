"""Runs a pack through the real engine: one fresh ``Engine`` per attempt on shared wiring.

The wiring (database, HTTP client, model gateway, history, investigation store) is the
one ``cli.runtime.open_runtime`` builds; each attempt gets the engine the CLI would
build, over the scenario's own tools (``evals.sandbox``). Attempts run ``concurrency``
at a time; each is written to the run folder as it ends, so a stopped run resumes.
``max_cost`` is a hard stop: once the attempts' cost reaches it, the ones still
running are cancelled (not written: a later run does them again).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent.engine import Engine, Outcome, Request
from agent.errors import AgentError
from agent.history import History
from agent.model.gateway import LLMGateway
from agent.model.pricing import call_cost, price_for
from agent.run import alert_request_text
from alerts.catalogue import load_catalogue
from alerts.parse import parse_alert
from config.settings import Settings
from core.events import NullSink
from core.scope import NOTHING
from evals.alert_only import alert_only_settings, conclude_alert_only, no_tools
from evals.judge import Judge
from evals.recording import ATTEMPT
from evals.results import Attempt, RunFolder
from evals.sandbox import Sandbox, scenario_registry, scenario_settings
from evals.scenario import Scenario
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from store.schema import InvestigationStatus

if TYPE_CHECKING:
    import httpx

    from store.db.engine import Database

log = logging.getLogger(__name__)

# What one investigation spends when nothing better is known (no earlier attempt):
# the order of magnitude bench/README.md measured for a planned run with review.
GUESS_PROMPT_TOKENS = 90_000
GUESS_OUTPUT_TOKENS = 6_000


@dataclass(frozen=True)
class Wiring:
    """The long-lived parts of ``cli.runtime.Runtime`` an eval run shares."""

    settings: Settings
    db: Database
    http: httpx.AsyncClient
    gateway: LLMGateway
    history: History
    investigations: InvestigationStore


@dataclass
class Stop:
    """Why a run ended early, if it did."""

    reason: str | None = None
    spent_usd: float = 0.0
    cancelled: list[str] = field(default_factory=list)


def attempt_key(scenario: str, repeat: int) -> str:
    return f"{scenario}__r{repeat}"


def estimate_cost(settings: Settings, pending: int, earlier: Sequence[Attempt]) -> float | None:
    """USD for ``pending`` attempts: the mean of earlier attempts, else a list-price guess."""
    costs = [a.cost_usd for a in earlier if a.calls]
    if costs and all(a.unpriced_calls >= a.calls for a in earlier if a.calls):
        return None  # every call so far on a model without a price: unknown, not $0
    if costs:
        return pending * sum(costs) / len(costs)
    price = price_for(settings.gemini.prices, settings.models.main)
    if price is None:
        return None
    each = call_cost(
        price,
        prompt_tokens=GUESS_PROMPT_TOKENS,
        cached_tokens=0,
        output_tokens=GUESS_OUTPUT_TOKENS,
        thinking_tokens=0,
    )
    return pending * each


class EvalRunner:
    def __init__(
        self,
        wiring: Wiring,
        folder: RunFolder,
        *,
        concurrency: int = 1,
        max_cost: float | None = None,
        on_done: Callable[[Attempt], None] | None = None,
        forget: Callable[[str], None] | None = None,
        judge: Judge | None = None,
        alert_only: bool = False,
    ) -> None:
        self.wiring = wiring
        self.folder = folder
        self.concurrency = max(1, concurrency)
        self.max_cost = max_cost
        self.on_done = on_done or (lambda _a: None)
        self.forget = forget or (lambda _k: None)  # a recorder drops an unfinished attempt
        self.catalogue = load_catalogue(wiring.settings.alerts.formats_dir)
        self.stop = Stop()
        self.judge = judge
        self.alert_only = alert_only  # the baseline: no tools, the alert alone
        self._ahead = asyncio.Semaphore(self.concurrency)  # sandboxes prepared ahead

    async def run(self, work: Sequence[tuple[Scenario, int]]) -> Stop:
        """Run every (scenario, repeat) of ``work``; what ended early is in the result."""
        gate = asyncio.Semaphore(self.concurrency)
        tasks = {
            asyncio.create_task(self._guarded(gate, s, r)): attempt_key(s.id, r) for s, r in work
        }
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # a bug in the harness surfaces
            if self.stop.reason and pending:
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                self.stop.cancelled = sorted(tasks[t] for t in pending)
                break
        return self.stop

    async def _guarded(self, gate: asyncio.Semaphore, scenario: Scenario, repeat: int) -> None:
        # The sandbox (registry, DuckDB worker warming up) is prepared before the slot is
        # taken, at most ``concurrency`` ahead, and closed after it is given back: a slot
        # only ever waits for the investigation itself.
        async with self._ahead:
            if self.stop.reason:
                return
            sandbox = await self.prepare(scenario)
            try:
                await gate.acquire()
            except BaseException:  # cancelled while waiting for a slot
                await asyncio.shield(sandbox.close())
                raise
        try:
            if self.stop.reason:
                return
            attempt = await self.investigate(scenario, repeat, sandbox)
        finally:
            gate.release()
            await sandbox.close()
        self.folder.save(attempt)
        self.stop.spent_usd += attempt.cost_usd + attempt.judge_cost_usd
        if self.max_cost is not None and self.stop.spent_usd >= self.max_cost:
            self.stop.reason = f"--max-cost ${self.max_cost:g} reached"
        self.on_done(attempt)

    async def attempt(self, scenario: Scenario, repeat: int) -> Attempt:
        """One scenario through a fresh engine over its own tools (sandbox opened and
        closed around it)."""
        sandbox = await self.prepare(scenario)
        try:
            return await self.investigate(scenario, repeat, sandbox)
        finally:
            await sandbox.close()

    async def prepare(self, scenario: Scenario) -> Sandbox:
        """The scenario's alert, settings and tools; an alert socbot cannot read is kept
        as the reason its attempt fails."""
        try:
            alert = parse_alert(scenario.alert, catalogue=self.catalogue)
        except (AgentError, ValueError) as exc:
            return Sandbox(error=f"the alert is not one socbot reads: {exc}")
        w = self.wiring
        if self.alert_only:
            return Sandbox(alert, alert_only_settings(w.settings), no_tools())
        links = Path(tempfile.mkdtemp(prefix="socbot-eval-"))  # the tables' links (sandbox)
        try:
            settings = scenario_settings(w.settings, scenario, links)
            registry = await asyncio.to_thread(scenario_registry, settings, scenario, w.db, w.http)
        except BaseException:
            shutil.rmtree(links, ignore_errors=True)
            raise
        return Sandbox(alert, settings, registry, links)

    async def investigate(self, scenario: Scenario, repeat: int, sandbox: Sandbox) -> Attempt:
        """One scenario through a fresh engine over its sandbox. An alert socbot cannot
        read, or an engine that crashes (a bug: logged), is a failed attempt; the run
        goes on."""
        w = self.wiring
        model = w.settings.models.main
        if sandbox.alert is None or sandbox.settings is None or sandbox.registry is None:
            return Attempt(
                scenario=scenario.id, repeat=repeat, status=InvestigationStatus.FAILED,
                error=sandbox.error,
            )  # fmt: skip
        alert, settings, registry = sandbox.alert, sandbox.settings, sandbox.registry
        key = attempt_key(scenario.id, repeat)
        self.forget(key)
        token = ATTEMPT.set(key)
        started = time.monotonic()
        try:
            engine = Engine(
                settings=settings,
                gateway=w.gateway,
                registry=registry,
                history=w.history,
                investigations=w.investigations,
                playbook=PlaybookStore(w.db),
            )
            request = Request(
                conversation_id=f"eval-{uuid.uuid4().hex[:12]}",
                text=alert_request_text(alert),
                alert=alert,
                scope=NOTHING,  # a scenario has no past alerts: never the database's others
            )
            if self.alert_only:
                outcome = await conclude_alert_only(engine, request)
            else:
                outcome = await engine.run(request, NullSink())
            elapsed = time.monotonic() - started
            attempt = to_attempt(scenario.id, repeat, outcome, elapsed, model)
            if self.judge is not None and attempt.conclusion is not None:
                await self._judged(attempt, scenario)
        except Exception as exc:  # fail open: one scenario's crash is its failure, not the run's
            log.exception("eval scenario %s crashed", scenario.id)
            error = f"socbot crashed ({type(exc).__name__})"
            elapsed = round(time.monotonic() - started, 3)
            return Attempt(
                scenario=scenario.id, repeat=repeat, status=InvestigationStatus.FAILED, error=error,
                latency_s=elapsed, model=model,
            )  # fmt: skip
        finally:
            ATTEMPT.reset(token)
        return attempt

    async def _judged(self, attempt: Attempt, scenario: Scenario) -> None:
        """Add the judge's grade (its cost is counted apart from the engine's)."""
        assert self.judge is not None and attempt.conclusion is not None
        grade, note, cost = await self.judge.grade(scenario, attempt.conclusion)
        attempt.judge_cost_usd = round(cost, 6)
        attempt.judge_notes = note or (grade.notes if grade else "")
        if grade is not None:
            attempt.judge_score = grade.score
            attempt.judge_criteria = grade.criteria.model_dump()


def to_attempt(scenario: str, repeat: int, outcome: Outcome, elapsed: float, model: str) -> Attempt:
    usage = outcome.usage
    review = outcome.review
    return Attempt(
        scenario=scenario,
        repeat=repeat,
        status=outcome.status,
        investigation_id=outcome.investigation_id,
        conclusion=outcome.conclusion.model_dump(mode="json") if outcome.conclusion else None,
        review_findings=review.findings if review else None,
        review_verified=review.verified if review else None,
        evidence=outcome.evidence,
        error=outcome.error,
        cost_usd=float(usage.get("cost_usd") or 0.0),
        unpriced_calls=int(usage.get("unpriced_calls") or 0),
        latency_s=round(elapsed, 3),
        calls=int(usage.get("llm_calls") or 0),
        tokens=int(usage.get("total_tokens") or 0),
        model=model,
    )
