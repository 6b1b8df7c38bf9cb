"""Alerts a budget held, tried again when their window frees (``policy_deferred`` rows).

``PolicyGate`` queues an alert beyond its rule's budget as a work row
(``store.queue.deferred``) due at the end of the budget's period, one queue thread per
rule and source so that they go in arrival order. Whichever replica claims the row runs
``DeferredRunner``: the alert, if it is still held (``over_budget``: an analyst may
have taken it meanwhile), is judged again by the gate (``PolicyGate.recheck``: the rules
may have changed, the window may be spent by others); let through, it goes to the
triage of the channel it arrived in, which posts its card and queues its investigation
as for a new alert (or to the channel a ``route`` rule names); still over budget, the
row waits for the next period, holding the later ones behind it. Nothing is said in
Slack about the wait: the alert's row and the policy counts show it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from bot.intake.policy.dispatch import PolicedTriage
from bot.intake.policy.gate import PolicyGate
from bot.work.contracts import ThreadRef
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from store.queue.deferred import DeferredAlerts
from store.queue.types import DEFERRED_KIND
from store.queue.work import Work
from store.schema import AlertStatus
from store.triage.alerts import AlertStore

log = logging.getLogger(__name__)

HELD_STATUS = AlertStatus.OVER_BUDGET


class DeferredRunner:
    """The ``Runner`` of ``policy_deferred`` rows (see the module docstring)."""

    def __init__(
        self,
        alerts: AlertStore,
        gate: PolicyGate,
        deferred: DeferredAlerts,
        triages: Callable[[str], PolicedTriage | None],
    ) -> None:
        self.alerts = alerts
        self.gate = gate
        self.deferred = deferred
        self.triages = triages

    @classmethod
    def register(
        cls,
        coordinator: Coordinator,
        alerts: AlertStore,
        gate: PolicyGate,
        triages: Mapping[str, PolicedTriage],
    ) -> DeferredRunner:
        """Run this replica's share of the held alerts, by the channels' ``triages``."""
        deferred = gate.deferred or DeferredAlerts(alerts.db)
        runner = cls(alerts, gate, deferred, triages.get)
        coordinator.register({DEFERRED_KIND: runner}, reporter=Silent("held alerts"))
        return runner

    async def run(self, thread: ThreadRef, work: Work) -> None:
        stored = await self.alerts.get(work.alert_id) if work.alert_id else None
        if stored is None or stored.status != HELD_STATUS:
            log.info("held alert %s was taken up meanwhile; nothing to do", work.alert_id)
            return
        triage = self.triages(work.channel)
        if triage is None:  # the channel is no alert channel any more: it stays held
            log.error(
                "held alert %s arrived in %s, which has no triage now", stored.id, work.channel
            )
            return
        alert = stored.to_alert()
        verdict = await self.gate.recheck(alert)
        if verdict.outcome == "deferred" and verdict.until is not None:
            if not await self.deferred.wait(work.id, work.attempts, verdict.until):
                log.warning("held alert %s: its row was taken over meanwhile", alert.id)
            return
        card = stored.slack_ts if stored.slack_channel == work.channel else None
        log.info("held alert %s let through (%s)", alert.id, verdict.outcome or "no rule")
        await triage.follow(verdict, alert, message_ts=card)

    async def dropped(self, work: Work) -> None:
        log.info("held alert %s: its row ended without running", work.alert_id)
