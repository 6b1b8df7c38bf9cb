"""The history policy: what a conversation remembers and what the model sees of it.

Only the user's message and the final answer (direct mode) or "objective +
conclusion" (planned mode) are appended; plans, tool transcripts and reflections
stay in the investigation trace. ``load`` returns the thread as google-genai
contents bounded by ``limits.history_chars``: when the thread is longer, the
oldest turns are compacted into one leading user-role note that keeps the first
line of each old message, so the context stays bounded however long the thread.

Stored messages are untrusted (they contain alert fields and model output); the
engine wraps them as data in its prompts. This module only selects and orders.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.genai import types

from config.settings import Limits
from store.db.engine import Database
from store.investigations.conversations import ConversationStore, Role, StoredMessage

COMPACTED_PREFIX = "Earlier in this thread (compacted):"
TRUNCATED_MARK = " …[truncated]"
_QUESTION_LINE_CHARS = 160
_ANSWER_LINE_CHARS = 240


@dataclass(frozen=True)
class _Line:
    role: Role
    text: str


class History:
    """Loads and appends a conversation's history, bounded for the model."""

    def __init__(self, db: Database, limits: Limits) -> None:
        self.conversations = ConversationStore(db)
        self.limits = limits

    async def load(self, conversation_id: str) -> list[types.Content]:
        """The thread as contents (roles ``user`` / ``model``, oldest first), bounded."""
        messages = await self.conversations.messages(conversation_id)
        return compact(
            [_Line(m.role, m.content) for m in messages if m.content], self.limits.history_chars
        )

    async def messages(self, conversation_id: str) -> list[StoredMessage]:
        """Everything stored for the thread, unbounded (for display, not for prompts)."""
        return await self.conversations.messages(conversation_id)

    async def append(
        self,
        conversation_id: str,
        user_text: str,
        model_text: str,
        investigation_id: str | None,
    ) -> None:
        """Append one turn: the user's message and the final answer / conclusion."""
        await self.conversations.append_many(
            conversation_id, [("user", user_text), ("model", model_text)], investigation_id
        )


def compact(lines: list[_Line], budget: int) -> list[types.Content]:
    """Keep the newest messages whole within ``budget`` chars; summarize the rest."""
    if sum(len(line.text) for line in lines) <= budget:
        return [_content(line.role, line.text) for line in lines]

    note_budget = budget // 4
    recent_budget = budget - note_budget
    start = len(lines)
    used = 0
    while start > 0 and used + len(lines[start - 1].text) <= recent_budget:
        start -= 1
        used += len(lines[start].text)
    # Start the kept part on a user message, so no answer is kept without its question.
    while start < len(lines) and lines[start].role != "user":
        start += 1

    if start == len(lines):  # the newest turn alone is larger than the budget: clip it
        users = [i for i, line in enumerate(lines) if line.role == "user"]
        start = users[-1] if users else len(lines) - 1
        share = recent_budget // (len(lines) - start)
        kept = [_content(line.role, _clip(line.text, share)) for line in lines[start:]]
    else:
        kept = [_content(line.role, line.text) for line in lines[start:]]
    note = _note(lines[:start], note_budget)
    return ([_content("user", note)] if note else []) + kept


def _note(old: list[_Line], budget: int) -> str:
    """One line per old message, newest kept first when the note itself is too long."""
    entries = [
        ("Q: " if line.role == "user" else "A: ")
        + _first_line(
            line.text, _QUESTION_LINE_CHARS if line.role == "user" else _ANSWER_LINE_CHARS
        )
        for line in old
    ]
    if not entries:
        return ""
    kept: list[str] = []
    used = len(COMPACTED_PREFIX) + 40  # room for the "omitted" count
    for entry in reversed(entries):
        if used + len(entry) + 1 > budget:
            break
        kept.append(entry)
        used += len(entry) + 1
    kept.reverse()
    omitted = len(entries) - len(kept)
    head = COMPACTED_PREFIX + (f" ({omitted} older messages omitted)" if omitted else "")
    return "\n".join([head, *kept])


def _first_line(text: str, limit: int) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _clip(first, limit)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(TRUNCATED_MARK))] + TRUNCATED_MARK


def _content(role: Role, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])
