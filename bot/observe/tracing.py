"""OpenTelemetry spans of ``socbot serve``, when ``tracing.otlp_endpoint`` is set.

One span per investigation (``invoke_agent socbot``) with a child per model call
(``chat <model>``) and per tool call (``execute_tool <tool>``), following the GenAI
semantic conventions (``gen_ai.*`` attributes: operation, provider, model, token
usage, finish reason, tool name). Children are made from the engine's events when
they arrive, with the start time their measured latency puts them at. Attributes
never carry the alert, a prompt or a tool's arguments or result. OpenTelemetry is an
optional dependency (``socbot[otel]``); without an endpoint nothing of it is imported.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from config.settings import ConfigError, TracingSettings
from core.events import Event, LLMCalled, ToolCalled

if TYPE_CHECKING:
    from agent.run import Request

PROVIDER = "gcp.gemini"


class Trace:
    """The spans of one investigation (a no-op without a tracer)."""

    def __init__(self, tracer: Any = None, root: Any = None) -> None:
        self.tracer = tracer
        self.root = root

    def observe(self, event: Event) -> None:
        if self.tracer is None:
            return
        if isinstance(event, LLMCalled):
            self._child(
                f"chat {event.model}",
                event.latency_ms,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": PROVIDER,
                    "gen_ai.request.model": event.model,
                    "gen_ai.usage.input_tokens": event.prompt_tokens,
                    "gen_ai.usage.output_tokens": event.output_tokens + event.thinking_tokens,
                    "gen_ai.response.finish_reasons": [event.finish_reason or ""],
                    "socbot.stage": event.stage.split(" ", 1)[0],
                },
            )
        elif isinstance(event, ToolCalled):
            self._child(
                f"execute_tool {event.tool}",
                event.duration_ms,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.tool,
                    "socbot.tool.ok": event.ok,
                },
                error=None if event.ok else "tool call failed",
            )

    def _child(
        self, name: str, took_ms: float, attributes: dict[str, Any], error: str | None = None
    ) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        end = time.time_ns()
        span = self.tracer.start_span(
            name,
            context=trace.set_span_in_context(self.root),
            start_time=end - int(took_ms * 1_000_000),
            attributes=attributes,
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=end)


class Tracing:
    """Where investigations' spans go: a tracer, or nowhere (``NO_TRACING``)."""

    def __init__(self, tracer: Any = None) -> None:
        self.tracer = tracer

    @contextmanager
    def investigation(self, request: Request, source: str) -> Iterator[Trace]:
        if self.tracer is None:
            yield Trace()
            return
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "socbot",
            "socbot.kind": request.kind,
            "socbot.source": source,
        }
        with self.tracer.start_as_current_span(
            "invoke_agent socbot", attributes=attributes
        ) as root:
            yield Trace(self.tracer, root)


NO_TRACING = Tracing()
_current = NO_TRACING


def current() -> Tracing:
    """The process's tracing (``configure_tracing``), ``NO_TRACING`` by default."""
    return _current


def configure_tracing(settings: TracingSettings, exporter: Any = None) -> Tracing:
    """Export spans over OTLP/HTTP to ``settings.otlp_endpoint`` (or to ``exporter``)."""
    global _current
    if settings.otlp_endpoint is None and exporter is None:
        _current = NO_TRACING
        return _current
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        raise ConfigError(
            "tracing.otlp_endpoint is set but OpenTelemetry is not installed: "
            "uv sync --extra otel (or pip install 'socbot[otel]')"
        ) from None
    provider = TracerProvider(resource=Resource.create({"service.name": settings.service_name}))
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint))
        )
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    _current = Tracing(provider.get_tracer("socbot"))
    return _current
