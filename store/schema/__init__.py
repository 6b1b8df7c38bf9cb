"""The tables: one module per family, every one on the same declarative ``Base``.

Owns the schema (what ``store.db.migrate`` compares the migrations with); may import only
SQLAlchemy. A new table goes in its family's module and is named here, so that importing
``store.schema`` puts every table in ``Base.metadata``. Queries live in the wings above."""

from store.schema.alerts import AlertGroup, AlertRow, AlertStorm
from store.schema.approvals import ApprovalRow
from store.schema.base import Base, utcnow
from store.schema.caches import IntelCache
from store.schema.case_tally import CaseTally
from store.schema.cases import CaseDigest, CaseEvent, CaseRow, HomeOpener, run_figures
from store.schema.investigations import (
    Conversation,
    Investigation,
    Message,
    PrivacyMap,
    TraceEvent,
)
from store.schema.playbook import Bullet, BulletTag, Feedback, LearningRun
from store.schema.policy import PolicyBudget, PolicyHit, PolicySuppression
from store.schema.queue import ReplicaRow, SeenEvent, WorkRow
from store.schema.states import (
    AlertStatus,
    ApprovalStatus,
    CaseAction,
    CaseDisposition,
    CaseStatus,
    InvestigationStatus,
    LearningStatus,
    RunEnd,
    SuppressionStatus,
    WorkKind,
    WorkState,
)

__all__ = [
    "AlertGroup",
    "AlertRow",
    "AlertStatus",
    "AlertStorm",
    "ApprovalRow",
    "ApprovalStatus",
    "Base",
    "Bullet",
    "BulletTag",
    "CaseAction",
    "CaseDigest",
    "CaseDisposition",
    "CaseEvent",
    "CaseRow",
    "CaseStatus",
    "CaseTally",
    "Conversation",
    "Feedback",
    "HomeOpener",
    "IntelCache",
    "Investigation",
    "InvestigationStatus",
    "LearningRun",
    "LearningStatus",
    "Message",
    "PolicyBudget",
    "PolicyHit",
    "PolicySuppression",
    "PrivacyMap",
    "ReplicaRow",
    "RunEnd",
    "SeenEvent",
    "SuppressionStatus",
    "TraceEvent",
    "WorkKind",
    "WorkRow",
    "WorkState",
    "case_tally",  # the daily tally: its DDL, bucketing and facets
    "run_figures",
    "search",  # the text index: its DDL and its conditions
    "utcnow",
]
