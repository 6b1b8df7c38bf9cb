"""What the runners of a planned or direct run share: the model, tools, prompts, settings.

The engine builds one ``Kit`` and hands it to the waves (``agent.waves``), the
conclusion (``agent.concluding``) and direct mode (``agent.direct``), so those runners
never import the engine that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.history import History
from agent.model.gateway import LLMGateway
from agent.prompts import Prompts
from agent.review.critic import Reviewer
from config.settings import Limits, Settings
from tools.base import ToolRegistry


@dataclass(frozen=True)
class Kit:
    """One engine's shared parts; the same for every run it serves."""

    gateway: LLMGateway
    registry: ToolRegistry
    prompts: Prompts
    reviewer: Reviewer
    history: History
    settings: Settings

    @property
    def limits(self) -> Limits:
        return self.settings.limits
