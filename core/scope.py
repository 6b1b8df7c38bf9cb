"""Which past alerts a request may see: the alerts posted in the Slack channels of the
people it answers (``store.triage.alerts.AlertStore.search``/``visible`` apply it in SQL).

``Scope()`` (``NOTHING``) sees no past alert: it is the default of every request and tool
call, so a request nobody scoped fails closed. ``Scope.of(channels)`` sees the alerts posted
in those channels (an alert with no channel is in none). ``EVERYTHING`` sees every alert:
only for the operator at a terminal (``socbot investigate``, ``chat``, ``mcp``), who holds
the database's credentials anyway. Who gets which is the caller's decision
(``bot.events.scope`` for Slack; docs/security.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    """The channels whose alerts a request may see, or every alert (``everything``)."""

    channels: frozenset[str] = frozenset()
    everything: bool = False

    @classmethod
    def of(cls, channels: Iterable[str | None]) -> Scope:
        """The alerts of ``channels`` (empty names dropped; none at all: nothing)."""
        return cls(frozenset(c for c in channels if c))

    @property
    def empty(self) -> bool:
        """Sees no alert at all."""
        return not self.everything and not self.channels


NOTHING = Scope()
EVERYTHING = Scope(everything=True)
