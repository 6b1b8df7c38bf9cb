"""Which models the engine uses: ``models.main`` and ``models.light`` as ``provider:model``.

Unset (empty), they are today's ``gemini.model`` / ``gemini.light_model``, so a settings file
without ``[models]`` keeps working. After ``Settings`` is read both are filled in and
``canonical`` (``config.model_names``): code reads ``settings.models.main``. A name
with an unknown provider is refused when the settings are read (fail closed).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from config.agent_settings import GeminiSettings, Section
from config.model_names import canonical


class ModelsSettings(Section):
    """The main and light models, any provider (``openai:gpt-5-mini``, a bare Gemini name)."""

    main: str = Field(
        "",
        description="planner, steps, reflector, concluder, direct mode (provider:model; "
        "default gemini.model)",
    )
    light: str = Field(
        "",
        description="the classifier and the review's critic (provider:model; default "
        "gemini.light_model)",
    )

    @field_validator("main", "light")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        return canonical(value) if value else ""

    def resolved(self, gemini: GeminiSettings) -> ModelsSettings:
        """Both names set: an unset one is the ``[gemini]`` setting of old."""
        return ModelsSettings(
            main=self.main or canonical(gemini.model),
            light=self.light or canonical(gemini.light_model),
        )

    def with_main(self, model: str) -> ModelsSettings:
        """These models with ``model`` as the main one (``--model``); ``ValueError`` for
        an unknown provider."""
        return self.model_copy(update={"main": canonical(model)})
