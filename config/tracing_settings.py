"""OpenTelemetry traces of ``socbot serve`` (off by default): ``[tracing]`` in the settings."""

from __future__ import annotations

from pydantic import Field

from config.agent_settings import Section


class TracingSettings(Section):
    """Spans per investigation, model call and tool call, exported over OTLP/HTTP."""

    otlp_endpoint: str | None = Field(
        None,
        description="OTLP/HTTP traces URL, e.g. http://otel-collector:4318/v1/traces; "
        "none = no tracing (needs the otel extra: uv sync --extra otel)",
    )
    service_name: str = Field("socbot", description="service.name of the exported spans")
