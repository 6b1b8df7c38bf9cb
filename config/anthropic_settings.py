"""Claude through the official ``anthropic`` SDK (``socbot[anthropic]``): ``[anthropic]``.

Used for models named ``anthropic:<model>``. The key is read from the variable
``api_key_env`` names (``ANTHROPIC_API_KEY``); with no ``base_url`` the SDK reads
``ANTHROPIC_BASE_URL``. ``platform`` picks Claude on Amazon Bedrock or Google Vertex AI
instead, with those platforms' own credentials (AWS profile / role; Google ADC).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from config.agent_settings import Section

# Stages that think before answering when the model can (extended thinking): the plan
# and the conclusion; tool loops and the small stages do not (many cheap calls).
DEFAULT_THINKING_BUDGETS: dict[str, int] = {"planner": 2048, "concluder": 2048}


class AnthropicSettings(Section):
    """The Anthropic API (or Bedrock / Vertex AI) for ``anthropic:`` models."""

    platform: Literal["anthropic", "bedrock", "vertex"] = Field(
        "anthropic",
        description="anthropic = the Anthropic API; bedrock = Amazon Bedrock (AWS "
        "credentials, aws_region); vertex = Google Vertex AI (ADC, vertex_project/region)",
    )
    api_key_env: str = Field(
        "ANTHROPIC_API_KEY", description="the variable holding the API key (platform anthropic)"
    )
    base_url: str | None = Field(
        None, description="API URL (a proxy or gateway); none = ANTHROPIC_BASE_URL or the SDK's"
    )
    aws_region: str | None = Field(None, description="Bedrock region; none = AWS_REGION")
    vertex_project: str | None = Field(None, description="Vertex AI project; none = ADC's")
    vertex_region: str | None = Field(None, description="Vertex AI region; none = CLOUD_ML_REGION")
    max_tokens: int = Field(
        8192,
        ge=1,
        description="output tokens per call (the API requires a limit); "
        "thinking budgets come on top",
    )
    thinking_budgets: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_THINKING_BUDGETS),
        description="extended thinking tokens per stage (step s1 → step), at least 1024; "
        "a stage not listed does not think",
    )
    thinking_models: list[str] = Field(
        default_factory=lambda: ["claude-sonnet-4", "claude-opus-4", "claude-haiku-4-5"],
        description="model names (or parts of them) that support extended thinking",
    )
    structured_outputs: Literal["native", "text"] = Field(
        "native",
        description="native = the API's JSON-schema output format (Claude 4.5 models and "
        "later); text = the schema in the prompt and the gateway's repair turn",
    )
    prompt_cache: bool = Field(
        True, description="cache_control on tools, system and the conversation so far"
    )
    timeout_s: float = Field(120.0, gt=0, description="per HTTP attempt")
    max_retries: int = Field(
        3, ge=0, description="retries on 408/429/5xx/529 and transport errors (ours, not the SDK's)"
    )
    retry_initial_s: float = Field(1.0, gt=0, description="first backoff; doubles per retry")
    max_retry_wait_s: float = Field(
        30.0, gt=0, description="longest wait a retry-after may ask for; longer fails at once"
    )
