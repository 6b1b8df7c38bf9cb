"""A run's pseudonyms ([privacy]): the conversation's map, opened before the run's first
model call and kept after its last, so a follow-up keeps ``USER_3`` the same person.

The map is sealed with the key from the environment before the store sees it; an
engine with ``privacy.enabled`` and no usable key does not start (``ConfigError``).
The run's record says how many values of each kind the model saw pseudonymised, and
which map (the conversation id): what the model saw is the trace with that map applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.model.privacy import Pseudonymiser, footer, pseudonymiser_for
from agent.model.privacy.sealed import seal, unseal
from alerts.model import Alert
from config.settings import ConfigError, Settings
from store.db.engine import Database
from store.investigations.privacy import PrivacyMaps


def privacy_key(settings: Settings) -> bytes | None:
    """The map key when pseudonymisation is on (None when off); ``ConfigError`` when the
    key is missing or malformed, with what to set."""
    if not settings.privacy.enabled:
        return None
    try:
        return settings.privacy.key_bytes()
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def privacy_maps(settings: Settings) -> Callable[[], Pseudonymiser] | None:
    """For the gateway: a fresh map for a call whose context brings none (the learning
    reflector and curator, the eval judge), so nothing reaches the model unmapped."""
    if not settings.privacy.enabled:
        return None
    return lambda: pseudonymiser_for(settings)


class ConversationMaps:
    """Opens and keeps conversations' pseudonym maps."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.settings = settings
        self.key = privacy_key(settings)
        self.maps = PrivacyMaps(db)

    async def open(self, conversation_id: str, alert: Alert | None) -> Pseudonymiser | None:
        """The conversation's pseudonymiser (its stored map, the alert's values known);
        None when pseudonymisation is off."""
        if self.key is None:
            return None
        sealed = await self.maps.load(conversation_id)
        pmap = unseal(self.key, conversation_id, sealed) if sealed is not None else None
        found = pseudonymiser_for(self.settings, pmap)
        if alert is not None:
            found.seed_alert(alert)
        return found

    async def keep(self, conversation_id: str, privacy: Pseudonymiser) -> None:
        """Store the conversation's map, sealed."""
        assert self.key is not None
        await self.maps.save(conversation_id, seal(self.key, conversation_id, privacy.map))


def privacy_record(conversation_id: str, privacy: Pseudonymiser) -> dict[str, Any]:
    """What the run's record says of its pseudonyms (never a value)."""
    counts = privacy.map.counts()
    return {"map": conversation_id, "pseudonymised": counts, "note": footer(counts)}
