"""Learning runs: Reflector → counters → Curator → proposals, off the critical path.

``Learner.submit(investigation_id)`` starts a run in the background once an
investigation has ground truth (an analyst's vote or correction); the answer was
posted long before. A run has its own token budget and deadline
(``learning.token_budget``, ``learning.deadline_s``), is recorded in
``learning_runs`` whatever happens, and never raises: a failure loses nothing (the
votes stay in ``feedback``) and is on record with its error.

Every operation becomes a *proposal* (status ``proposed``), posted for review to
``learning.review_channel`` when there is one (``ReviewPoster``); it reaches a prompt
only once approved. With ``learning.auto_approve`` (off by default) it is approved
at once, by ``socbot:auto``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any, Protocol

from agent.events import NullSink
from agent.gateway import CallContext, LLMGateway
from agent.learning.curator import check, curate
from agent.learning.models import DeltaOp, ReflectionResult, as_json
from agent.learning.reflector import Reflector
from agent.learning.trajectory import GroundTruth, Trajectory
from agent.prompts import Prompts
from agent.usage import Usage
from config.settings import Settings
from store.feedback import FeedbackStore
from store.investigations import InvestigationStore
from store.learning import LearningStore
from store.playbook import PlaybookBullet, PlaybookStore, Triggers, new_id

log = logging.getLogger(__name__)

ERROR_CHARS = 500


class ReviewPoster(Protocol):
    """Shows a proposal to the people who may approve it (``bot.review`` in Slack)."""

    async def post(self, bullet: PlaybookBullet) -> None: ...


class Learner:
    """Runs learning for investigations with ground truth; one instance per process."""

    def __init__(
        self,
        *,
        gateway: LLMGateway,
        prompts: Prompts,
        playbook: PlaybookStore,
        investigations: InvestigationStore,
        feedback: FeedbackStore,
        runs: LearningStore,
        settings: Settings,
        review: ReviewPoster | None = None,
    ) -> None:
        self.gateway = gateway
        self.prompts = prompts
        self.playbook = playbook
        self.investigations = investigations
        self.feedback = feedback
        self.runs = runs
        self.settings = settings.learning
        self.review = review
        self.reflector = Reflector(gateway, prompts)
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, investigation_id: str) -> None:
        """Learn from ``investigation_id`` in the background (no-op when learning is off)."""
        if not self.settings.enabled:
            return
        task = asyncio.create_task(self._background(investigation_id), name="learning run")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for every learning run in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def close(self) -> None:
        """Cancel the runs in flight (shutdown); their rows stay ``running``."""
        for task in list(self._tasks):
            task.cancel()
        await self.drain()

    async def _background(self, investigation_id: str) -> None:
        try:
            await self.learn(investigation_id)
        except Exception:  # fail open: learning must never take the bot down
            log.exception("learning run for %s crashed", investigation_id)

    async def learn(self, investigation_id: str) -> dict[str, Any]:
        """One recorded learning run; returns what was stored as its result."""
        run_id = await self.runs.start(investigation_id)
        usage = Usage()
        ctx = CallContext(
            f"learning:{investigation_id}",
            NullSink(),
            self.settings.token_budget,
            time.monotonic() + self.settings.deadline_s,
            usage,
        )
        result: dict[str, Any] = {}
        try:
            async with asyncio.timeout(self.settings.deadline_s):
                status = await self._learn(investigation_id, ctx, result)
        except Exception as exc:  # recorded, never raised: nothing is lost
            log.warning("learning from %s failed: %s", investigation_id, exc)
            error = (str(exc) or type(exc).__name__)[:ERROR_CHARS]
            await self.runs.finish(
                run_id, status="failed", result=result, error=error, tokens=usage.total_tokens
            )
            return result
        await self.runs.finish(run_id, status=status, result=result, tokens=usage.total_tokens)
        return result

    async def _learn(self, investigation_id: str, ctx: CallContext, result: dict[str, Any]) -> str:
        row = await self.investigations.get(investigation_id)
        if row is None or not row.record:
            raise LookupError(f"no stored investigation {investigation_id!r}")
        truth = await self.ground_truth(investigation_id, row.verdict)
        if truth is None:
            result["skipped"] = "no analyst feedback"
            return "skipped"
        loaded = row.record.get("playbook", {}).get("loaded") or []
        texts = [b for b in [await self.playbook.get(i) for i in loaded] if b is not None]
        trajectory = Trajectory.from_record(
            investigation_id,
            row.record,
            [{"id": b.id, "kind": b.kind, "content": b.content} for b in texts],
        )
        reflection = await self.reflector.reflect(
            ctx, trajectory, truth, rounds=self.settings.reflection_rounds
        )
        result["reflection"] = as_json(reflection)
        await self.playbook.count_tags({e.bullet_id: e.tag for e in reflection.bullet_evaluations})
        if reflection.error and not reflection.insights:
            raise RuntimeError(f"the Reflector failed: {reflection.error}")
        existing = await self.playbook.bullets(["active", "proposed"])
        ops = (
            await curate(
                self.gateway,
                self.prompts,
                ctx,
                reflection.insights,
                existing,
                source=trajectory.source,
            )
            if reflection.insights
            else []
        )
        ops = check(ops, existing)
        result["operations"] = [as_json(op) for op in ops]
        result["proposals"] = [
            (await self._propose(op, trajectory, truth, reflection)).id for op in ops
        ]
        return "done"

    async def ground_truth(self, investigation_id: str, verdict: str | None) -> GroundTruth | None:
        """The analysts' current votes as ground truth (None without any vote)."""
        votes = await self.feedback.votes(investigation_id)
        if not votes:
            return None
        wrong = [v for v in votes if v.value == "incorrect"]
        named = Counter(v.verdict for v in wrong if v.verdict)
        return GroundTruth(
            socbot_verdict=verdict,
            correct=not wrong,
            analyst_verdict=named.most_common(1)[0][0] if named else None,
            comments=[v.comment for v in votes if v.comment],
        )

    async def _propose(
        self, op: DeltaOp, trajectory: Trajectory, truth: GroundTruth, reflection: ReflectionResult
    ) -> PlaybookBullet:
        cap = self.settings.max_evidence_chars
        insight = reflection.insights[0] if reflection.insights else None
        alert = trajectory.alert or {}
        evidence = {
            "alert": f"{alert.get('source', '')}: {alert.get('title', '')}"[:cap] if alert else "",
            "request": trajectory.request[:cap],
            "ground_truth": truth.as_text()[:cap],
            "insight": insight.model_dump() if insight else None,
        }
        bullet = PlaybookBullet(
            id=new_id(),
            content=op.content or f"Retire {', '.join(op.targets)}: {op.reason}",
            kind=op.kind,
            scope=op.scope,
            triggers=Triggers.model_validate(op.triggers.model_dump()),
            status="proposed",
            op=op.op,
            targets=op.targets,
            provenance={
                "source": "learning",
                "proposed_by": "socbot",
                "investigations": [trajectory.investigation_id],
                "reason": op.reason[:cap],
                "evidence": evidence,
            },
        )
        stored = await self.playbook.add(bullet)
        if self.settings.auto_approve:
            return await self.playbook.approve(stored.id, "socbot:auto")
        if self.review is not None:
            try:
                await self.review.post(stored)
            except Exception:  # fail open: the proposal waits for `socbot playbook`
                log.exception("could not post proposal %s for review", stored.id)
        return stored
