"""Settings of the MCP servers whose tools socbot offers the model (``[[mcp.servers]]``).

A server is reached either by ``command`` + ``args`` + ``env`` (a child process over
stdio) or by ``url`` + ``headers`` (streamable HTTP). Secrets never sit in the file:
a value may name environment variables as ``${NAME}``, read when the server is started.
No tool is offered unless it is in the server's ``tools`` allowlist.
"""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import Field, SecretStr, model_validator

from config.agent_settings import Section

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MissingSecret(LookupError):
    """A value names an environment variable that is not set."""


def expand_env(value: str) -> str:
    """``value`` with each ``${NAME}`` replaced by that environment variable."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        found = os.environ.get(name)
        if found is None:
            raise MissingSecret(f"environment variable {name} is not set")
        return found

    return _ENV_REF.sub(one, value)


class McpServerSettings(Section):
    """One MCP server: how to reach it, which of its tools to offer, how far to trust it."""

    name: str = Field(
        pattern=r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$",
        max_length=24,
        description="tools are offered as <name>__<tool>",
    )
    command: str | None = Field(None, description="stdio: the program to start")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="the child's only extra variables; ${NAME} expands"
    )
    url: str | None = Field(None, description="streamable HTTP endpoint")
    headers: dict[str, str] = Field(default_factory=dict, description="${NAME} expands")
    tools: list[str] = Field(default_factory=list, description="allowlist; none by default")
    trust: Literal["internal", "external"] = Field(
        "external",
        description="external: arguments pass the egress gate (no internal addresses, "
        "names or e-mail addresses leave)",
    )
    approval: list[str] = Field(default_factory=list, description="tools a person must approve")
    timeout_s: float = Field(60.0, gt=0, description="per call, also bounded by the deadline")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"mcp server {self.name!r}: set either command or url")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"mcp server {self.name!r}: url must be http(s)")
        return self


class McpSettings(Section):
    servers: list[McpServerSettings] = Field(default_factory=list)
    connect_timeout_s: float = Field(30.0, gt=0, description="start-up and tool listing")
    restart_backoff_s: float = Field(1.0, gt=0, description="first wait before a restart")
    restart_backoff_max_s: float = Field(60.0, gt=0)
    serve_token: SecretStr | None = Field(
        None, description="`socbot mcp --http`: the bearer token clients must send"
    )

    @model_validator(mode="after")
    def _unique_names(self) -> McpSettings:
        names = [s.name for s in self.servers]
        if len(names) != len(set(names)):
            raise ValueError("mcp.servers: names must be unique")
        return self
