"""The DuckDB worker process: runs guarded queries where they can be killed.

``python -m tools.logs.duckdb_worker`` is started by ``tools.logs.duckdb_pool`` with a minimal
environment (no secrets). It imports only the standard library and DuckDB. Protocol, one
JSON object per line: the first line on stdin configures the database (views over the
catalogued files, memory cap, threads); the worker answers ``{"ready": ..., "schemas":
...}``, then one answer per query line. The parent kills the process when a query overruns
its time limit, so nothing here has to be interruptible.

Limits, each enforced by a different layer:
- DuckDB ``memory_limit`` (the buffer manager) and no temp directory: no spilling to disk;
- ``RLIMIT_AS`` on the whole process (the memory DuckDB does not account for, such as huge
  lists or strings, fails with an out-of-memory error instead of growing);
- results are capped in rows and in JSON bytes while they are fetched, one row at a time;
- the sandbox: external access off (only the catalogued files), configuration locked;
- the worker exits when its parent goes away.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from typing import Any

import duckdb

from tools.cells import json_value

_MB = 1024 * 1024
# Address space beyond the DuckDB memory limit (``logs.query_memory_headroom_mb``): thread
# stacks, allocator arenas, Python; the default when the parent sends none.
ADDRESS_SPACE_HEADROOM_MB = 256


def open_database(config: dict[str, Any]) -> duckdb.DuckDBPyConnection:
    """The sandboxed database: views over the catalogued files and nothing else."""
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET threads = {int(config['threads'])}")
    con.execute(f"SET memory_limit = '{int(config['memory_mb'])}MB'")
    con.execute("SET temp_directory = ''")  # no spilling: over the limit is an error
    allowed: list[str] = []
    for view, reader, files in config["views"]:
        listed = ", ".join(_quote(str(f)) for f in files)
        con.execute(f'CREATE VIEW "{view}" AS SELECT * FROM {reader}([{listed}])')
        allowed += [str(f) for f in files]
    con.execute(f"SET allowed_paths = [{', '.join(_quote(p) for p in allowed)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def schemas(con: duckdb.DuckDBPyConnection, views: list[str]) -> dict[str, list[list[str]]]:
    """``{view: [[column, DuckDB type], ...]}`` for every view."""
    return {
        view: [[str(r[0]), str(r[1])] for r in con.execute(f'DESCRIBE "{view}"').fetchall()]
        for view in views
    }


def run_query(con: duckdb.DuckDBPyConnection, request: dict[str, Any]) -> dict[str, Any]:
    """One query, its rows capped at ``row_limit`` and its JSON at ``max_bytes``."""
    row_limit, max_bytes = int(request["row_limit"]), int(request["max_bytes"])
    rel = con.sql(request["sql"], params=request.get("params") or None)
    if rel is None:
        return {"error": "the statement returned no rows"}
    columns = [str(c) for c in rel.columns]
    types = [str(t) for t in rel.types]
    if any("TIME ZONE" in t for t in types):  # fetch as text: avoids a pytz dependency
        rel = rel.project(
            ", ".join(
                f"CAST(#{i} AS VARCHAR)" if "TIME ZONE" in t else f"#{i}"
                for i, t in enumerate(types, start=1)
            )
        )
    cell_chars = max(max_bytes // max(len(columns), 1), 64)
    rows: list[list[Any]] = []
    size = 0
    truncated_by: str | None = None
    # The engine holds the (at most row_limit + 1) rows; Python converts one at a time.
    for row in rel.limit(row_limit + 1).iter_rows(batch_size=1):
        if len(rows) == row_limit:
            truncated_by = "rows"
            break
        whole = [json_value(v) for v in row]
        cells = [_clip(c, cell_chars) for c in whole]
        cost = len(json.dumps(cells, ensure_ascii=False).encode())
        if rows and size + cost > max_bytes:
            truncated_by = "bytes"
            break
        rows.append(cells)
        size += cost
        if cells != whole:  # a cell was cut to fit: the rows after it would not fit either
            truncated_by = "bytes"
            break
    return {"columns": columns, "rows": rows, "truncated_by": truncated_by, "bytes": size}


def main() -> None:
    parent = os.getppid()
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    config = json.loads(sys.stdin.readline() or "null")
    if not isinstance(config, dict):
        return
    try:
        con = open_database(config)
        views = [v[0] for v in config["views"]]
        ready = {"ready": True, "schemas": schemas(con, views), "pid": os.getpid()}
    except duckdb.Error as exc:
        _send({"error": f"the log store could not open its files: {_first_line(exc)}"})
        return
    headroom = int(config.get("headroom_mb", ADDRESS_SPACE_HEADROOM_MB))
    _limit_address_space(int(config["memory_mb"]) + headroom)
    _send(ready)
    for line in sys.stdin:
        try:
            answer = run_query(con, json.loads(line))
        except duckdb.OutOfMemoryException as exc:
            answer = {"error": _first_line(exc), "kind": "memory"}
        except MemoryError:
            answer = {"error": "out of memory", "kind": "memory"}
        except duckdb.Error as exc:
            answer = {"error": _first_line(exc)}
        _send(answer)
        if answer.get("kind") == "memory":
            return  # a fresh process for the next query: the allocator may be fragmented


def _clip(value: Any, chars: int) -> Any:
    if isinstance(value, str) and len(value) > chars:
        return value[:chars] + f"... [{len(value) - chars} chars cut]"
    if isinstance(value, list):
        return [_clip(v, chars) for v in value[:chars]]
    if isinstance(value, dict):
        return {k: _clip(v, chars) for k, v in list(value.items())[:chars]}
    return value


def _limit_address_space(extra_mb: int) -> None:
    """Cap the process's address space at what it maps now plus ``extra_mb``."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            vm = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return  # not Linux: the DuckDB memory limit and the parent's timeout still hold
    cap = vm * 1024 + extra_mb * _MB
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:400] if text else type(exc).__name__


if __name__ == "__main__":
    main()
