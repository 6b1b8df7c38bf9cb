"""Learning runs: Reflector → counters → Curator → proposals, off the critical path.

A run starts once an investigation has ground truth (an analyst's vote or
correction); the answer was posted long before. Runs are work rows of kind
``learn`` (queued by ``store.queue.learning``, run by ``bot.work.learning``), so a
shutdown or a crash loses none: ``Learner.learn`` is one *attempt* of such a row. A
run has its own token budget and deadline (``learning.token_budget``,
``learning.deadline_s``) and every attempt is recorded in ``learning_runs``: ``done``
(or ``skipped``) with its result, ``failed`` with the error (the votes stay in
``feedback``: nothing is lost), or ``interrupted`` when the row runs again (socbot
stopped, or Gemini was unavailable and ``retry`` was allowed: ``LLMUnavailable`` is
raised for the worker to back off). An attempt that finds an earlier attempt of its
row with a reflection continues from it: tags are counted once per row.

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
from functools import partial
from typing import Any, Protocol

from agent.errors import LLMUnavailable
from agent.model.gateway import CallContext, LLMGateway
from agent.playbook.learning.curator import check, curate
from agent.playbook.learning.models import DeltaOp, ReflectionResult, as_json
from agent.playbook.learning.reflector import Reflector
from agent.playbook.learning.trajectory import GroundTruth, Trajectory
from agent.prompts import Prompts
from config.settings import Settings
from core.events import NullSink
from core.usage import Usage
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookBullet, PlaybookStore, Triggers, new_id
from store.playbook.feedback import FeedbackStore
from store.playbook.learning import LearningStore
from store.schema import LearningStatus

log = logging.getLogger(__name__)

ERROR_CHARS = 500
INTERRUPTED = "socbot stopped during this learning run; it runs again"


class ReviewPoster(Protocol):
    """Shows a proposal to those who may approve it (``bot.decisions.playbook_review`` in Slack)."""

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

    async def learn(self, investigation_id: str) -> dict[str, Any]:
        """One recorded run outside the queue (``socbot`` commands, tests): its result."""
        _, result = await self.attempt(investigation_id)
        return result

    async def attempt(
        self, investigation_id: str, *, work_id: int | None = None, retry: bool = False
    ) -> tuple[LearningStatus, dict[str, Any]]:
        """One recorded attempt (of work row ``work_id``): its status and stored result.

        Failures are recorded and returned, not raised, except an unavailable model when
        ``retry`` (recorded ``interrupted``, then ``LLMUnavailable``) and cancellation
        (recorded ``interrupted``).
        """
        earlier = await self.runs.resume(work_id) if work_id is not None else None
        run_id = await self.runs.start(investigation_id, work_id=work_id)
        usage = Usage()
        ctx = CallContext(
            f"learning:{investigation_id}",
            NullSink(),
            self.settings.token_budget,
            time.monotonic() + self.settings.deadline_s,
            usage,
        )
        result: dict[str, Any] = {}
        end = partial(self.runs.finish, run_id, result=result)
        try:
            async with asyncio.timeout(self.settings.deadline_s):
                status = await self._learn(investigation_id, ctx, result, run_id, earlier)
        except asyncio.CancelledError:
            await end(
                status=LearningStatus.INTERRUPTED, error=INTERRUPTED, tokens=usage.total_tokens
            )
            raise
        except LLMUnavailable as exc:
            log.warning("learning from %s: the model is unavailable", investigation_id)
            status = LearningStatus.INTERRUPTED if retry else LearningStatus.FAILED
            await end(status=status, error=_error(exc), tokens=usage.total_tokens)
            if retry:
                raise
            return status, result
        except Exception as exc:  # recorded, never raised: nothing is lost
            log.warning("learning from %s failed: %s", investigation_id, exc)
            await end(status=LearningStatus.FAILED, error=_error(exc), tokens=usage.total_tokens)
            return LearningStatus.FAILED, result
        await end(status=status, tokens=usage.total_tokens)
        return status, result

    async def _learn(
        self,
        investigation_id: str,
        ctx: CallContext,
        result: dict[str, Any],
        run_id: int,
        earlier: dict[str, Any] | None,
    ) -> LearningStatus:
        row = await self.investigations.get(investigation_id)
        if row is None or not row.record:
            raise LookupError(f"no stored investigation {investigation_id!r}")
        truth = await self.ground_truth(investigation_id, row.verdict)
        if truth is None:
            result["skipped"] = "no analyst feedback"
            return LearningStatus.SKIPPED
        loaded = row.record.get("playbook", {}).get("loaded") or []
        texts = [b for b in [await self.playbook.get(i) for i in loaded] if b is not None]
        trajectory = Trajectory.from_record(
            investigation_id,
            row.record,
            [{"id": b.id, "kind": b.kind, "content": b.content} for b in texts],
        )
        if earlier is not None:  # an earlier attempt of this row reflected and counted tags
            reflection = ReflectionResult.model_validate(earlier)
            result["resumed"] = True
        else:
            reflection = await self.reflector.reflect(
                ctx, trajectory, truth, rounds=self.settings.reflection_rounds
            )
        result["reflection"] = as_json(reflection)
        if earlier is None:
            await self.playbook.count_tags(
                {e.bullet_id: e.tag for e in reflection.bullet_evaluations},
                investigation_id=investigation_id,  # a later run replaces, never adds
            )
            await self.runs.checkpoint(run_id, result)  # an attempt after a crash goes on here
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
        return LearningStatus.DONE

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


def _error(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__)[:ERROR_CHARS]
