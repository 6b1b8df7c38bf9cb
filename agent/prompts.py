"""Prompt templates: one jinja2 file per stage under ``prompts/``.

Each stage template fills two blocks, ``system`` (the system instruction) and ``user``
(the task turn). Templates extend ``_stage.j2``, which joins the blocks with a random
per-render break that ``Prompts.render`` splits on, so a per-source override can replace
one block and keep the other (``{% extends "planner.j2" %}``).

Requests are laid out for Gemini's implicit cache, which bills the longest prefix an
earlier request to the same model sent (at least a minimum size) at the cached price:

- The planner, the reflector, the concluder and the critic share ONE system instruction,
  ``_manual.j2`` (first line ``socbot manual``): the environment, the log tables, the
  tool catalogue, the data rule, then every stage's instructions. A step's system
  instruction is its head, ``_manual_head.j2`` (up to and including the step's
  section), so every investigation request starts with the same text, and a step does
  not carry the other stages' instructions. Both hold only configuration: identical
  for every investigation of a deployment.
- Their user turn is append-only within an investigation: the planner, the reflector
  and the concluder start with the same case file (``_case.j2``: the fence, the time,
  the request, the alert, the playbook), the reflector and the concluder go on with
  the same results (``_results.j2``: objective, finished steps, insights), and only
  then comes what the call alone needs. A later call therefore repeats an earlier
  call's prompt up to where its own part begins.
- The final section of such a user turn starts with the line ``socbot stage: <stage>``
  (``step <id>`` for a step), names the task and carries no data: it is what routes a
  request (``stage_named``) and it comes last, after the data, as Gemini's prompting
  guide advises for long contexts.
- The other stages (classifier, direct, learning) keep a system instruction of
  their own whose first line is ``socbot stage: <stage>``.

No system instruction may contain the fence token (``render`` refuses it): the fence is
random per investigation, so only an investigation's own requests can repeat it.

A per-alert-source folder overrides the default: ``prompts/guardduty/planner.j2``
is used for GuardDuty alerts, ``prompts/planner.j2`` otherwise.

Every template is compiled once, when ``Prompts`` is built (at start-up): compiling
on first render would run on the event loop that Slack acks share.

Untrusted text (the request, alerts, tool output, history, the plan, findings and
insights) goes through a ``Fence``: it is wrapped in delimiters carrying a random
per-investigation token, and the prompt says that anything inside them is data, never
instructions. Only engine-written text (the templates, step ids and statuses, tool
names, numbers and configuration) is outside a fence.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.genai import types
from jinja2 import (
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    Template,
)

from agent.model.fence import Fence
from alerts.parse import Alert

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_SOURCE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
STAGE_PREFIX = "socbot stage: "  # first line of a stage's own system, or of the task section
MANUAL_PREFIX = "socbot manual"  # first line of the investigation stages' shared system


@dataclass(frozen=True)
class Manual:
    """What the shared system instruction says about the deployment (``_manual.j2``):
    the same for every investigation, so it must not vary per request."""

    catalogue: str  # every enabled tool, one line each
    disabled: Mapping[str, str]  # tool -> why it is off
    max_steps: int
    max_tool_calls: int  # per step


@dataclass(frozen=True)
class Rendered:
    """A rendered stage prompt: the system instruction and the user turn."""

    system: str
    user: str


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    """Compiled templates kept between starts, so that a start loads them instead of
    compiling (~50 ms): jinja's private folder in the temp directory (created 0700, refused
    when someone else owns it), keyed by the template's path and checked against its
    source. Without a usable folder every start compiles, as before."""
    try:
        return FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        return None


class Prompts:
    """Loads stage templates with ``StrictUndefined`` and per-source overrides."""

    def __init__(self, root: Path = PROMPTS_DIR) -> None:
        self.root = root
        self.env = Environment(
            loader=FileSystemLoader(str(root)),
            undefined=StrictUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            auto_reload=False,  # compiled once below; no stat per render
            bytecode_cache=_bytecode_cache(),
        )
        self.templates: dict[str, Template] = {
            name: self.env.get_template(name) for name in self.env.list_templates(["j2"])
        }

    def template_name(self, stage: str, source: str | None = None) -> str:
        """The file used for ``stage``: the source's override if it exists."""
        if source and _SOURCE_RE.match(source.lower()):
            candidate = f"{source.lower()}/{stage}.j2"
            if candidate in self.templates:
                return candidate
        return f"{stage}.j2"

    def render(self, stage: str, *, source: str | None = None, **variables: Any) -> Rendered:
        """Render ``stage`` (``planner``, ``step``...) into system + user text."""
        name = self.template_name(stage, source)
        template = self.templates.get(name) or self.env.get_template(name)
        part_break = f"\n@@socbot-part-{secrets.token_hex(8)}@@\n"
        text = template.render(part_break=part_break, **variables)
        system, sep, user = text.partition(part_break)
        if not sep:
            raise ValueError(f"template {template.name!r} does not extend _stage.j2")
        system, user = system.strip(), user.strip()
        fence = variables.get("data")
        if isinstance(fence, Fence) and fence.token in system:
            raise ValueError(f"template {template.name!r} puts the fence token in the system")
        if system.startswith(MANUAL_PREFIX):
            task = user.rfind("\n" + STAGE_PREFIX)
            if task < 0:
                raise ValueError(f"template {template.name!r} names no stage in its user turn")
            if isinstance(fence, Fence) and fence.token in user[task:]:
                raise ValueError(f"template {template.name!r} puts data in its task section")
        elif not system.startswith(STAGE_PREFIX):
            raise ValueError(f"template {template.name!r} must start with {STAGE_PREFIX!r}")
        return Rendered(system=system, user=user)


def stage_named(system: str, task: str) -> str:
    """The stage a request is for (what the fakes route on, ``step s1`` for a step).

    A stage with a system instruction of its own names itself on its first line; the
    investigation stages share ``socbot manual`` and name themselves on the last
    ``socbot stage: `` line of their task turn (``task``), which no data follows.
    """
    first = system.lstrip().split("\n", 1)[0].strip()
    if first.startswith(STAGE_PREFIX):
        return first[len(STAGE_PREFIX) :].strip()
    for line in reversed(task.splitlines()):
        if line.startswith(STAGE_PREFIX):
            return line[len(STAGE_PREFIX) :].strip()
    return ""


ALERT_RAW_CHARS = 12_000


def alert_summary(alert: Alert) -> str:
    """The alert's normalized fields (for steps, which do not need the raw payload)."""
    lines = [f"source: {alert.source}", f"title: {alert.title}"]
    if alert.severity:
        lines.append(f"severity: {alert.severity}")
    if alert.event_time:
        lines.append(f"event time: {alert.event_time.isoformat()}")
    if alert.entities:  # who and what, with the part each plays when the format says
        shown = (f"{e.kind} {e.value}" + (f" ({e.role})" if e.role else "") for e in alert.entities)
        lines.append("entities: " + ", ".join(shown))
    named = {e.value.lower() for e in alert.entities}  # each value once: tokens cost
    rest = [f"{i.kind} {i.value}" for i in alert.indicators if i.value.lower() not in named]
    if rest:
        lines.append(("other indicators: " if named else "indicators: ") + ", ".join(rest))
    return "\n".join(lines)


def alert_text(alert: Alert, max_chars: int = ALERT_RAW_CHARS) -> str:
    """Summary plus the raw payload as compact JSON (no indentation: tokens cost), cut."""
    raw = json.dumps(alert.raw, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(raw) > max_chars:
        raw = raw[:max_chars] + f"\n... [{len(raw) - max_chars} more characters omitted]"
    return f"{alert_summary(alert)}\nraw payload:\n{raw}"


def history_text(contents: list[types.Content]) -> str:
    """The conversation as ``analyst:`` / ``socbot:`` paragraphs, for a data block."""
    turns = []
    for content in contents:
        text = "".join(p.text for p in content.parts or [] if p.text).strip()
        if text:
            who = "socbot" if content.role == "model" else "analyst"
            turns.append(f"{who}: {text}")
    return "\n\n".join(turns)
