"""A policy rule as written in a TOML file: what it matches and what it does.

The shape, checked strictly (an unknown key is an error)::

    [[rule]]
    id = "scanner-port-probes"
    action = "ignore"            # ignore | suppress | route | investigate
    [rule.match]
    source = "guardduty"
    title = "Recon:EC2/Port*"    # glob, case-insensitive; "re:..." for a regex
    ip = ["10.20.0.0/16"]

See docs/policy.md for every key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from alerts.model import EntityKind, Severity
from config.agent_settings import price_for
from config.model_names import canonical

Action = Literal["ignore", "suppress", "route", "investigate"]
AutoVerdict = Literal["false_positive", "benign"]  # what socbot may close on its own
Confidence = Literal["low", "medium", "high"]
QUIET_ACTIONS: frozenset[str] = frozenset({"ignore", "suppress"})
Scalar = str | int | float | bool
Words = str | list[str]


def as_list(value: Words | None) -> list[str]:
    """A one-or-many value as a list (``"x"`` → ``["x"]``)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EntityMatch(_Strict):
    """One entity the alert must name: of ``kind``, in ``role``, with a value or address."""

    kind: EntityKind
    value: Words | None = Field(None, description="glob(s) or re:..., case-insensitive")
    cidr: Words | None = Field(None, description="network(s) an ip entity must be in")
    role: Words | None = Field(None, description="actor | source | target | ...")

    @model_validator(mode="after")
    def _cidr_for_ips(self) -> EntityMatch:
        if self.cidr is not None and self.kind != "ip":
            raise ValueError(f"cidr applies to ip entities, not {self.kind!r}")
        return self


class Window(_Strict):
    """When (UTC) the alert happened: its event time, else when it arrived."""

    hours: str | None = Field(None, description="HH:MM-HH:MM, may wrap midnight")
    days: list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] | None = None


class Match(_Strict):
    """Every condition given must hold (an empty match matches every alert)."""

    source: Words | None = None
    format: Words | None = None
    title: Words | None = None
    text: Words | None = Field(None, description="the title or the description")
    severity: list[Severity] | Severity | None = None
    ip: Words | None = Field(None, description="CIDR(s) or address(es) any ip must be in")
    user: Words | None = None
    host: Words | None = None
    resource: Words | None = None
    entity: list[EntityMatch] = Field(default_factory=list)
    fields: dict[str, Scalar | list[Scalar]] = Field(
        default_factory=dict, description="JMESPath over the raw payload → expected value(s)"
    )
    window: Window | None = None


class Budget(_Strict):
    """At most so many investigations (and/or dollars) per alert source per period."""

    investigations: int | None = Field(None, ge=0)
    usd: float | None = Field(None, ge=0)
    per: Literal["hour", "day"] = "hour"

    @model_validator(mode="after")
    def _some_limit(self) -> Budget:
        if self.investigations is None and self.usd is None:
            raise ValueError("a budget needs investigations or usd")
        return self


def _both_negatives() -> list[AutoVerdict]:
    return ["false_positive", "benign"]


class AutoResolve(_Strict):
    """socbot may resolve its own verdicts on this rule's alerts (docs/policy.md): only the
    ``verdicts`` listed (never ``true_positive``), at ``confidence`` or above; a share of
    them (``audit_share``, else ``cases.audit_share``) goes to a blind human review."""

    verdicts: list[AutoVerdict] = Field(default_factory=_both_negatives, min_length=1)
    confidence: Confidence = "high"
    audit_share: float | None = Field(None, ge=0.0, le=1.0)


class Rule(_Strict):
    """One rule of the policy (see the module docstring)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")
    description: str = ""
    action: Action
    match: Match = Field(default_factory=Match)
    allow_critical: bool = Field(False, description="may ignore/suppress a critical alert")
    expires: datetime | None = None
    reason: str | None = None
    owner: str | None = None
    channel: str | None = Field(None, pattern=r"^[A-Z0-9]{2,20}$")
    severity: Severity | None = None
    mode: Literal["direct", "planned"] | None = Field(
        None, description="investigate in this engine mode (direct: one tool loop, cheaper)"
    )
    model: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,79}$",
        description="investigate on this model instead of models.main (a cheaper one; "
        "provider:model, a bare name is Gemini)",
    )
    budget: Budget | None = None
    auto_resolve: AutoResolve | None = Field(
        None, description="socbot resolves its own false_positive/benign verdicts (true = defaults)"
    )

    @field_validator("auto_resolve", mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        """``auto_resolve = true`` is the defaults, ``false`` none."""
        if value is True:
            return {}
        return None if value is False else value

    @field_validator("expires")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("expires needs a time zone (e.g. 2026-12-31T00:00:00Z)")
        return value

    @field_validator("model")
    @classmethod
    def _priced(cls, value: str | None, info: ValidationInfo) -> str | None:
        """With the price table in the context (``alerts.policy.load``), only a model it
        prices: an unpriced one would run uncounted by a dollar budget."""
        if value is None:
            return None
        value = canonical(value)  # an unknown provider is refused here
        prices = (info.context or {}).get("prices")
        if prices is not None and price_for(prices, value) is None:
            raise ValueError(f"{value!r} has no price in gemini.prices (a typo?)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Rule:
        problem = _inconsistency(self)
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def quiet(self) -> bool:
        """True when the alert is stored and counted but not investigated."""
        return self.action in QUIET_ACTIONS


def _inconsistency(rule: Rule) -> str | None:
    """What a rule's action and its other fields disagree on (a plain function: the
    validator's body, where mutation testing reaches it)."""
    needed = {"expires": rule.expires, "reason": rule.reason, "owner": rule.owner}
    missing = [name for name, value in needed.items() if not value]
    if rule.action == "suppress" and missing:
        return f"a suppress rule needs expires, reason and owner: no {', '.join(missing)}"
    if rule.action == "route" and not rule.channel:
        return "a route rule needs channel (a Slack channel id)"
    if rule.action != "route" and rule.channel:
        return "channel applies to route rules only"
    asks = rule.severity or rule.budget or rule.mode or rule.model or rule.auto_resolve
    if rule.action in QUIET_ACTIONS and asks:
        return (
            f"{rule.action} investigates nothing: severity, mode, model, budget and "
            "auto_resolve apply to route and investigate rules"
        )
    return None
