"""The alert policy's parts for one replica: the gate (``bot.intake.policy.gate``: rule files
checked against the price table, the approved Slack suppressions, budgets whose held
alerts wait in the work queue) and the "Suppress similar…" flow (``bot.decisions.suppression``)."""

from __future__ import annotations

from alerts.policy.load import RuleFiles
from bot.decisions.suppression import SuppressActions
from bot.intake.policy.gate import PolicyGate, SlackSuppressions
from config.settings import Settings
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.queue.deferred import DeferredAlerts
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore
from store.triage.states import AlertStatuses
from store.triage.suppressions import SuppressionStore


def policy_parts(
    settings: Settings, db: Database, alerts: AlertStore
) -> tuple[PolicyGate, SuppressActions]:
    """The alert policy (``bot.intake.policy.gate``) and its "Suppress similar…" flow
    (``bot.decisions.suppression``), sharing the approved suppressions."""
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
