"""The rows' states (``store.schema.states``): each enum holds what the columns hold, the
stored value is the plain word, and ``bot/`` and ``store/`` name states only through them."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

import pytest
from sqlalchemy import String, select, text

from store.db.engine import Database
from store.schema import (
    AlertRow,
    AlertStatus,
    ApprovalRow,
    ApprovalStatus,
    Investigation,
    InvestigationStatus,
    LearningRun,
    LearningStatus,
    PolicySuppression,
    SuppressionStatus,
    WorkKind,
    WorkRow,
    WorkState,
)
from store.schema.base import Base

REPO = Path(__file__).resolve().parents[2]
STATES = Path("store/schema/states.py")
# each enum, and the columns that hold its values
COLUMNS: list[tuple[type[StrEnum], list[object]]] = [
    (AlertStatus, [AlertRow.status]),
    (WorkState, [WorkRow.state]),
    (WorkKind, [WorkRow.kind]),
    (InvestigationStatus, [Investigation.status]),
    (LearningStatus, [LearningRun.status]),
    (ApprovalStatus, [ApprovalRow.status]),
    (SuppressionStatus, [PolicySuppression.status]),
]
ALL_VALUES = {member.value for enum, _ in COLUMNS for member in enum}
# ``status`` / ``state`` that are not a row's: a plan step's, the answer review's, the
# conclusion's draft, a web page's health check; and a playbook bullet's, which is the
# ``Literal`` of the pydantic ``PlaybookBullet`` (its JSON and YAML), not an enum yet
NOT_ROW_STATES = {"step.status", "s.status", "review.status", "self.state", "now[0]"}
NOT_ROW_STATES |= {"b.status", "bullet.status", "bot/blocks/investigation.py:status"}
NOT_ENUMERATED = {Path("store/playbook/bullets.py")}


def test_each_enum_has_the_values_that_the_code_writes() -> None:
    assert set(AlertStatus) == {
        "received",
        "queued",
        "investigating",
        "concluded",
        "failed",
        "cancelled",
        "grouped",
        "deferred",
        "ignored",
        "suppressed",
        "over_budget",
    }
    assert set(WorkState) == {"queued", "running", "done", "failed", "cancelled"}
    assert set(InvestigationStatus) == {
        "running",
        "interrupted",
        "answered",
        "concluded",
        "failed",
        "cancelled",
    }
    assert set(LearningStatus) == {"running", "done", "skipped", "failed", "interrupted"}
    assert set(ApprovalStatus) == {"pending", "approved", "denied", "expired"}
    assert set(SuppressionStatus) == {"proposed", "approved", "rejected", "lifted"}


@pytest.mark.parametrize(("enum", "columns"), COLUMNS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_value_fits_its_column(enum: type[StrEnum], columns: list[object]) -> None:
    for column in columns:
        kind = column.type  # type: ignore[attr-defined]
        assert isinstance(kind, String) and kind.length is not None
        assert [m for m in enum if len(m) > kind.length or m != m.lower()] == []


def test_the_partial_indexes_name_states_of_the_enums() -> None:
    """The SQL of ``uq_work_running_thread`` and ``uq_work_queued_learn`` (also in the
    migrations) says ``'running'``, ``'queued'``, ``'learn'``: values of the enums."""
    for index in Base.metadata.tables["work"].indexes:
        where = index.dialect_options["sqlite"]["where"]
        if where is not None:
            quoted = str(where).split("'")[1::2]
            assert set(quoted) <= set(WorkState) | set(WorkKind), index.name


async def test_a_stored_state_is_the_plain_word(db: Database) -> None:
    async with db.session() as session:
        session.add(
            WorkRow(
                kind=WorkKind.MENTION,
                state=WorkState.RUNNING,
                thread="C1:1.0",
                channel="C1",
                thread_ts="1.0",
                request={"state": WorkState.RUNNING},
            )
        )
    async with db.session() as session:
        state, kind, request = (
            await session.execute(text("SELECT state, kind, request FROM work"))
        ).one()
        by_enum = await session.scalar(select(WorkRow.id).where(WorkRow.state == WorkState.RUNNING))
        by_in = await session.scalar(
            select(WorkRow.id).where(WorkRow.state.in_([WorkState.QUEUED, WorkState.RUNNING]))
        )
    assert (type(state), state, type(kind), kind) == (str, "running", str, "mention")
    assert json.loads(request) == {"state": "running"}
    assert by_enum == by_in == 1
    assert (f"{WorkState.RUNNING}", json.dumps([WorkState.RUNNING])) == ("running", '["running"]')


def _is_state(node: ast.expr, where: Path) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    exempt = {ast.unparse(node), f"{where}:{ast.unparse(node)}"} & NOT_ROW_STATES
    return name in ("status", "state") and not exempt


def _strings(node: ast.expr | None) -> Iterator[ast.Constant]:
    """The string constants ``node`` is, or holds (a tuple of them, a conditional)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for elt in node.elts:
            yield from _strings(elt)
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)


def _assigned(node: ast.Assign | ast.AnnAssign, where: Path) -> Iterator[ast.Constant]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        pairs = (
            zip(target.elts, node.value.elts, strict=False)
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
            else [(target, node.value)]
        )
        for left, right in pairs:
            if _is_state(left, where):
                yield from _strings(right)


def _defaults(node: ast.arguments) -> Iterator[ast.Constant]:
    named = [*node.posonlyargs, *node.args]
    defaults = list(zip(named[len(named) - len(node.defaults) :], node.defaults, strict=True))
    defaults += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d]
    for arg, default in defaults:
        if arg.arg in ("status", "state"):
            yield from _strings(default)


def _state_literals(tree: ast.AST, where: Path) -> Iterator[ast.Constant]:
    """String literals given to, or compared with, a ``status`` / ``state``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_state(o, where) for o in operands):
                for operand in operands:
                    yield from _strings(operand)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("in_", "not_in") and _is_state(node.func.value, where):
                for arg in node.args:
                    yield from _strings(arg)
        elif isinstance(node, ast.keyword) and node.arg in ("status", "state"):
            yield from _strings(node.value)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            yield from _assigned(node, where)
        elif isinstance(node, ast.arguments):
            yield from _defaults(node)


def state_literals(root: Path, folders: tuple[str, ...] = ("bot", "store")) -> list[str]:
    """``path:line value`` of every state literal in ``folders`` outside the enum module
    (the migrations keep the words they wrote)."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root)
            if relative == STATES or relative in NOT_ENUMERATED or "migrations" in relative.parts:
                continue
            constants = _state_literals(ast.parse(path.read_text()), relative)
            for constant in sorted(constants, key=lambda c: (c.lineno, c.col_offset)):
                if constant.value in ALL_VALUES:
                    found.append(f"{relative}:{constant.lineno} {constant.value}")
    return found


def test_bot_and_store_name_states_only_through_the_enums() -> None:
    assert state_literals(REPO) == []


def test_the_literal_check_finds_what_it_forbids(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "m.py").write_text(
        "def f(row, step, status='cancelled'):\n"
        "    if row.status == 'queued' or step.status == 'done':\n"
        "        row.state, row.at = 'failed', 1\n"
        "    q.where(WorkRow.state.in_(('queued', 'running')))\n"
        "    g(status='done' if ok else 'failed', kind='alert')\n"
    )
    assert state_literals(tmp_path, ("bot",)) == [
        "bot/m.py:1 cancelled",
        "bot/m.py:2 queued",
        "bot/m.py:3 failed",
        "bot/m.py:4 queued",
        "bot/m.py:4 running",
        "bot/m.py:5 done",
        "bot/m.py:5 failed",
    ]
