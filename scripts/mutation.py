"""Mutation testing of the modules that keep socbot safe and durable (mutmut).

    python3 -m uv run python scripts/mutation.py              # every group
    python3 -m uv run python scripts/mutation.py sql_guard    # some groups
    python3 -m uv run python scripts/mutation.py --ci         # the small fixed CI subset
    python3 -m uv run python scripts/mutation.py --list       # the groups and their tests

A group is a set of guarded modules (or only their guarded functions) and the test files
that guard them. Each group runs in its own scratch copy of the working tree
(``var/mutation/<group>/``, kept between runs so mutmut only re-checks what changed;
``--fresh`` starts over): mutmut copies the sources to ``mutants/``, runs the group's tests
once to learn which test reaches which function, then runs, for every mutant, only the
tests that reach its function. Subprocesses (DuckDB workers, replicas) import the mutated
copy too, since it is their working directory.

The score of a module is killed / (mutants - equivalent), where a mutant that made a test
time out counts as killed (the suite would fail by its own timeout) and ``EQUIVALENT``
(``mutation_equivalent.py``) lists, with the reason, the mutants that change nothing a
test could observe. The script
prints one line per module and exits 1 when one is under ``--target`` (90 % by default).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from mutation_equivalent import CLAIMING, EQUIVALENT  # scripts/ is the first on sys.path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / "var" / "mutation"
SOURCES = ("agent", "alerts", "bot", "cli", "config", "core", "evals", "store", "tools")
KILLED = {"killed", "timeout", "segfault", "caught by type check"}


@dataclass(frozen=True)
class Group:
    """Guarded modules, the mutant names to run (globs) and the tests that guard them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()  # mutant-name globs; every mutant of the modules when empty
    elsewhere: tuple[str, ...] = ()  # globs of mutants another group's tests judge
    select: str = ""  # a ``pytest -k`` expression narrowing the tests (e.g. one database)


_PG_ONLY = (  # the PostgreSQL branches of the claim (mutant names: re-check after an edit)
    CLAIMING + "_now__mutmut_[23]",
    CLAIMING + "_claim__mutmut_[3-9]",
    CLAIMING + "_claim__mutmut_1[0-2]",
    CLAIMING + "_candidates__mutmut_2[7-9]",
    CLAIMING + "_candidates__mutmut_3[0-3]",
    CLAIMING + "_expire__mutmut_9",
    CLAIMING + "_expire__mutmut_1[0-2]",
)
GROUPS: dict[str, Group] = {
    "sql_guard": Group(
        ("tools/sql/guard.py", "tools/sql/_functions.py"),
        (
            "tests/tools/test_sql_guard.py",
            "tests/tools/test_sql_guard_reasons.py",
            "tests/tools/test_hostile_sql.py",
        ),
    ),
    "intel_egress": Group(
        ("tools/intel/internal.py", "tools/intel/indicators.py", "alerts/addresses.py"),
        (
            "tests/tools/test_intel_internal.py",
            "tests/tools/test_intel_encodings.py",
            "tests/tools/test_intel_indicators.py",
            "tests/alerts/test_addresses.py",
            "tests/tools/test_mcp_egress.py",
            "tests/tools/test_intel_egress.py",
            "tests/tools/test_intel.py",
            "tests/alerts/test_indicators.py",
            "tests/tools/test_defanged_agreement.py",
        ),
        only=(  # the gate, and the parsing of addresses it relies on
            "tools.intel.internal.*",
            "tools.intel.indicators.x_*",
            "alerts.addresses.*",
        ),
    ),
    "defang": Group(  # the one reading of defanged indicators, for every gate and check
        ("alerts/defang.py",),
        (
            "tests/alerts/test_defang.py",
            "tests/tools/test_defanged_agreement.py",
            "tests/bot/blocks/test_slack_escape.py",
        ),
    ),
    "slack_body": Group(
        ("bot/transport/_slack_body.py",), ("tests/bot/transport/test_slack_body.py",)
    ),
    "slack_gate": Group(
        ("bot/events/middleware.py", "bot/events/_stop_policy.py"),
        ("tests/bot/events/test_slack_gate.py",),
        only=(  # who may use socbot where, and who may stop a run
            "bot.events.middleware.xǁGatekeeperǁ*",
            "bot.events.middleware.x__app_team*",
            "bot.events.middleware.x__is_bot_event*",
            "bot.events.middleware.x__who_where*",
            "bot.events.middleware.x__s__*",
            "bot.events._stop_policy.*",
        ),
    ),
    "slack_auth": Group(  # who may decide, vote, approve; deliveries handled once
        (
            "bot/events/middleware.py",
            "bot/decisions/votes.py",
            "bot/decisions/playbook_review.py",
            "bot/decisions/approvals.py",
            "bot/decisions/suppression.py",
            "bot/slack/interaction.py",
        ),
        (
            "tests/bot/decisions/test_review_rules.py",
            "tests/bot/decisions/test_review_edit_rules.py",
            "tests/bot/decisions/test_vote_rules.py",
            "tests/bot/decisions/test_verdict_rules.py",
            "tests/bot/decisions/test_approval_rules.py",
            "tests/bot/decisions/test_suppress_rules.py",
            "tests/bot/events/test_dedupe_rules.py",
        ),
        only=(
            "bot.events.middleware.xǁDeduperǁ*",
            "bot.decisions.votes.xǁFeedbackActionsǁon_*",
            "bot.decisions.votes.x__open*",
            "bot.decisions.votes.x_tell*",
            "bot.decisions.playbook_review.xǁSlackReviewǁallowed*",
            "bot.decisions.playbook_review.xǁSlackReviewǁon_*",
            "bot.slack.interaction.x_clicked*",
            "bot.decisions.playbook_review.x__update*",
            "bot.decisions.approvals.xǁSlackApprovalsǁ__init__*",
            "bot.decisions.approvals.xǁSlackApprovalsǁon_decision*",
            "bot.decisions.approvals.xǁSlackApprovalsǁ_wake*",
            "bot.decisions.suppression.xǁSuppressActionsǁallowed*",
            "bot.decisions.suppression.xǁSuppressActionsǁon_decision*",
        ),
    ),
    "work_queue": Group(  # the queue's rules, each asserted on in-process SQLite
        ("store/queue/work.py", "store/queue/_claims.py"),
        ("tests/store/queue/test_work_claim_rules.py",),
        only=(
            "store.queue.work.xǁWorkQueueǁrenew*",
            "store.queue.work.xǁWorkQueueǁfinish*",
            "store.queue.work.xǁWorkQueueǁrelease*",
            "store.queue.work.xǁWorkQueueǁstop*",
            "store.queue._claims.*",
        ),
        elsewhere=_PG_ONLY,
    ),
    "work_queue_pg": Group(  # what only PostgreSQL runs: the claim lock, FOR UPDATE
        ("store/queue/_claims.py",),
        ("tests/store/queue/test_lease_renewal.py", "tests/store/queue/test_claim_locks.py"),
        only=_PG_ONLY,
    ),
    "takeover": Group(  # what a dead replica left, sent back; a stalled launch fenced off
        ("store/triage/_stale.py", "store/queue/replicas.py", "store/queue/work.py"),
        ("tests/store/triage/test_takeover_rules.py",),
        only=("store.triage._stale.*", "store.queue.replicas.*", "store.queue.work.x__launched*"),
    ),
    "post_once": Group(("bot/slack/post_once.py",), ("tests/bot/slack/test_post_once_rules.py",)),
    "grounding": Group(
        ("agent/review/grounding.py",),
        (
            "tests/agent/review/test_grounding.py",
            "tests/agent/review/test_grounding_values.py",
            "tests/tools/test_defanged_agreement.py",
            "tests/agent/review/test_review.py",
            "tests/agent/review/test_attack_techniques.py",
        ),
    ),
    "duckdb_pool": Group(  # every way a worker is killed and replaced, what it inherits
        ("tools/logs/duckdb_pool.py",),  # the pool alone: real workers, a three-row CSV
        ("tests/tools/test_duckdb_pool_kill.py", "tests/tools/test_duckdb_pool_workers.py"),
    ),
    "webhook": Group(
        ("bot/intake/alerts_endpoint.py",), ("tests/bot/intake/test_webhook_checks.py",)
    ),
    "policy": Group(
        ("alerts/policy/match.py", "alerts/policy/decide.py"),
        ("tests/alerts/test_policy.py", "tests/alerts/test_policy_match.py"),
    ),
    "web_access": Group(
        ("bot/web/auth/access.py", "bot/web/guard.py"),
        (
            "tests/bot/web/auth/test_access.py",
            "tests/bot/web/test_guard.py",
            "tests/bot/web/pages/test_pages.py",
        ),
        only=(  # who may see what, and the guard in front of every route
            "bot.web.auth.access.*",
            "bot.web.guard.x__expected_origin*",
            "bot.web.guard.x__csrf_ok*",
            "bot.web.guard.x_guard*",
            "bot.web.guard.x__guarded*",
        ),
    ),
    "mcp_egress": Group(
        ("tools/mcp/egress.py",),
        ("tests/tools/test_mcp_egress.py",),
    ),
    "tool_results": Group(  # the one cap on what a tool (or an MCP server) answers
        ("tools/results.py",),
        (
            "tests/tools/test_results_cuts.py",
            "tests/tools/test_results_budget.py",
            "tests/tools/test_tool_base.py",
        ),
    ),
    "policy_rules": Group(  # what a rule file may say: suppressions, routes, budgets
        ("alerts/policy/rules.py",),
        (
            "tests/alerts/test_policy_suppress_rules.py",
            "tests/alerts/test_policy.py",
            "tests/alerts/test_policy_match.py",
            "tests/alerts/test_policy_auto_resolve.py",
        ),
    ),
    "pseudonyms": Group(  # restore is an allowlist; data cannot forge a pseudonym ([privacy])
        (
            "agent/model/privacy/tokens.py",
            "agent/model/privacy/mapper.py",
            "agent/model/privacy/seam.py",
            "agent/model/privacy/encoded.py",
            "agent/model/privacy/scan.py",
            "agent/model/privacy/names.py",
        ),
        (
            "tests/agent/model/privacy/test_mapper.py",
            "tests/agent/model/privacy/test_seam.py",
            "tests/agent/model/privacy/test_gate.py",
            "tests/agent/model/privacy/test_encoded.py",
            "tests/agent/model/privacy/test_fast_paths.py",
            "tests/agent/model/privacy/test_scan.py",
            "tests/agent/model/privacy/test_scan_unicode.py",
            "tests/agent/model/privacy/test_names.py",
        ),
    ),
    "privacy_detect": Group(  # what is personal: a value missed here reaches the model
        ("agent/model/privacy/detect.py", "agent/model/privacy/columns.py"),
        (
            "tests/agent/model/privacy/test_detect.py",
            "tests/agent/model/privacy/test_columns.py",
            "tests/agent/model/privacy/test_mapper.py",
            "tests/agent/model/privacy/test_gate.py",
            "tests/agent/model/privacy/test_fast_paths.py",
            "tests/agent/model/privacy/test_scan.py",
            "tests/agent/model/privacy/test_encoded.py",
            "tests/agent/model/privacy/test_canary.py",
        ),
    ),
    "web_session": Group(  # the signed session and the sign-in callback's checks
        ("bot/web/auth/session.py", "bot/web/auth/signin.py"),
        (
            "tests/bot/web/auth/test_session_tokens.py",
            "tests/bot/web/auth/test_signin_callback.py",
            "tests/bot/web/auth/test_signin_routes.py",
            "tests/bot/web/test_guard.py",
        ),
    ),
    "webhook_filters": Group(  # which outgoing webhook gets which event: fail closed
        ("bot/notify/notifier.py",),
        ("tests/bot/notify/test_webhook_filters.py", "tests/bot/notify/test_webhook_bodies.py"),
        only=("bot.notify.notifier.x_matches*", "bot.notify.notifier.x__allowed*"),
    ),
    "history": Group(  # only objectives and conclusions enter a thread's history
        ("agent/history.py",),
        ("tests/agent/test_history.py", "tests/agent/test_history_compact.py"),
    ),
    "eval_aggregate": Group(  # a run's figures from its scores: rates, intervals, baselines
        ("evals/aggregate.py",),
        ("tests/evals/test_aggregate.py", "tests/evals/test_score.py"),
    ),
    "retention": Group(  # what is past its lifetime goes; what is in use never does
        ("store/retention.py",),
        (
            "tests/store/test_retention.py",
            "tests/store/test_retention_in_use.py",
            "tests/store/test_retention_edges.py",
        ),
    ),
    "demo": Group(  # the demo runs offline and leaves nothing behind: its settings
        ("cli/demo/command.py",),
        ("tests/cli/test_demo.py",),
        only=("cli.demo.command.x_demo_settings*",),
    ),
    "cases_auth": Group(  # who may take, assign, resolve or reopen a case
        ("bot/decisions/case_rules.py", "bot/decisions/cases.py"),
        ("tests/bot/decisions/test_case_rules.py", "tests/bot/decisions/test_home_take.py"),
        only=(
            "bot.decisions.case_rules.*",
            "bot.decisions.cases.xǁCaseActionsǁ_allowed*",
            "bot.decisions.cases.xǁCaseActionsǁ_bot_user*",
            "bot.decisions.cases.xǁCaseActionsǁ_case_of_run*",
            "bot.decisions.cases.xǁCaseActionsǁ_decide*",
        ),
    ),
    # socbot closing its own verdicts: the gate, the draw, the audit (its rule, ``audit`` in
    # case_rules.refusal, is cases_auth's with the other decisions). On SQLite only: what
    # is mutated is the same SQL on both (the store's tests run on PostgreSQL in the suite)
    "auto_resolve": Group(
        (
            "alerts/policy/auto_resolve.py",
            "store/cases/auto.py",
            "store/cases/audits.py",
            "core/quality.py",
            "bot/decisions/case_audit.py",
            "bot/decisions/_audit_dialog.py",
        ),
        (
            "tests/alerts/test_policy_auto_resolve.py",
            "tests/store/cases/test_auto_resolve.py",
            "tests/store/cases/test_audits.py",
            "tests/store/cases/test_auto_guard.py",
            "tests/core/test_quality.py",
            "tests/bot/decisions/test_case_audit.py",
        ),
        only=(
            "alerts.policy.auto_resolve.*",
            "store.cases.auto.*",
            "store.cases.audits.*",
            "core.quality.x_drawn*",
            "core.quality.x_audits*",
            "bot.decisions.case_audit.*",
            "bot.decisions._audit_dialog.x_read_answer*",
        ),
        select="not postgresql",
    ),
    "pane_auth": Group(  # the assistant pane shows only what the person's channels hold
        ("bot/events/_pane_rules.py", "bot/events/pane.py", "bot/blocks/feedback.py"),
        (
            "tests/bot/events/test_pane_rules.py",
            "tests/bot/events/test_pane.py",
            "tests/bot/blocks/test_pane_and_feedback.py",
            "tests/bot/scenarios/test_slack_pane.py",
        ),
        only=(
            "bot.events._pane_rules.*",
            "bot.events.pane.xǁPaneǁ_target*",
            "bot.events.pane.xǁPaneǁ_visible*",
            "bot.events.pane.xǁPaneǁ_offer*",
            "bot.blocks.feedback.x_vote_of*",
        ),
    ),
    "past_alerts_scope": Group(  # the past-alert tools read only the asker's channels
        ("core/scope.py", "store/triage/alerts.py", "tools/past_alerts.py", "bot/events/scope.py"),
        (
            "tests/store/triage/test_alert_scope.py",
            "tests/tools/test_past_alerts_scope.py",
            "tests/tools/test_past_alerts.py",
            "tests/bot/events/test_scope.py",
            "tests/bot/scenarios/test_slack_scope.py",
        ),
        only=(
            "core.scope.*",
            "store.triage.alerts.xǁAlertStoreǁvisible*",
            "store.triage.alerts.xǁAlertStoreǁsearch*",
            "store.triage.alerts.x__within*",
            "tools.past_alerts.x_search_past_alerts*",
            "tools.past_alerts.x_get_past_alert*",
            "bot.events.scope.*",
        ),
    ),
    "home_auth": Group(  # App Home shows only the person's channels; Take there as in the thread
        (
            "bot/events/_pane_rules.py",
            "bot/events/home.py",
            "bot/events/_home_refresh.py",
            "bot/decisions/case_rules.py",
            "bot/decisions/cases.py",
            "store/cases/home.py",
        ),
        (
            "tests/bot/events/test_home.py",
            "tests/bot/events/test_pane_rules.py",
            "tests/bot/decisions/test_home_take.py",
            "tests/bot/decisions/test_case_rules.py",
            "tests/store/cases/test_home_reads.py",
        ),
        only=(
            "bot.events._pane_rules.x_visible*",
            "bot.events.home.xǁAppHomeǁview*",
            "bot.events.home.xǁAppHomeǁchanged*",
            "bot.events.home.xǁAppHomeǁmoved*",
            "bot.events.home.xǁAppHomeǁ_refresh*",
            "bot.events.home.xǁAppHomeǁon_opened*",
            "bot.events._home_refresh.xǁRefresherǁrecent*",
            "bot.events._home_refresh.xǁRefresherǁsoon*",
            "bot.decisions.case_rules.x_refusal*",
            "bot.decisions.cases.xǁCaseActionsǁ_allowed*",
            "bot.decisions.cases.xǁCaseActionsǁ_decide*",
            "bot.decisions.cases.xǁCaseActionsǁon_take*",
            "bot.decisions.cases.xǁCaseActionsǁ_say*",
            "store.cases.home.x_home_data*",
            "store.cases.home.x_owned_channels*",
            "store.cases.home.x__channels*",
            "store.cases.home.x__newest*",
            "store.cases.home.x__week*",
        ),
    ),
    "cases_page": Group(  # the cases list shows only the cases of the person's channels
        ("store/cases/browse.py",),
        ("tests/store/cases/test_browse.py",),
        only=(
            "store.cases.browse.x_visible*",
            "store.cases.browse.xǁ_Readerǁ__init__*",
            "store.cases.browse.xǁ_Readerǁquery*",
        ),
    ),
    "web_names": Group(  # only Slack-shaped ids reach Slack; names cleaned, cut, escaped
        ("bot/web/pages/names.py",),
        ("tests/bot/web/pages/test_names.py", "tests/bot/web/pages/test_names_edges.py"),
        only=(
            "bot.web.pages.names.x_shaped*",
            "bot.web.pages.names.x_cleaned*",
            "bot.web.pages.names.x_user_name*",
            "bot.web.pages.names.x_channel_name*",
            "bot.web.pages.names.xǁNamesǁ_shown*",
            "bot.web.pages.names.xǁNamesǁ_start*",
            "bot.web.pages.names.xǁNamesǁname__*",
            "bot.web.pages.names.xǁNamesǁ_failed*",
        ),
    ),
    "anthropic_schema": Group(  # what may be sent to Anthropic as a schema (fails closed)
        ("agent/model/anthropic_schema.py",),
        ("tests/agent/model/test_anthropic_schema.py",),
    ),
    "eval_scorer": Group(  # the eval's gates: cited values, precision, structured claims
        (
            "evals/score.py",
            "evals/established.py",
            "evals/techniques.py",
            "evals/claims.py",
            "evals/truth.py",
        ),
        (
            "tests/evals/test_score.py",
            "tests/evals/test_pack_format.py",
            "tests/evals/test_scenario.py",
        ),
    ),
}
# A fixed subset for CI: stand-alone tests that set their own clocks, nothing timed.
CI_GROUPS = (
    "grounding_ci",
    "mcp_egress",
    "slack_body",
    "slack_gate",
    "slack_auth_ci",
    "webhook",
    "takeover",
    "policy_rules",
    "eval_aggregate",
)
CI_ONLY = ("grounding_ci", "slack_auth_ci")  # parts of other groups: not run twice
GROUPS["slack_auth_ci"] = Group(  # who may approve a risky call, a proposal, a suppression
    (
        "bot/decisions/approvals.py",
        "bot/decisions/playbook_review.py",
        "bot/decisions/suppression.py",
    ),
    (
        "tests/bot/decisions/test_approval_rules.py",
        "tests/bot/decisions/test_review_rules.py",
        "tests/bot/decisions/test_suppress_rules.py",
    ),
    only=(
        "bot.decisions.approvals.xǁSlackApprovalsǁon_decision*",
        "bot.decisions.playbook_review.xǁSlackReviewǁallowed*",
        "bot.decisions.suppression.xǁSuppressActionsǁallowed*",
    ),
)
GROUPS["grounding_ci"] = Group(
    ("agent/review/grounding.py",),
    ("tests/agent/review/test_grounding.py", "tests/agent/review/test_grounding_values.py"),
    only=("agent.review.grounding.xǁHaystackǁhas*", "agent.review.grounding.x_value_found*"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help="groups to run (all but the CI subset)")
    parser.add_argument("--ci", action="store_true", help="run the fixed CI subset")
    parser.add_argument("--list", action="store_true", help="list the groups and exit")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results")
    parser.add_argument("--report", action="store_true", help="print earlier results only")
    parser.add_argument("--children", type=int, default=2, help="mutants checked at once")
    parser.add_argument("--target", type=float, default=90.0, help="minimum score, in %%")
    args = parser.parse_args()
    if args.list:
        for name, group in GROUPS.items():
            print(f"{name}: {', '.join(group.modules)} <- {', '.join(group.tests)}")
        return 0
    names = list(CI_GROUPS) if args.ci else args.groups or [g for g in GROUPS if g not in CI_ONLY]
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s): {', '.join(unknown)}")
    worst = 100.0
    for name in names:
        started = time.monotonic()
        group = GROUPS[name]
        if not args.report:
            run_group(name, group, fresh=args.fresh, children=args.children)
        statuses = results(name, group)
        print(f"== {name}: {time.monotonic() - started:.0f} s")
        worst = min(worst, report(group, statuses))
    return 0 if worst >= args.target else 1


def run_group(name: str, group: Group, *, fresh: bool, children: int) -> None:
    """Run mutmut on ``group`` in its scratch copy."""
    work = SCRATCH / name
    if fresh and work.exists():
        shutil.rmtree(work)
    copy_tree(work)
    (work / "pyproject.toml").write_text(with_config(group))
    mutmut = [sys.executable, "-m", "mutmut"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [*mutmut, "run", "--max-children", str(children), *group.only],
        cwd=work,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )


def results(name: str, group: Group) -> dict[str, str]:
    """``{mutant name: status}`` of the group's last run (interrupted ones included)."""
    listing = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=SCRATCH / name,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    statuses = dict(re.findall(r"^\s*(\S+): (.+?)\s*$", listing, re.M))
    if group.only:
        statuses = {
            m: s for m, s in statuses.items() if any(fnmatch.fnmatch(m, g) for g in group.only)
        }
    return {
        m: s for m, s in statuses.items() if not any(fnmatch.fnmatch(m, g) for g in group.elsewhere)
    }


def copy_tree(work: Path) -> None:
    """The working tree's files (committed or not, not ignored) into ``work``."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for rel in files:
        source, target = ROOT / rel, work / rel
        if not source.is_file():
            continue
        if target.exists() and target.read_bytes() == source.read_bytes():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def with_config(group: Group) -> str:
    """The project's pyproject.toml plus mutmut's section for ``group``."""
    text = (ROOT / "pyproject.toml").read_text()

    def toml_list(items: tuple[str, ...] | list[str]) -> str:  # plain names: no escaping
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    selection = [*group.tests, *(("-k", group.select) if group.select else ())]

    return text + (
        "\n[tool.mutmut]\n"
        f"source_paths = {toml_list(SOURCES)}\n"
        f"also_copy = {toml_list(['prompts', 'examples', 'scripts', 'bench', 'docs'])}\n"
        f"only_mutate = {toml_list(group.modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(selection)}\n"
        # a forcibly failed run leaves connections to the collector: not an error here
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "--timeout=120", '
        '"-W", "ignore::pytest.PytestUnraisableExceptionWarning"]\n'
    )


def report(group: Group, statuses: dict[str, str]) -> float:
    """Print one line per module and every surviving mutant; the lowest score."""
    lowest = 100.0
    for module in group.modules:
        prefix = module.removesuffix(".py").replace("/", ".") + "."
        mine = {m: s for m, s in statuses.items() if m.startswith(prefix)}
        counts = Counter(mine.values())
        # a listed mutant that a test killed anyway (e.g. by a timeout) counts as killed
        equivalent = [m for m, s in mine.items() if m in EQUIVALENT and s not in KILLED]
        killed = sum(n for s, n in counts.items() if s in KILLED)
        # an interrupted run, or tests that could not run at all: never a pass
        unchecked = counts.get("not checked", 0)
        total = len(mine) - len(equivalent)
        score = 100.0 * killed / total if total else 100.0
        lowest = min(lowest, score)
        print(
            f"{module}: {len(mine)} mutants, {unchecked} not checked, {killed} killed, "
            f"{len(equivalent)} equivalent, {total - killed - unchecked} survived ({dict(counts)}) "
            f"-> {score:.1f} %"
        )
        for mutant, status in sorted(mine.items()):
            if status not in KILLED | {"not checked"} and mutant not in EQUIVALENT:
                print(f"    {mutant}: {status}")
    return lowest


if __name__ == "__main__":
    sys.exit(main())
