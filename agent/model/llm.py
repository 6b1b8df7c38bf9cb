"""The seam between the engine and the model.

``ModelBackend`` mirrors one google-genai call, so the engine and the gateway are
the same code in production (``GeminiBackend``) and in tests (a scripted queue of
real ``google.genai.types`` responses).
"""

from __future__ import annotations

from typing import Protocol

from google.genai import types


class ModelBackend(Protocol):
    """What the gateway needs of a model: one ``generateContent`` call."""

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        """One model call; failures raise ``LLMUnavailable`` (see ``agent.model.gemini``)."""
        ...
