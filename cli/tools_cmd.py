"""``socbot tools list``: which tools the model gets, and why the others are off."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.common import command_app, config_notice_line, fail, load_settings_or_exit, one_line
from config.settings import ConfigError, Settings
from tools import intel
from tools.base import ToolRegistry
from tools.setup import listed_registry, mcp_hub

if TYPE_CHECKING:
    from tools.mcp.hub import McpHub

app = command_app(help="Inspect the investigation tools.")


@dataclass(frozen=True)
class ToolRow:
    name: str
    enabled: bool
    detail: str  # description when enabled, reason when disabled


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


@app.command("list")
def list_tools(as_json: JsonOpt = False) -> None:
    """Show enabled tools with their description, and disabled ones with the reason."""
    settings = load_settings_or_exit(announce=False)  # said under the tables
    try:
        rows = tool_rows(settings)
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    if as_json:
        services = [
            {
                "service": s.name,
                "configured": s.configured,
                "env_var": s.env_var,
                "looks_up": sorted(s.kinds),
            }
            for s in intel.service_status(settings)
        ]
        tools = [{"tool": r.name, "enabled": r.enabled, "detail": r.detail} for r in rows]
        typer.echo(json.dumps({"tools": tools, "services": services}, indent=2))
        return
    console = Console(soft_wrap=False)
    console.print(_tools_table(rows))
    console.print(_services_table(settings))
    config_notice_line(settings)


def tool_rows(settings: Settings) -> list[ToolRow]:
    """Registry contents as rows; building it opens no connection and reads no table,
    but starts the MCP servers for a moment to list their tools."""
    registry = listed_registry(settings)
    hub = mcp_hub(settings)
    if hub is not None:
        asyncio.run(_list_mcp(hub, registry))
    rows = [ToolRow(n, True, registry.tools[n].description) for n in registry.names()]
    off = {
        **registry.unlisted,
        **{
            n: ": ".join(filter(None, (r, registry.details.get(n))))
            for n, r in registry.disabled.items()
        },
    }
    rows += [
        ToolRow(n, False, reason) for n, reason in sorted(off.items()) if n not in registry.tools
    ]
    return rows


def _tools_table(rows: list[ToolRow]) -> Table:
    table = Table(title="socbot tools", show_lines=False)
    table.add_column("tool", style="bold", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("description / reason")
    for row in rows:
        status = "[green]enabled[/green]" if row.enabled else "[red]disabled[/red]"
        table.add_row(escape(row.name), status, escape(row.detail))  # may quote a server
    return table


def _services_table(settings: Settings) -> Table:
    table = Table(title="threat-intel services")
    table.add_column("service", style="bold", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("looks up")
    for s in intel.service_status(settings):
        status = "[green]configured[/green]" if s.configured else f"[red]{s.env_var} not set[/red]"
        table.add_row(s.name, status, ", ".join(sorted(s.kinds)))
    return table


async def _list_mcp(hub: McpHub, registry: ToolRegistry) -> None:
    try:
        await hub.register(registry)
    finally:
        await hub.aclose()
