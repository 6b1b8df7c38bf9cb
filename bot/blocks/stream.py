"""The chunks of a streamed investigation (``chat.startStream`` / ``appendStream`` /
``stopStream``), pure: no I/O.

``TaskBoard`` remembers what the stream has shown and turns the live state (a
``StatusView``'s plan) and the engine's events into the chunks that change it: the
objective as the plan's title (``plan_update``); each step a task (``task_update``, its
id ``step-N`` by position, never the model's id) whose title and status replace what was
shown and whose ``details`` append (Slack's rule) — the step's tool calls; and markdown
lines as things happen (reflections, plan changes, the end). ``take()`` hands out the
pending change as a ``Batch`` and ``sent(batch)`` forgets it once Slack took it, so a
refused or rate-limited call is sent again with whatever came meanwhile.

Everything shown is attacker-influenced (plans, reasons, tool names): ``plain`` (defanged,
no angle brackets, no broadcast mentions), clipped; one call carries at most
``MARKDOWN_PER_CALL`` characters of markdown (Slack refuses more than 12,000).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agent.concluder import VERDICT_LABELS, Conclusion
from agent.planner import Plan
from bot.blocks.escape import plain
from bot.blocks.kit import clip
from core.events import Event, Failed, PlanUpdated, Reflected, ToolCalled

Chunk = dict[str, Any]

MARKDOWN_PER_CALL = 11_000  # what socbot sends at most: a margin under Slack's limit
TITLE_CHARS = 250  # task and plan titles (Slack cuts near 256)
DETAIL_CHARS = 300  # one tool-call line of a task's details
LINE_CHARS = 1_000  # one markdown line (a reflection, a plan change)
TASK_STATUS = {
    "pending": "pending",
    "running": "in_progress",
    "done": "complete",
    "failed": "error",
    "cancelled": "error",
}


@dataclass
class Batch:
    """One call's worth of chunks and what they consume once Slack took them."""

    chunks: list[Chunk]
    title: str | None = None
    tasks: dict[str, tuple[str, str]] = field(default_factory=dict)
    details: dict[str, int] = field(default_factory=dict)  # task id → lines sent
    lines: int = 0  # markdown lines sent

    def __bool__(self) -> bool:
        return bool(self.chunks)


class TaskBoard:
    """What the stream shows, and what it has yet to show (see the module docstring)."""

    def __init__(self, indicators: Iterable[str] = ()) -> None:
        self.indicators = tuple(indicators)
        self._title: str | None = None
        self._tasks: dict[str, tuple[str, str]] = {}  # shown: task id → (title, status)
        self._details: dict[str, list[str]] = {}  # pending detail lines per task id
        self._lines: list[str] = []  # pending markdown lines

    def safe(self, text: str, size: int) -> str:
        return clip(plain(" ".join(text.split()), self.indicators), size)

    def say(self, text: str) -> None:
        """A markdown line (text already safe: socbot's own words)."""
        self._lines.append(clip(text, LINE_CHARS))

    def observe(self, event: Event, plan: Plan | None) -> bool:
        """Note what ``event`` adds beyond the plan's state; True when something is new."""
        if isinstance(event, ToolCalled) and plan is not None and event.step_id:
            task = _task_of(plan, event.step_id)
            if task is None:
                return False
            seconds = f"{event.duration_ms / 1000:.1f} s"
            tool = self.safe(event.tool, 80)
            line = f"🔧 {tool} ({seconds})" if event.ok else f"⚠️ {tool} failed ({seconds})"
            self._details.setdefault(task, []).append(clip(line, DETAIL_CHARS))
        elif isinstance(event, Reflected):
            insights = event.reflection.get("insights")
            said = "; ".join(str(i) for i in insights) if isinstance(insights, list) else ""
            self.say("🤔 " + (self.safe(said, LINE_CHARS) or "Reviewing the results…"))
        elif isinstance(event, PlanUpdated) and event.changes:
            self.say("📝 Plan updated: " + self.safe("; ".join(event.changes), LINE_CHARS))
        elif isinstance(event, Failed):
            self.say("❌ Stopped: " + self.safe(event.reason, LINE_CHARS))
        else:
            return False
        return True

    def take(self, plan: Plan | None, *, final: bool = False) -> Batch:
        """The chunks that bring the stream up to ``plan`` and the pending lines."""
        batch = Batch([])
        if plan is not None:
            title = self.safe(plan.objective, TITLE_CHARS) or "Investigation"
            if title != self._title:
                batch.chunks.append({"type": "plan_update", "title": title})
                batch.title = title
            for index, step in enumerate(plan.steps):
                self._task_chunk(batch, f"step-{index + 1}", step.description, step.status, final)
        budget = MARKDOWN_PER_CALL
        for line in self._lines:
            if len(line) + 1 > budget:
                break
            batch.chunks.append({"type": "markdown_text", "text": line + "\n"})
            budget -= len(line) + 1
            batch.lines += 1
        return batch

    def _task_chunk(self, batch: Batch, task: str, text: str, status: str, final: bool) -> None:
        shown = (self.safe(text, TITLE_CHARS) or task, TASK_STATUS.get(status, "pending"))
        if final and shown[1] in ("pending", "in_progress"):
            shown = (shown[0], "error")  # the stream ends: nothing is left running
        details = self._details.get(task, [])
        if shown == self._tasks.get(task) and not details:
            return
        chunk: Chunk = {"type": "task_update", "id": task, "title": shown[0], "status": shown[1]}
        if details:
            chunk["details"] = "".join(f"\n{line}" for line in details)
            batch.details[task] = len(details)
        batch.chunks.append(chunk)
        batch.tasks[task] = shown

    def sent(self, batch: Batch) -> None:
        """Slack took ``batch``: what it showed is now what the stream shows."""
        if batch.title is not None:
            self._title = batch.title
        self._tasks.update(batch.tasks)
        for task, count in batch.details.items():
            del self._details[task][:count]
        del self._lines[: batch.lines]

    @property
    def pending(self) -> bool:
        return bool(self._lines) or any(self._details.values())


def markdown_chars(chunks: Iterable[Chunk]) -> int:
    """The markdown characters a call carries (Slack's 12,000 a call)."""
    return sum(len(str(c.get("text", ""))) for c in chunks if c.get("type") == "markdown_text")


def verdict_line(conclusion: Conclusion, indicators: Iterable[str] = ()) -> str:
    """The stream's last words for a conclusion: the verdict, its summary; the message with
    the buttons follows in the thread."""
    label = VERDICT_LABELS.get(conclusion.verdict, "Verdict")
    summary = clip(plain(" ".join(conclusion.summary.split()), indicators), LINE_CHARS)
    return (
        f"**{label}** · {conclusion.severity} severity · {conclusion.confidence} confidence — "
        f"{summary}\nThe conclusion, with its buttons, follows below."
    )


def _task_of(plan: Plan, step_id: str) -> str | None:
    for index, step in enumerate(plan.steps):
        if step.id == step_id:
            return f"step-{index + 1}"
    return None
