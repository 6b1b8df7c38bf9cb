"""The engine's exceptions. Messages are one sentence, safe to show an analyst."""

from __future__ import annotations


class AgentError(Exception):
    """Root of every error the engine raises on purpose."""


class LLMUnavailable(AgentError):
    """The model could not be reached (network, 5xx, quota) after bounded retries."""


class LLMOutputInvalid(AgentError):
    """The model's output stayed unusable after one repair attempt."""


class LLMRefused(AgentError):
    """The model stopped for safety or another policy reason."""


class BudgetExceeded(AgentError):
    """The investigation's token budget is spent."""


class DeadlineExceeded(AgentError):
    """The investigation's wall-clock deadline has passed."""


class PlanInvalid(AgentError):
    """A plan names unknown tools, has a dependency cycle, or breaks a cap."""
