"""socbot settings: environment variables plus one TOML file.

Precedence, highest first: explicit arguments, ``SOCBOT_*`` variables (nested with
``__``, e.g. ``SOCBOT_LIMITS__MAX_STEPS``), the well-known variables in
``WELL_KNOWN_ENV`` (``GEMINI_API_KEY``, ``SLACK_BOT_TOKEN``...), the TOML file
named by ``SOCBOT_CONFIG`` (default ``config/socbot.toml``), then defaults.
The sections are defined in ``config.agent_settings`` (model, limits, review,
playbook, learning, alert formats) and ``config.service_settings`` (logs, intel,
Slack, work queue); they are importable from here too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from config.agent_settings import (
    DEFAULT_PRICES,
    AlertSettings,
    ContextCacheSettings,
    GeminiSettings,
    LearningSettings,
    Limits,
    ModelPrice,
    PlaybookSettings,
    ReviewSettings,
)
from config.anthropic_settings import AnthropicSettings
from config.approval_settings import ApprovalSettings
from config.cases_settings import CaseSettings
from config.database_url import async_database_url, sqlite_file
from config.env_check import EnvError, check_environment
from config.eval_settings import EvalSettings
from config.log_settings import LoggingSettings
from config.mcp_settings import McpSettings
from config.models_settings import ModelsSettings
from config.notify_settings import NotifySettings
from config.openai_settings import OpenAISettings
from config.policy_settings import PolicySettings
from config.privacy_settings import KEY_ENV, PrivacySettings
from config.retention import RetentionSettings
from config.service_settings import (
    IntelSettings,
    LogSettings,
    SlackSettings,
    TableSpec,
    WorkSettings,
)
from config.tracing_settings import TracingSettings
from config.web_settings import WebSettings

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_PRICES",
    "WELL_KNOWN_ENV",
    "AlertSettings",
    "ConfigError",
    "ContextCacheSettings",
    "EvalSettings",
    "GeminiSettings",
    "IntelSettings",
    "LearningSettings",
    "Limits",
    "LogSettings",
    "LoggingSettings",
    "ModelPrice",
    "ModelsSettings",
    "OpenAISettings",
    "PlaybookSettings",
    "PolicySettings",
    "ReviewSettings",
    "Settings",
    "SlackSettings",
    "TableSpec",
    "TracingSettings",
    "WorkSettings",
    "config_files",
    "config_notice",
    "config_path",
    "fixed_settings",
    "load_settings",
    "local_config_path",
]

DEFAULT_CONFIG_PATH = Path("config/socbot.toml")

# Variables people already have set for the SDKs and Slack, mapped into the tree.
WELL_KNOWN_ENV: dict[str, tuple[str, ...]] = {
    "GOOGLE_API_KEY": ("gemini", "api_key"),
    "GEMINI_API_KEY": ("gemini", "api_key"),  # wins over GOOGLE_API_KEY, as in the SDK
    "GOOGLE_GENAI_USE_VERTEXAI": ("gemini", "use_vertexai"),
    "GOOGLE_CLOUD_PROJECT": ("gemini", "project"),
    "GOOGLE_CLOUD_LOCATION": ("gemini", "location"),
    "SOCBOT_GEMINI_BASE_URL": ("gemini", "base_url"),
    "SLACK_BOT_TOKEN": ("slack", "bot_token"),
    "SLACK_APP_TOKEN": ("slack", "app_token"),
    "SLACK_SIGNING_SECRET": ("slack", "signing_secret"),
    "SOCBOT_SLACK_API_URL": ("slack", "api_url"),
    "SOCBOT_WEBHOOK_TOKEN": ("slack", "webhook_token"),
    "OTX_API_KEY": ("intel", "otx_api_key"),
    "VIRUSTOTAL_API_KEY": ("intel", "virustotal_api_key"),
    "ABUSEIPDB_API_KEY": ("intel", "abuseipdb_api_key"),
    "URLSCAN_API_KEY": ("intel", "urlscan_api_key"),
    "SOCBOT_MCP_TOKEN": ("mcp", "serve_token"),
    KEY_ENV: ("privacy", "key"),
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SOCBOT_", env_nested_delimiter="__", extra="forbid", toml_file=None
    )

    database_url: str = "sqlite+aiosqlite:///./var/socbot.db"
    environment: str = Field(
        "A cloud-first company on Google Cloud; employees sign in with SSO.",
        description="what the planner is told about the monitored environment",
    )
    debug_payloads: bool = Field(False, description="log alert and tool payloads")
    chat_history_file: str = Field(
        "var/chat_history", description="`socbot chat` prompt history; empty = not kept"
    )
    gemini: GeminiSettings = GeminiSettings()
    models: ModelsSettings = ModelsSettings()
    openai: OpenAISettings = OpenAISettings()
    anthropic: AnthropicSettings = AnthropicSettings()
    limits: Limits = Limits()
    review: ReviewSettings = ReviewSettings()
    logs: LogSettings = LogSettings()
    intel: IntelSettings = IntelSettings()
    slack: SlackSettings = SlackSettings()
    playbook: PlaybookSettings = PlaybookSettings()
    learning: LearningSettings = LearningSettings()
    alerts: AlertSettings = AlertSettings()
    work: WorkSettings = WorkSettings()
    evals: EvalSettings = EvalSettings()
    log: LoggingSettings = LoggingSettings()
    tracing: TracingSettings = TracingSettings()
    retention: RetentionSettings = RetentionSettings()
    policy: PolicySettings = PolicySettings()
    web: WebSettings = WebSettings()
    mcp: McpSettings = McpSettings()
    approvals: ApprovalSettings = ApprovalSettings()
    notify: NotifySettings = NotifySettings()
    cases: CaseSettings = CaseSettings()
    privacy: PrivacySettings = PrivacySettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files = config_files()
        toml = TomlConfigSettingsSource(settings_cls, toml_file=files or None, deep_merge=True)
        return init_settings, env_settings, _WellKnownEnv(settings_cls), toml

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, url: str) -> str:
        return async_database_url(url)

    @model_validator(mode="after")
    def _models(self) -> Settings:
        """``models.main`` / ``models.light`` default to ``[gemini]``'s, so code reads one."""
        self.models = self.models.resolved(self.gemini)
        return self


def config_path() -> Path:
    """The settings file: ``SOCBOT_CONFIG``, or ``config/socbot.toml`` in the current folder."""
    return Path(os.environ.get("SOCBOT_CONFIG") or DEFAULT_CONFIG_PATH)


def local_config_path(path: Path) -> Path:
    """The untracked override beside a settings file (``socbot.local.toml``)."""
    return path.with_name(f"{path.stem}.local{path.suffix}")


def config_files() -> list[Path]:
    """The settings files that exist, in the order they are read (later ones win)."""
    path = config_path()
    return [p for p in (path, local_config_path(path)) if p.is_file()]


def config_notice(database_url: str | None = None) -> str:
    """One line for stderr: which settings files are used, or a warning that none is
    (naming the SQLite file ``database_url`` puts in the current folder, if it does)."""
    files = config_files()
    if files:
        return "config: " + ", ".join(str(f) for f in files)
    database = sqlite_file(database_url) if database_url else None
    return (
        f"warning: no settings file ({config_path()} not found in {Path.cwd()}): "
        "built-in defaults and environment variables only, log tools are off"
        + (f", database {database}" if database else "")
        + "; run from the repository or set SOCBOT_CONFIG"
    )


class _WellKnownEnv(PydanticBaseSettingsSource):
    """Reads the variables in WELL_KNOWN_ENV into their place in the settings tree."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for var, (section, key) in WELL_KNOWN_ENV.items():
            value = os.environ.get(var)
            if value:
                tree.setdefault(section, {})[key] = value
        return tree


class ConfigError(Exception):
    """The configuration is unusable; the message says what to change."""


def load_settings(**overrides: Any) -> Settings:
    """The settings; ``ConfigError`` (one line) for a missing ``SOCBOT_CONFIG`` file or a
    ``SOCBOT_*`` variable that names no setting or holds a value it refuses."""
    path = os.environ.get("SOCBOT_CONFIG")
    if path and not Path(path).is_file():
        raise ConfigError(f"SOCBOT_CONFIG points to {path!r}, which is not a file")
    try:
        check_environment(Settings, also_known=WELL_KNOWN_ENV)
    except EnvError as exc:
        raise ConfigError(str(exc)) from None
    return Settings(**overrides)


class _FixedSettings(Settings):
    """Settings read from nothing but their arguments (and the defaults)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def fixed_settings(**values: Any) -> Settings:
    """Settings from ``values`` and the defaults only: no variable, no file (``socbot demo``)."""
    return _FixedSettings(**values)
