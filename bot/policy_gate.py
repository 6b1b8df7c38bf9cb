"""The alert policy between intake and investigation: one ``Verdict`` per stored alert.

``PolicyGate.decide`` runs the rules (``alerts.policy``: the files of ``policy.dir``,
re-read on change, after the suppressions approved in Slack) over a stored alert and
acts on the first that matches:

* ``ignore`` / ``suppress`` — the alert stays stored with status ``ignored`` /
  ``suppressed``: no card, no investigation (a forwarded alert's message gets a 🔕);
* a ``budget`` spent for this source and period — status ``over_budget``, counted as
  ``deferred``, not investigated (the budget is the database's: ``store.policy``);
* ``route`` — investigated in the rule's channel instead;
* ``investigate`` — investigated as usual;

``severity`` overrides the alert's severity first (the queue orders runs by it). Every
decision is recorded (``store.policy``: ``/healthz``, ``socbot usage``, ``/metrics``,
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
from alerts.policy.decide import CompiledRule, Decision, rule_set
from alerts.policy.load import Loaded, RuleFiles, parse_items
from config.policy_settings import PolicySettings
from store.alert_status import AlertStatuses
from store.policy import Limit, PolicyStore
from store.suppressions import Suppression, SuppressionStore

log = logging.getLogger(__name__)

Extra = Callable[[], Awaitable[list[CompiledRule]]]
QUIET_REACTION = "no_bell"  # on a forwarded alert's message the policy ignored


@dataclass(frozen=True)
class Verdict:
    """What happens to the alert: ``outcome`` (``None``: no rule matched) and where."""

    decision: Decision
    outcome: str | None = None
    channel: str | None = None

    @property
    def investigate(self) -> bool:
        return self.outcome not in ("ignored", "suppressed", "deferred")


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
    ) -> None:
        self.settings = settings
        self.store = store
        self.statuses = statuses
        self.extra = extra
        self.files = files or RuleFiles(settings.dir, reload_s=settings.reload_s)

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

    async def decide(self, alert: Alert, now: datetime | None = None) -> Verdict:
        """The verdict for a stored ``alert`` (its row updated to match)."""
        if not self.settings.enabled:
            return PASS
        try:
            return await self._decide(alert, now or datetime.now(UTC))
        except Exception:  # fail open: an alert the policy cannot judge is investigated
            log.exception("policy could not decide alert %s; investigating it", alert.id)
            return PASS

    async def _decide(self, alert: Alert, now: datetime) -> Verdict:
        decision = rule_set([await self.rules()]).decide(alert, now)
        rule = decision.rule
        if rule is None:
            return PASS
        assert decision.origin is not None
        outcome = {"ignore": "ignored", "suppress": "suppressed", "route": "routed"}.get(
            rule.action, "investigated"
        )
        if rule.budget is not None and not rule.quiet:
            budget = rule.budget
            limit = Limit(budget.investigations, budget.usd, budget.per)
            if not await self.store.take_budget(rule.id, alert.source, limit, now):
                outcome = "deferred"
        mode = rule.mode if outcome in ("investigated", "routed") else None
        await self.store.record(
            alert.id, rule.id, decision.origin, alert.source, outcome, now, mode=mode
        )
        if outcome in ("ignored", "suppressed", "deferred"):
            status = "over_budget" if outcome == "deferred" else outcome
            await self.statuses.set(alert.id, status)
        elif rule.severity is not None and rule.severity != alert.severity:
            alert.severity = rule.severity
            await self.store.set_severity(alert.id, rule.severity)
        log.info("policy rule %s: alert %s %s", rule.id, alert.id, outcome)
        return Verdict(decision, outcome, rule.channel if outcome == "routed" else None)
