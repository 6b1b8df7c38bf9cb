"""How much a model thinks per call: budgets on Gemini 2.5, levels on Gemini 3 and on
the other providers' models (``minimal`` where no thinking is needed).

Stages that need no thinking (the classifier, the critic) ask for the least the model
accepts (``least_thinking``); on Gemini 3 the others think at ``gemini.thinking_levels``
of their stage, or at the model's default (high) when their stage is not listed. Gemini
2.5 models keep their default thinking budget.
"""

from __future__ import annotations

from collections.abc import Mapping

from google.genai import types

from config.model_names import GEMINI, provider_of


def is_gemini3(model: str) -> bool:
    """Gemini 3.x: thinking levels instead of budgets, thought signatures enforced."""
    return model.rsplit("/", 1)[-1].startswith("gemini-3")


def least_thinking(model: str) -> types.ThinkingConfig:
    """The smallest thinking the model accepts: off where it can be turned off.

    Gemini 2.5 Flash / Flash-Lite take a budget of 0; 2.5 Pro cannot go below 128;
    Gemini 3 models take a thinking level instead of a budget.
    """
    name = model.rsplit("/", 1)[-1]
    if is_gemini3(name):
        return types.ThinkingConfig(thinking_level=types.ThinkingLevel.LOW)
    if name.startswith("gemini-2.5-pro"):
        return types.ThinkingConfig(thinking_budget=128)
    return types.ThinkingConfig(thinking_budget=0)


def thinking_config(
    model: str, stage: str, *, thinking: bool, levels: Mapping[str, str]
) -> types.ThinkingConfig | None:
    """The thinking of one call of ``stage`` (``step s1``: stage ``step``); None: the
    model's default. Another provider's model gets levels as Gemini 3 does; its backend
    makes them its own (OpenAI ``reasoning_effort`` where the model takes one)."""
    other = provider_of(model) != GEMINI
    if not thinking:
        return (
            types.ThinkingConfig(thinking_level=types.ThinkingLevel.MINIMAL)
            if other
            else (least_thinking(model))
        )
    level = levels.get(stage.split(" ", 1)[0]) if other or is_gemini3(model) else None
    if level is None:
        return None
    return types.ThinkingConfig(thinking_level=types.ThinkingLevel(level.upper()))
