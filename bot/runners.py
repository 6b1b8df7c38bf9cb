"""How each kind of work row runs (``Runner`` for ``bot.work.worker``).

People's requests (mentions, follow-ups) run the investigation with the text kept
in the row. Alerts run through the triage of the channel their card or message is
in (``bot.intake.triage``: statuses, group verdicts, storm counts), or plainly when that
channel has none; the alert itself is read back from the database, so any replica
can run, or take over, any alert.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from agent.run import alert_request_text
from bot.intake.triage import AlertTriage
from bot.work.contracts import Investigate, Runner, ThreadRef
from store.queue.work import Work
from store.schema import AlertStatus, WorkKind, WorkState
from store.triage.alerts import AlertStore

log = logging.getLogger(__name__)


class ChatRunner:
    """Mentions and follow-ups."""

    def __init__(self, investigate: Investigate) -> None:
        self.investigate = investigate

    async def run(self, thread: ThreadRef, work: Work) -> None:
        await self.investigate(thread, work.text, None, user=work.requester)

    async def dropped(self, work: Work) -> None:
        """Nothing to account for."""


class AlertRunner:
    """Alerts, by the triage of their channel (``triages``) when it has one."""

    def __init__(
        self, alerts: AlertStore, investigate: Investigate, triages: Mapping[str, AlertTriage]
    ) -> None:
        self.alerts = alerts
        self.investigate = investigate
        self.triages = triages

    async def run(self, thread: ThreadRef, work: Work) -> None:
        stored = await self.alerts.get(work.alert_id) if work.alert_id else None
        if stored is None:
            log.error("work %s names alert %r, which is not stored", work.id, work.alert_id)
            return
        alert = stored.to_alert()
        triage = self.triages.get(work.channel)
        if triage is not None:
            await triage.run(thread, alert)
        else:
            await self.investigate(thread, alert_request_text(alert), alert)

    async def dropped(self, work: Work) -> None:
        """Stopped while queued (``cancelled``), or given up after its last attempt
        (``failed``: nobody cancelled it)."""
        triage = self.triages.get(work.channel)
        if triage is not None and work.alert_id:
            given_up = work.state == WorkState.FAILED
            await triage.dropped(
                work.alert_id, AlertStatus.FAILED if given_up else AlertStatus.CANCELLED
            )


def runners(
    alerts: AlertStore, investigate: Investigate, triages: Mapping[str, AlertTriage]
) -> dict[str, Runner]:
    """The runner of every kind of work row."""
    chat = ChatRunner(investigate)
    return {
        WorkKind.MENTION: chat,
        WorkKind.FOLLOWUP: chat,
        WorkKind.ALERT: AlertRunner(alerts, investigate, triages),
    }
