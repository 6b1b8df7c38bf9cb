"""The tool layer: typed async functions whose Gemini declaration comes from the signature.

A tool is written as::

    async def lookup_ip(ctx: RunContext[IntelDeps], ip: str) -> dict[str, Any]:
        \"\"\"First docstring paragraph is the description the model sees.\"\"\"

The first parameter (``ctx``) carries injected dependencies and never appears in the
schema. Failures the model can act on are raised as ``ToolError`` (or returned as
``{"error": ...}``) and reach the model as data; anything else is a bug and is still
returned as an error result so that one broken tool never ends an investigation.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from core.events import STORED_RESULT_CHARS
from core.scope import NOTHING, Scope
from tools.results import as_dict, truncate, validation_brief

if TYPE_CHECKING:  # the SDK's types take a second to import: only when a model is called
    from google.genai import types

    from core.approvals import Approver

log = logging.getLogger(__name__)

DepsT = TypeVar("DepsT")


class ToolError(Exception):
    """A failure the model can act on (bad SQL, not found, quota): returned as data."""


@dataclass
class Budget:
    """Per-investigation spend that tools share (e.g. BigQuery bytes)."""

    bytes_processed: int = 0
    counters: dict[str, int] = field(default_factory=dict)


@dataclass
class RunContext(Generic[DepsT]):
    deps: DepsT
    investigation_id: str
    budget: Budget
    deadline: float | None = None  # time.monotonic() by which the call must have ended
    approver: Approver | None = None  # who is asked before a risky call (None: nobody)
    scope: Scope = NOTHING  # the past alerts the request may see (``core.scope``)

    def time_left(self, limit: float) -> float:
        """``limit`` seconds, or less when the step's deadline comes first."""
        if self.deadline is None:
            return limit
        return max(min(limit, self.deadline - time.monotonic()), 0.0)


ToolFn = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class ToolResult:
    name: str
    args: dict[str, Any]
    data: dict[str, Any]  # what the model sees; {"error": ...} on failure
    ok: bool
    duration_ms: float
    chars: int  # size before truncation
    truncated: bool
    whole: str = ""  # the JSON before truncation, up to core.events.STORED_RESULT_CHARS

    def as_json(self) -> str:
        return json.dumps(self.data, ensure_ascii=False, default=str)


class BaseTool:
    """What the registry needs of a tool: a name, a description, a JSON Schema, a call."""

    name: str
    description: str
    schema_json: str  # the parameters' JSON Schema as Gemini takes it, generated once

    def declaration(self) -> types.FunctionDeclaration:
        """The model's view of this tool (a fresh object per call; the schema is cached)."""
        from google.genai import types

        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=json.loads(self.schema_json),
        )

    def signature_text(self) -> str:
        """``name(arg: type, ...)`` plus description, for the planner's prompt."""
        raise NotImplementedError

    async def call(
        self,
        args: dict[str, Any],
        investigation_id: str,
        budget: Budget,
        deadline: float | None = None,
        approver: Approver | None = None,
        scope: Scope = NOTHING,
    ) -> Any:
        raise NotImplementedError


class Tool(BaseTool):
    """A typed function plus its injected dependencies."""

    def __init__(self, fn: ToolFn, deps: Any = None, *, name: str | None = None) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__!r} must be an async function")
        self.fn = fn
        self.deps = deps
        self.name = name or fn.__name__
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"tool {self.name!r} needs a docstring: it is the model's description")
        self.description = doc.split("\n\n")[0].replace("\n", " ")
        self.params = _params_model(fn, self.name)
        # Generated once (at registration): every step turn sends the declarations.
        self.schema_json = json.dumps(_clean_schema(self.params.model_json_schema()))

    def signature_text(self) -> str:
        args = ", ".join(
            f"{n}: {_type_name(f.annotation)}" for n, f in self.params.model_fields.items()
        )
        return f"{self.name}({args}): {self.description}"

    async def call(
        self,
        args: dict[str, Any],
        investigation_id: str,
        budget: Budget,
        deadline: float | None = None,
        approver: Approver | None = None,
        scope: Scope = NOTHING,
    ) -> Any:
        parsed = self.params.model_validate(args)
        ctx = RunContext(self.deps, investigation_id, budget, deadline, approver, scope)
        kwargs = {name: getattr(parsed, name) for name in self.params.model_fields}
        return await self.fn(ctx, **kwargs)


class ToolRegistry:
    """The enabled tools, and why the others are not. Dispatches every call.

    ``disabled`` (name → reason) is shown to the model too, so names and reasons there
    are ours; ``details`` and ``unlisted`` (an MCP server's tools left out of its
    allowlist) are for the operator only (``socbot tools list``): they may quote what a
    server said.
    """

    def __init__(self, result_chars: int = 8000) -> None:
        self.tools: dict[str, BaseTool] = {}
        self.disabled: dict[str, str] = {}
        self.details: dict[str, str] = {}
        self.unlisted: dict[str, str] = {}
        self.result_chars = result_chars

    def add(self, tool: BaseTool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self.tools[tool.name] = tool

    def disable(self, name: str, reason: str, *, detail: str | None = None) -> None:
        self.disabled[name] = reason
        if detail:
            self.details[name] = detail

    def names(self) -> list[str]:
        return sorted(self.tools)

    def declarations(self, names: Iterable[str]) -> list[types.FunctionDeclaration]:
        return [self.tools[n].declaration() for n in names if n in self.tools]

    def catalogue_text(self, names: Iterable[str] | None = None) -> str:
        chosen = self.names() if names is None else [n for n in names if n in self.tools]
        return "\n".join(f"- {self.tools[n].signature_text()}" for n in chosen)

    async def dispatch(
        self,
        name: str,
        args: dict[str, Any],
        *,
        allowed: Iterable[str],
        investigation_id: str,
        budget: Budget,
        deadline: float | None = None,
        approver: Approver | None = None,
        scope: Scope = NOTHING,
    ) -> ToolResult:
        """Run one call the model asked for (``scope``: the past alerts its request may
        see; nothing unless given). Never raises for a tool's failure.

        With a ``deadline`` (``time.monotonic()``), a call still running then is cancelled
        and answered with an error, so a step never waits past its deadline for a tool.
        """
        started = time.perf_counter()
        ok = False
        left = None if deadline is None else deadline - time.monotonic()
        if name not in set(allowed) or name not in self.tools:
            data: dict[str, Any] = {"error": f"tool {name!r} is not available in this step"}
        elif left is not None and left <= 0:
            data = {"error": f"tool {name!r} was not run: the step's deadline has passed"}
        else:
            timer = asyncio.timeout(left)
            try:
                async with timer:
                    result = await self.tools[name].call(
                        args, investigation_id, budget, deadline, approver, scope
                    )
                data = as_dict(result)
                ok = "error" not in data
            except TimeoutError as exc:
                if timer.expired():
                    data = {
                        "error": f"tool {name!r} did not finish within the step's remaining "
                        f"{left:.1f}s and was stopped; conclude with what you have"
                    }
                else:  # the tool's own TimeoutError: a bug, like the crashes below
                    log.exception("tool %r crashed", name)
                    data = {"error": f"tool failed unexpectedly ({type(exc).__name__})"}
            except ValidationError as exc:
                data = {"error": f"invalid arguments: {validation_brief(exc)}"}
            except ToolError as exc:
                data = {"error": str(exc)}
            except Exception as exc:  # fail open: a broken tool must not end the run
                log.exception("tool %r crashed", name)
                data = {"error": f"tool failed unexpectedly ({type(exc).__name__})"}
        whole = json.dumps(data, ensure_ascii=False, default=str)[:STORED_RESULT_CHARS]
        data, chars, truncated = truncate(data, self.result_chars)
        return ToolResult(
            name=name,
            args=args,
            data=data,
            ok=ok,
            duration_ms=(time.perf_counter() - started) * 1000,
            chars=chars,
            truncated=truncated,
            whole=whole,
        )


def _params_model(fn: ToolFn, name: str) -> type[BaseModel]:
    hints = get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].name != "ctx":
        raise TypeError(f"tool {name!r}: first parameter must be 'ctx: RunContext[...]'")
    fields: dict[str, Any] = {}
    for p in params[1:]:
        if p.name not in hints:
            raise TypeError(f"tool {name!r}: parameter {p.name!r} needs a type annotation")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], default)
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _clean_schema(value: Any) -> Any:
    """Drop pydantic's titles and ``additionalProperties``, which Gemini does not need."""
    if isinstance(value, dict):
        return {
            k: _clean_schema(v)
            for k, v in value.items()
            if k not in ("title", "additionalProperties")
        }
    if isinstance(value, list):
        return [_clean_schema(v) for v in value]
    return value


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
