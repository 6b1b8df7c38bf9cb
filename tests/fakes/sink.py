"""A progress sink for tests: it keeps every event the engine or the gateway emits."""

from __future__ import annotations

from core.events import Event, LLMCalled


class EventSink:
    """Keeps every event, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def emit(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def llm_calls(self) -> list[LLMCalled]:
        return [e for e in self.events if isinstance(e, LLMCalled)]
