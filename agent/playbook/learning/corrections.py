"""A correction written in the thread ("FP — that's our scanner") is feedback, not a question.

The classifier says so (``Classification.feedback``, with the verdict the analyst
names). ``Corrections.note`` then records it as that analyst's vote on the thread's
latest concluded investigation (socbot's own record; nothing else can be voted on),
starts learning from it, and returns the acknowledgement the engine posts instead of
an answer. Without an analyst (terminal chat) or a concluded investigation in the
thread, it returns None and the message is answered as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from agent.concluder import VERDICT_LABELS
from agent.run import Request
from store.playbook.feedback import FeedbackStore

log = logging.getLogger(__name__)

COMMENT_CHARS = 1000


class Corrections:
    """Turns a thread correction into a vote and a learning run."""

    def __init__(
        self, feedback: FeedbackStore, learn: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self.feedback = feedback
        self.learn = learn

    async def note(self, request: Request, verdict: str | None) -> str | None:
        """Record the correction; the acknowledgement, or None when there is nothing to vote on."""
        if not request.user:
            return None
        target = await self.feedback.latest_concluded(request.conversation_id)
        if target is None:
            return None
        named = verdict if verdict in VERDICT_LABELS else None
        agrees = named is not None and named == target.verdict
        voted = await self.feedback.vote(
            target.id,
            request.user,
            "correct" if agrees else "incorrect",
            verdict=None if agrees else named,
            comment=request.text[:COMMENT_CHARS],
            source="thread",
        )
        log.info("thread feedback on %s from %s", target.id, request.user)
        if self.learn is not None and voted != "same":  # the same opinion is learnt once
            await self.learn(target.id)
        if agrees:
            return "Noted: you confirm the verdict. Thanks, it counts as your vote."
        right = f" (right verdict: {VERDICT_LABELS[named]})" if named else ""
        return (
            f"Noted: I recorded your correction of my verdict{right} as your vote. "
            "What I learn from it goes to the team playbook only once a reviewer approves it."
        )
