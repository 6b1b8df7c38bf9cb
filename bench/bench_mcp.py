"""Issue 24: the latency an MCP stdio tool adds over a built-in tool (target ≤ 20 ms).

Both tools answer the same lookup of the same invented asset record: the built-in one
in process, the MCP one in the test suite's SDK server (``tests/tools/mcp_asset_server.py``)
over stdio. Both are called through ``ToolRegistry.dispatch``, the path of every model
call (argument check, egress gate for the external server, result conversion and cap),
one call at a time after a warm-up; the figure is the difference of the medians.

    .venv/bin/python -m bench.bench_mcp --calls 300
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from bench.common import REPO, median, percentile, print_table, run_async, write_json
from config.mcp_settings import McpServerSettings, McpSettings
from tools.base import Budget, RunContext, Tool, ToolRegistry
from tools.mcp.hub import McpHub

SERVER = REPO / "tests" / "tools" / "mcp_asset_server.py"
RECORD = {"owner": "alice@example.com", "team": "payments", "criticality": "high"}  # invented
TARGET_MS = 20.0


async def lookup_asset(ctx: RunContext[None], host: str) -> dict[str, Any]:
    """The owner, team and criticality of a host in the asset inventory."""
    return {"result": {"host": host, "found": True, **RECORD}}


async def timed(registry: ToolRegistry, name: str, calls: int) -> list[float]:
    out: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await registry.dispatch(
            name,
            {"host": "web-01"},
            allowed=[name],
            investigation_id="bench",
            budget=Budget(),
            deadline=time.monotonic() + 30,
        )
        out.append((time.perf_counter() - started) * 1000)
        assert result.ok, result.data
    return out


async def main(calls: int, warmup: int) -> dict[str, Any]:
    spec = McpServerSettings(
        name="assets", command=sys.executable, args=[str(SERVER)], tools=["lookup_asset"]
    )
    hub = McpHub(McpSettings(servers=[spec]), (".corp",))
    registry = ToolRegistry()
    registry.add(Tool(lookup_asset))
    started = time.perf_counter()
    try:
        await hub.register(registry)
        start_ms = (time.perf_counter() - started) * 1000
        await timed(registry, "assets__lookup_asset", warmup)
        mcp_ms = await timed(registry, "assets__lookup_asset", calls)
        builtin_ms = await timed(registry, "lookup_asset", calls)
    finally:
        await hub.aclose()
    rows = {
        "built-in": builtin_ms,
        "mcp stdio": mcp_ms,
    }
    table = [(name, median(v), percentile(v, 0.95), max(v)) for name, v in rows.items()]
    added = median(mcp_ms) - median(builtin_ms)
    print_table(
        f"tool call latency, {calls} calls each (ms)", table, ("tool", "median", "p95", "max")
    )
    print(f"\nadded by MCP stdio: {added:.2f} ms median (target ≤ {TARGET_MS:.0f} ms)")
    print(f"server start and tool listing: {start_ms:.0f} ms")
    return {
        "calls": calls,
        "builtin_median_ms": median(builtin_ms),
        "mcp_median_ms": median(mcp_ms),
        "mcp_p95_ms": percentile(mcp_ms, 0.95),
        "added_median_ms": added,
        "target_ms": TARGET_MS,
        "server_start_ms": start_ms,
    }


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    result = run_async(lambda: main(args.calls, args.warmup))
    print(write_json("mcp_latency", result))


if __name__ == "__main__":
    cli()
