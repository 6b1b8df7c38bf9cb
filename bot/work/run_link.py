"""An investigation that a crash cut short is settled, not left ``running`` for ever.

The work row keeps the id of the investigation its run started (``posted
["investigation_id"]``). A replica that takes the row over starts a new
investigation; on its ``Started`` event the earlier one is settled as
``interrupted`` and linked to the new one (``replaced_by``), and the thread's status
message says so while the new run goes on (``INTERRUPTED``). A row given up after
its last attempt settles its last investigation the same way, linked to nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from core.events import Event, Sink, Started
from store.investigations.runs import InvestigationStore

log = logging.getLogger(__name__)

KEY = "investigation_id"
INTERRUPTED = "↻ socbot restarted during run `{old}`; it was interrupted and this run replaces it."


def earlier_run(posted: dict[str, Any]) -> str | None:
    """The investigation an earlier attempt of the row started, if any."""
    value = posted.get(KEY)
    return value if isinstance(value, str) else None


class RunLink:
    """A sink in front of ``sink``: links this run to the row and settles the earlier one."""

    def __init__(
        self,
        sink: Sink,
        investigations: InvestigationStore,
        *,
        earlier: str | None,
        record: Any,
    ) -> None:
        self.sink = sink
        self.investigations = investigations
        self.earlier = earlier
        self.record = record  # ``RunContext.record``, or None outside the worker
        self._linked = False

    async def emit(self, event: Event) -> None:
        if isinstance(event, Started) and not self._linked:
            self._linked = True
            await self._link(event.investigation_id)
        await self.sink.emit(event)

    async def _link(self, investigation_id: str) -> None:
        try:  # fail open: the run goes on without the link
            if self.record is not None:
                await self.record(KEY, investigation_id)
            if self.earlier is not None and self.earlier != investigation_id:
                await self.investigations.interrupt(self.earlier, replaced_by=investigation_id)
        except Exception:
            log.exception("could not link investigation %s to its work row", investigation_id)
