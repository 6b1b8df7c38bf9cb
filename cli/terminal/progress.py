"""The terminal progress sink: a live plan checklist plus a log of tool calls.

Everything goes to stderr so that stdout carries only the result (Markdown or
JSON). On an interactive terminal the plan checklist is a rich ``Live`` region
redrawn as steps start and finish, with tool calls and reflections printed above
it; elsewhere (pipes, CI, tests) the same information is printed line by line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from agent.review.critic import Review
from core.events import (
    Answered,
    Concluded,
    Event,
    Failed,
    LLMCalled,
    ModeChosen,
    PlanCreated,
    PlanUpdated,
    Reflected,
    Reviewed,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
)

_ICONS = {
    "pending": ("○", "dim"),
    "running": ("▶", "bold yellow"),
    "done": ("✓", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("x", "dim strike"),
}
_ARGS_CHARS = 120


@dataclass
class _StepView:
    id: str
    description: str
    status: str = "pending"
    tool_calls: int = 0


@dataclass
class _PlanView:
    objective: str = ""
    steps: dict[str, _StepView] = field(default_factory=dict)

    def load(self, plan: dict[str, Any]) -> None:
        self.objective = str(plan.get("objective", ""))
        previous = self.steps
        self.steps = {}
        for raw in plan.get("steps", []):
            if not isinstance(raw, dict):
                continue
            step_id = str(raw.get("id", "?"))
            view = _StepView(step_id, str(raw.get("description", "")))
            known = previous.get(step_id)
            view.status = str(raw.get("status") or (known.status if known else "pending"))
            view.tool_calls = known.tool_calls if known else 0
            self.steps[step_id] = view


class TerminalProgress:
    """A ``Sink`` rendering engine events with rich. Use as a context manager."""

    def __init__(self, console: Console | None = None, *, verbose: bool = False) -> None:
        self.console = console or Console(stderr=True)
        self.verbose = verbose
        self.plan = _PlanView()
        self._live: Live | None = None
        self.investigation_id = ""
        self._failure: str | None = None

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_exc: object) -> None:
        """Leave the checklist on screen, then say how the run ended if it did not conclude:
        one line for a failure, or for Ctrl-C (the engine's own "cancelled" failure is
        not repeated)."""
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            self._cancel_running_steps()
            self.close()
            where = f" (investigation {self.investigation_id})" if self.investigation_id else ""
            self.console.print(f"[yellow]cancelled[/]{escape(where)}", highlight=False)
            return
        self.close()
        if self._failure is not None:
            self._print(f"[red]failed:[/] {escape(self._failure)}")
            self._failure = None

    def close(self) -> None:
        """Stop the live region, leaving the last checklist on screen."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    async def emit(self, event: Event) -> None:
        """Render one event (never raises for an event type it does not know)."""
        if isinstance(event, PlanCreated | PlanUpdated):
            self.plan.load(event.plan)
            if isinstance(event, PlanUpdated):
                for change in event.changes:
                    self._print(f"[cyan]plan updated[/]: {escape(change)}")
            self._show_plan()
        elif isinstance(event, StepStarted | StepFinished):
            self._step(event)
        elif isinstance(event, ToolCalled):
            self._tool(event)
        else:
            self._other(event)

    def _step(self, event: StepStarted | StepFinished) -> None:
        step = self.plan.steps.get(event.step_id)
        if step is None:
            step = self.plan.steps[event.step_id] = _StepView(event.step_id, "")
        if isinstance(event, StepStarted):
            step.status = "running"
            step.description = step.description or event.description
        else:
            step.status = event.status
        if self._live is not None:
            self._live.update(self._checklist(), refresh=True)
            return
        if isinstance(event, StepStarted):
            self._print(f"[bold yellow]▶ {escape(step.id)}[/] {escape(step.description)}")
        else:
            icon, style = _ICONS.get(event.status, ("?", ""))
            summary = _first_line(event.summary, 160)
            self._print(f"[{style}]{icon} {escape(step.id)}[/] {escape(summary)}")

    def _tool(self, event: ToolCalled) -> None:
        if event.step_id and event.step_id in self.plan.steps:
            self.plan.steps[event.step_id].tool_calls += 1
        args = _clip(", ".join(f"{k}={v!r}" for k, v in event.args.items()), _ARGS_CHARS)
        where = f"{event.step_id} " if event.step_id else ""
        outcome = "[green]ok[/]" if event.ok else "[red]error[/]"
        if not event.ok and event.error:
            outcome += f" [red]{escape(_first_line(event.error, _ARGS_CHARS))}[/]"
        size = f"{event.result_chars} chars" + (", truncated" if event.truncated else "")
        self._print(
            f"  [dim]{escape(where)}→[/] [bold]{escape(event.tool)}[/]({escape(args)}) "
            f"{outcome} [dim]{event.duration_ms:.0f} ms, {size}[/]"
        )

    def _other(self, event: Event) -> None:
        if isinstance(event, Started):
            self.investigation_id = event.investigation_id
            self._print(f"[dim]investigation {escape(event.investigation_id)} ({event.kind})[/]")
        elif isinstance(event, ModeChosen):
            self._print(f"[dim]mode: {event.mode} — {escape(event.reason)}[/]")
        elif isinstance(event, Reflected):
            self._reflected(event)
        elif isinstance(event, LLMCalled) and self.verbose:
            self._print(
                f"  [dim]llm {escape(event.stage)} {escape(event.model)}: "
                f"{event.prompt_tokens}+{event.output_tokens}+{event.thinking_tokens} tokens, "
                f"{event.latency_ms:.0f} ms"
                + (f", ${event.cost_usd:.6f}" if event.cost_usd is not None else "")
                + "[/]"
            )
        elif isinstance(event, Reviewed):
            review = Review.model_validate(event.review)
            self._print(f"[magenta]review[/]: {escape(review.headline())}")
        elif isinstance(event, Concluded):
            for limit in event.limits_hit:
                self._print(f"[yellow]limit reached:[/] {escape(limit)}")
            self.close()
        elif isinstance(event, Answered):
            self.close()
        elif isinstance(event, Failed):
            self._failure = event.reason  # printed on exit, unless the user cancelled

    def _reflected(self, event: Reflected) -> None:
        reflection = event.reflection
        achieved = bool(reflection.get("achieved"))
        self._print(
            f"[magenta]reflection after wave {event.wave}[/]"
            + (" — [green]objective achieved[/]" if achieved else "")
        )
        insights = reflection.get("insights", [])
        for insight in insights if isinstance(insights, list) else []:
            self._print(f"  [magenta]•[/] {escape(_first_line(str(insight), 200))}")

    def _cancel_running_steps(self) -> None:
        for step in self.plan.steps.values():
            if step.status in ("running", "pending"):
                step.status = "cancelled"
        if self._live is not None:
            self._live.update(self._checklist(), refresh=True)

    def _show_plan(self) -> None:
        if self.console.is_terminal:
            if self._live is None:
                self._live = Live(
                    self._checklist(), console=self.console, auto_refresh=False, transient=False
                )
                self._live.start(refresh=True)
            else:
                self._live.update(self._checklist(), refresh=True)
        else:
            self.console.print(self._checklist())

    def _checklist(self) -> RenderableType:
        lines: list[RenderableType] = [
            Text.assemble(("Objective: ", "bold"), self.plan.objective or "(none yet)")
        ]
        for step in self.plan.steps.values():
            icon, style = _ICONS.get(step.status, ("?", ""))
            plural = "s" if step.tool_calls > 1 else ""
            calls = f"  ({step.tool_calls} tool call{plural})" if step.tool_calls else ""
            lines.append(
                Text.assemble((f" {icon} {step.id} ", style), step.description, (calls, "dim"))
            )
        return Group(*lines)

    def _print(self, markup: str) -> None:
        target = self._live.console if self._live is not None else self.console
        target.print(markup, highlight=False, soft_wrap=True)


def _first_line(text: str, limit: int) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _clip(first, limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
