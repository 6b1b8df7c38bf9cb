"""The alert policy between intake and investigation: one ``Verdict`` per stored alert.

``PolicyGate.decide`` runs the rules (``alerts.policy``: the files of ``policy.dir``,
re-read on change, after the suppressions approved in Slack) over a stored alert and
acts on the first that matches:

* ``ignore`` / ``suppress`` — the alert stays stored with status ``ignored`` /
  ``suppressed``: no card, no investigation (a forwarded alert's message gets a 🔕);
* a ``budget`` spent for this source and period — status ``over_budget``, counted as
  ``deferred``, not investigated now (the budget is the database's: ``store.triage.policy``)
  but queued to be tried again when the period ends (``store.queue.deferred``; an
  alert that arrives while older ones of its rule and source wait queues behind them);
  ``recheck`` is that try: the rules again, and the alert released, or left waiting;
* ``route`` — investigated in the rule's channel instead;
* ``investigate`` — investigated as usual;

``severity`` overrides the alert's severity first (the queue orders runs by it). Every
decision is recorded (``store.triage.policy``: ``/healthz``, ``socbot usage``, ``/metrics``,
``socbot policy list``). The policy fails open: if it cannot be evaluated or recorded
the alert is investigated, and the error logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from alerts.model import Alert
from alerts.policy import auto_resolve
from alerts.policy.decide import CompiledRule, Decision, rule_set
from alerts.policy.load import Loaded, RuleFiles, parse_items
from alerts.policy.rules import Rule
from bot.work.contracts import Watchers
from config.policy_settings import PolicySettings
from store.queue.deferred import DeferredAlerts, period_end
from store.schema import AlertStatus
from store.triage.policy import Limit, PolicyStore, period_start
from store.triage.states import AlertStatuses
from store.triage.suppressions import Suppression, SuppressionStore

log = logging.getLogger(__name__)

Extra = Callable[[], Awaitable[list[CompiledRule]]]
QUIET_REACTION = "no_bell"  # on a forwarded alert's message the policy ignored
OUTCOME = {"ignore": "ignored", "suppress": "suppressed", "route": "routed"}
# not investigated (now), and the status each leaves the alert in
HELD = {
    "ignored": AlertStatus.IGNORED,
    "suppressed": AlertStatus.SUPPRESSED,
    "deferred": AlertStatus.OVER_BUDGET,
}
# a held alert let through: stored, to be placed (``store.triage.states``)
RELEASED = AlertStatus.RECEIVED


@dataclass(frozen=True)
class Verdict:
    """What happens to the alert: ``outcome`` (``None``: no rule matched) and where."""

    decision: Decision
    outcome: str | None = None
    channel: str | None = None
    until: datetime | None = None  # deferred: when its budget's period ends

    @property
    def investigate(self) -> bool:
        return self.outcome not in HELD


PASS = Verdict(Decision(None))
SLACK_ORIGIN = "slack"


def suppression_rules(rows: list[Suppression]) -> Loaded:
    """Approved Slack suppressions as policy rules (``slack-<id>``, never for criticals)."""
    items = [
        {
            "id": row.rule_id,
            "action": "suppress",
            "match": row.rule.get("match", {}),
            "expires": row.expires_at,
            "reason": row.reason,
            "owner": row.proposed_by,
            "description": f"suppressed from Slack by {row.proposed_by}, approved by "
            f"{row.decided_by}",
        }
        for row in rows
    ]
    return parse_items(items, SLACK_ORIGIN)


class SlackSuppressions:
    """The approved suppressions as rules, read again at most every ``reload_s``."""

    def __init__(self, store: SuppressionStore, reload_s: float) -> None:
        self.store = store
        self.reload_s = reload_s
        self._rules: list[CompiledRule] = []
        self._read_at: float | None = None

    def changed(self) -> None:
        """A suppression was approved or lifted here: read them again on the next alert."""
        self._read_at = None

    async def __call__(self) -> list[CompiledRule]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.reload_s:
            loaded = suppression_rules(await self.store.active())
            for error in loaded.errors:
                log.error("suppression not applied: %s", error)
            self._rules, self._read_at = loaded.rules, now
        return self._rules


class PolicyGate:
    """Decides, records and applies the policy for each alert (module docstring)."""

    def __init__(
        self,
        settings: PolicySettings,
        store: PolicyStore,
        statuses: AlertStatuses,
        *,
        extra: Extra | None = None,
        files: RuleFiles | None = None,
        deferred: DeferredAlerts | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.store = store
        self.statuses = statuses
        self.extra = extra
        self.files = files or RuleFiles(settings.dir, reload_s=settings.reload_s)
        self.deferred = deferred
        self.clock = clock
        self.watchers = Watchers()  # told the channel of each alert held here (App Home)

    async def rules(self) -> list[CompiledRule]:
        """Every rule in the order tried (Slack suppressions, then the files)."""
        extra = await self.extra() if self.extra is not None else []
        return [*extra, *self.files.current().rules]

    def route_channels(self) -> list[str]:
        """The channels the rule files route alerts to."""
        return sorted({r.rule.channel for r in self.files.current().rules if r.rule.channel})

    async def health(self) -> dict[str, object]:
        """``/healthz``: alerts the policy decided, by outcome; rules and rule errors."""
        return {
            "enabled": self.settings.enabled,
            "rules": len(await self.rules()),
            "rule_errors": len(self.errors()),
            "alerts": await self.store.counts(),
        }

    def errors(self) -> list[str]:
        """The rule-file errors of the last load (one line each)."""
        return list(self.files.current().errors)

    async def decide(
        self, alert: Alert, now: datetime | None = None, *, channel: str | None = None
    ) -> Verdict:
        """The verdict for a stored ``alert`` (its row updated to match); ``channel``:
        where it arrived, where a budget queues it to be tried again."""
        if not self.settings.enabled:
            return PASS
        try:
            return await self._decide(alert, now or self.clock(), channel=channel)
        except Exception:  # fail open: an alert the policy cannot judge is investigated
            log.exception("policy could not decide alert %s; investigating it", alert.id)
            return PASS

    async def recheck(self, alert: Alert, now: datetime | None = None) -> Verdict:
        """A held (``over_budget``) alert tried again: ``deferred`` with a new ``until``
        while its window is spent (nothing recorded again), else decided as new and, if
        it is to be investigated, ``received`` again (placed by its triage, or by a
        triage's sweep after a crash). Raises if the database cannot be reached: the
        work row is tried again."""
        if not self.settings.enabled:
            await self.statuses.set(alert.id, RELEASED)
            return PASS
        return await self._decide(alert, now or self.clock(), channel=None, held=True)

    async def _decide(
        self, alert: Alert, now: datetime, *, channel: str | None, held: bool = False
    ) -> Verdict:
        decision = rule_set([await self.rules()]).decide(alert, now)
        rule = decision.rule
        if rule is None:
            if held:
                await self.statuses.set(alert.id, RELEASED)
            return PASS
        assert decision.origin is not None
        outcome = OUTCOME.get(rule.action, "investigated")
        until = await self._over_budget(rule, alert, now, held=held)
        if until is not None:
            outcome = "deferred"
            if held:
                return Verdict(decision, outcome, until=until)  # waits on: counted once
        runs = outcome in ("investigated", "routed")
        await self.store.record(
            alert.id,
            rule.id,
            decision.origin,
            alert.source,
            outcome,
            now,
            mode=rule.mode if runs else None,
            model=rule.model if runs else None,
            auto_resolve=auto_resolve.record(rule) if runs else None,
        )
        if outcome in HELD:
            await self.statuses.set(alert.id, HELD[outcome])
        else:
            await self._let_through(alert, rule, held=held)
        if until is not None and self.deferred is not None and channel is not None:
            await self.deferred.defer(
                alert.id, rule.id, alert.source, channel, until, alert.severity
            )
            self.watchers(channel)
        log.info("policy rule %s: alert %s %s", rule.id, alert.id, outcome)
        return Verdict(decision, outcome, rule.channel if outcome == "routed" else None, until)

    async def _over_budget(
        self, rule: Rule, alert: Alert, now: datetime, *, held: bool
    ) -> datetime | None:
        """``None`` when the rule's budget (if any) lets one more through, else when to
        try again: the end of the period, or now for an alert that only queues behind
        older held alerts of its rule and source (they go first, in arrival order)."""
        budget = rule.budget
        if budget is None or rule.quiet:
            return None
        if not held and self.deferred is not None:
            if await self.deferred.waiting(rule.id, alert.source):
                return now
        limit = Limit(budget.investigations, budget.usd, budget.per)
        if await self.store.take_budget(rule.id, alert.source, limit, now):
            return None
        return period_end(period_start(now, budget.per), budget.per)

    async def _let_through(self, alert: Alert, rule: Rule, *, held: bool) -> None:
        if held:
            await self.statuses.set(alert.id, RELEASED)
        if rule.severity is not None and rule.severity != alert.severity:
            alert.severity = rule.severity
            await self.store.set_severity(alert.id, rule.severity)
