"""socbot as an MCP server: its tools over a running ``Runtime`` (``socbot mcp``).

``investigate_alert`` (progress notifications as the plan's steps start and end),
``ask`` (a question, with a conversation id for follow-ups), ``get_investigation``,
``search_past_alerts``, ``parse_alert`` and ``search_playbook``. The same engine,
limits and tools as ``socbot investigate`` and ``socbot chat``; calls that would need
a person's approval are denied (nobody can be asked through MCP); past alerts are every
channel's, as at the terminal: the server is the operator's (stdio, or HTTP behind their
token). Failures the caller can act on come back as tool errors (``ToolError``), like the
model's own tools.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from agent.engine import Outcome, Request
from agent.playbook.selection import bm25_scores, tokens
from agent.run import alert_request_text
from alerts.catalogue import FormatError, load_catalogue
from alerts.parse import Alert
from alerts.parse import parse_alert as parse
from cli.common import new_conversation_id
from cli.runtime import Runtime
from cli.terminal.investigate import remember_alert
from core.approvals import NobodyToAsk
from core.events import Event, StepFinished, StepStarted
from core.scope import EVERYTHING
from store.playbook.bullets import PlaybookStore
from store.triage.alerts import AlertStore
from tools.base import Budget

NOBODY = NobodyToAsk("no one can be asked to approve it through MCP")
MAX_ALERT_CHARS = 1_000_000


class Progress:
    """A sink that reports the plan's steps to the MCP client as progress notifications."""

    def __init__(self, ctx: Context) -> None:  # type: ignore[type-arg]
        self.ctx = ctx
        self.steps: dict[str, bool] = {}

    async def emit(self, event: Event) -> None:
        if isinstance(event, StepStarted):
            self.steps.setdefault(event.step_id, False)
            message = f"step {event.step_id} started: {event.description}"
        elif isinstance(event, StepFinished):
            self.steps[event.step_id] = True
            message = f"step {event.step_id} {event.status}"
        else:
            return
        done = sum(self.steps.values())
        await self.ctx.report_progress(done, len(self.steps), message)


def build_server(rt: Runtime) -> MCPServer:
    """The MCP server of ``rt``'s engine and stores."""
    server: MCPServer = MCPServer("socbot", instructions=__doc__)

    @server.tool()
    async def investigate_alert(
        alert: Annotated[str, Field(description="the alert, JSON text (any vendor's shape)")],
        ctx: Context,  # type: ignore[type-arg]
    ) -> dict[str, Any]:
        """Investigate one security alert with Plan & Execute; returns the conclusion."""
        parsed = _alert(alert, rt)
        text = alert_request_text(parsed)
        request = Request(
            new_conversation_id(), text, alert=parsed, approver=NOBODY, scope=EVERYTHING
        )
        outcome = await rt.engine.run(request, Progress(ctx))
        await remember_alert(AlertStore(rt.db), parsed, outcome)  # as `socbot investigate`
        return _result(outcome, request)

    @server.tool()
    async def ask(
        question: Annotated[str, Field(max_length=8000)],
        ctx: Context,  # type: ignore[type-arg]
        conversation_id: Annotated[
            str | None, Field(description="from an earlier answer, to follow up")
        ] = None,
    ) -> dict[str, Any]:
        """Ask socbot a security question; follow up by passing the conversation id back."""
        if conversation_id is not None and not conversation_id.startswith("cli:"):
            raise ToolError("conversation_id must be one socbot gave (cli:...)")
        request = Request(
            conversation_id or new_conversation_id(), question, approver=NOBODY, scope=EVERYTHING
        )
        return _result(await rt.engine.run(request, Progress(ctx)), request)

    @server.tool()
    async def get_investigation(investigation_id: str) -> dict[str, Any]:
        """A past investigation's record: plan, steps, conclusion, usage."""
        row = await rt.investigations.get(investigation_id.strip())
        if row is None:
            raise ToolError(f"no investigation {investigation_id!r}")
        return {"id": row.id, "status": row.status, "verdict": row.verdict, "record": row.record}

    @server.tool()
    async def search_past_alerts(
        indicator: str | None = None,
        text: str | None = None,
        since: str | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> dict[str, Any]:
        """Alerts socbot handled before, newest first, with their verdicts."""
        args = {k: v for k, v in (("indicator", indicator), ("text", text), ("since", since)) if v}
        result = await rt.registry.dispatch(
            "search_past_alerts",
            {**args, "limit": limit},
            allowed=["search_past_alerts"],
            investigation_id="mcp",
            budget=Budget(),
            scope=EVERYTHING,
        )
        if not result.ok:
            raise ToolError(str(result.data.get("error")))
        return result.data

    @server.tool()
    async def parse_alert(
        alert: Annotated[str, Field(description="the alert, JSON text")],
    ) -> dict[str, Any]:
        """How socbot reads an alert: source, title, severity, entities and indicators."""
        return _alert(alert, rt).model_dump(mode="json", exclude={"raw"})

    @server.tool()
    async def search_playbook(
        query: str, limit: Annotated[int, Field(ge=1, le=20)] = 5
    ) -> dict[str, Any]:
        """The team playbook's active bullets that best match ``query``."""
        bullets = await PlaybookStore(rt.db).active()
        scores = bm25_scores([tokens(b.content) for b in bullets], tokens(query))
        ranked = sorted(zip(scores, bullets, strict=True), key=lambda p: (-p[0], p[1].id))
        found = [
            {"id": b.id, "kind": b.kind, "scope": b.scope, "content": b.content}
            for score, b in ranked[:limit]
            if score > 0
        ]
        return {"count": len(found), "bullets": found}

    return server


def _alert(text: str, rt: Runtime) -> Alert:
    if len(text) > MAX_ALERT_CHARS:
        raise ToolError(f"the alert is over {MAX_ALERT_CHARS} characters")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ToolError(f"the alert is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ToolError("the alert must be one JSON object")
    try:
        return parse(data, catalogue=load_catalogue(rt.settings.alerts.formats_dir))
    except (FormatError, ValueError) as exc:
        raise ToolError(f"not an alert socbot understands: {exc}") from None


def _result(outcome: Outcome, request: Request) -> dict[str, Any]:
    conclusion = outcome.conclusion.model_dump(mode="json") if outcome.conclusion else None
    return {
        "conversation_id": request.conversation_id,
        "investigation_id": outcome.investigation_id,
        "status": outcome.status,
        "answer": outcome.answer,
        "conclusion": conclusion,
        "error": outcome.error,
    }
