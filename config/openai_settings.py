"""The ``openai:`` provider's endpoint: the OpenAI API or any server speaking its Chat
Completions API (Azure OpenAI, vLLM, Ollama, LM Studio, llama.cpp, OpenRouter, LiteLLM).

The SDK's own variables work as in the SDK: ``OPENAI_BASE_URL`` when ``base_url`` is
unset, and the key from the variable ``api_key_env`` names (default ``OPENAI_API_KEY``).
What the server supports is said here, not guessed: strict JSON schemas, parallel tool
calls, ``tool_choice: "required"``, the structured-output mode, reasoning effort.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from config.agent_settings import Section

# Model-name prefixes that take ``reasoning_effort`` (and refuse a temperature).
DEFAULT_REASONING_MODELS = ["gpt-5", "o1", "o3", "o4"]


class OpenAISettings(Section):
    """One OpenAI-compatible endpoint for every ``openai:<model>``."""

    base_url: str | None = Field(
        None,
        description="the endpoint (e.g. http://127.0.0.1:11434/v1 for Ollama); default "
        "OPENAI_BASE_URL, else the OpenAI API",
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
        description="the environment variable holding the API key (never the key itself); "
        "a local server (base_url set) may need none",
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="extra HTTP headers on every request"
    )
    azure_api_version: str | None = Field(
        None,
        description="Azure OpenAI: the api-version; base_url is then the resource's endpoint "
        "and a model name is the deployment's",
    )
    structured_output: Literal["json_schema", "json_object", "text"] = Field(
        "json_schema",
        description="how the plan, reflection, conclusion and critic ask for JSON: the "
        "server's json_schema response_format, json_object, or the schema in the prompt",
    )
    strict_schemas: bool = Field(
        True, description="the server accepts strict: true on schemas and tools"
    )
    parallel_tool_calls: bool = Field(
        True, description="the server accepts parallel_tool_calls (sent as true)"
    )
    tool_choice_required: bool = Field(
        True, description="the server accepts tool_choice 'required' (else only 'auto')"
    )
    reasoning_models: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REASONING_MODELS),
        description="model-name prefixes that take reasoning_effort and no temperature",
    )
    max_output_tokens: int | None = Field(
        None, ge=1, description="max_completion_tokens per call; default the server's"
    )
    timeout_s: float = Field(120.0, gt=0, description="per model call")
    max_retries: int = Field(
        4, ge=0, description="the SDK's retries on 408/409/429/5xx, honouring Retry-After"
    )
