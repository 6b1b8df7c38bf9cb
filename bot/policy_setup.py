"""The alert policy's parts for one replica: the gate (``bot.policy_gate``: rule files
checked against the price table, the approved Slack suppressions, budgets whose held
alerts wait in the work queue) and the "Suppress similar…" flow (``bot.suppress``)."""

from __future__ import annotations

from alerts.policy.load import RuleFiles
from bot.policy_gate import PolicyGate, SlackSuppressions
from bot.suppress import SuppressActions
from config.settings import Settings
from store.alert_status import AlertStatuses
from store.alerts import AlertStore
from store.db import Database
from store.feedback import FeedbackStore
from store.policy import PolicyStore
from store.policy_deferred import DeferredAlerts
from store.suppressions import SuppressionStore


def policy_parts(
    settings: Settings, db: Database, alerts: AlertStore
) -> tuple[PolicyGate, SuppressActions]:
    """The alert policy (``bot.policy_gate``) and its "Suppress similar…" flow
    (``bot.suppress``), sharing the approved suppressions."""
    suppressions = SuppressionStore(db)
    slack = SlackSuppressions(suppressions, settings.policy.reload_s)
    policy = settings.policy  # a rule's model must be priced (checked at load)
    files = RuleFiles(policy.dir, reload_s=policy.reload_s, prices=settings.gemini.prices)
    gate = PolicyGate(
        policy,
        PolicyStore(db),
        AlertStatuses(db),
        extra=slack,
        files=files,
        deferred=DeferredAlerts(db),
    )
    suppress = SuppressActions(
        feedback=FeedbackStore(db),
        alerts=alerts,
        suppressions=suppressions,
        policy=settings.policy,
        learning=settings.learning,
        changed=slack.changed,
    )
    return gate, suppress
