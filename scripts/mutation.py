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
lists, with the reason, the mutants that change nothing a test could observe. The script
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

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / "var" / "mutation"
SOURCES = ("agent", "alerts", "bot", "cli", "config", "core", "store", "tools")
KILLED = {"killed", "timeout", "segfault", "caught by type check"}


@dataclass(frozen=True)
class Group:
    """Guarded modules, the mutant names to run (globs) and the tests that guard them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()  # mutant-name globs; every mutant of the modules when empty
    elsewhere: tuple[str, ...] = ()  # globs of mutants another group's tests judge


_CLAIMING = "store.work_claim.xǁClaimingQueueǁ"
_PG_ONLY = (  # the PostgreSQL branches of the claim (mutant names: re-check after an edit)
    _CLAIMING + "_now__mutmut_[23]",
    _CLAIMING + "claim__mutmut_[3-9]",
    _CLAIMING + "claim__mutmut_1[0-2]",
    _CLAIMING + "_candidates__mutmut_29",
    _CLAIMING + "_candidates__mutmut_3[0-5]",
    _CLAIMING + "_expire__mutmut_1[1-4]",
)
GROUPS: dict[str, Group] = {
    "sql_guard": Group(
        ("tools/sql_guard.py", "tools/sql_functions.py"),
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
        ),
        only=(  # the gate, and the parsing of addresses it relies on
            "tools.intel.internal.*",
            "tools.intel.indicators.x_*",
            "alerts.addresses.*",
        ),
    ),
    "slack_body": Group(("bot/slack_body.py",), ("tests/bot/test_slack_body.py",)),
    "slack_gate": Group(
        ("bot/middleware.py", "bot/stop_policy.py"),
        ("tests/bot/test_slack_gate.py",),
        only=(  # who may use socbot where, and who may stop a run
            "bot.middleware.xǁGatekeeperǁ*",
            "bot.middleware.x__app_team*",
            "bot.middleware.x__is_bot_event*",
            "bot.middleware.x__who_where*",
            "bot.middleware.x__s__*",
            "bot.stop_policy.*",
        ),
    ),
    "slack_auth": Group(  # who may decide, vote, approve; deliveries handled once
        (
            "bot/middleware.py",
            "bot/feedback.py",
            "bot/review.py",
            "bot/approvals.py",
            "bot/suppress.py",
        ),
        (
            "tests/bot/test_review_rules.py",
            "tests/bot/test_review_edit_rules.py",
            "tests/bot/test_vote_rules.py",
            "tests/bot/test_verdict_rules.py",
            "tests/bot/test_approval_rules.py",
            "tests/bot/test_suppress_rules.py",
            "tests/bot/test_dedupe_rules.py",
        ),
        only=(
            "bot.middleware.xǁDeduperǁ*",
            "bot.feedback.xǁFeedbackActionsǁon_*",
            "bot.feedback.x__open*",
            "bot.feedback.x_tell*",
            "bot.review.xǁSlackReviewǁallowed*",
            "bot.review.xǁSlackReviewǁon_*",
            "bot.review.x__where*",
            "bot.review.x__update*",
            "bot.approvals.xǁSlackApprovalsǁ__init__*",
            "bot.approvals.xǁSlackApprovalsǁon_decision*",
            "bot.approvals.xǁSlackApprovalsǁ_wake*",
            "bot.suppress.xǁSuppressActionsǁallowed*",
            "bot.suppress.xǁSuppressActionsǁon_decision*",
        ),
    ),
    "work_queue": Group(  # the queue's rules, each asserted on in-process SQLite
        ("store/work.py", "store/work_claim.py"),
        ("tests/store/test_work_claim_rules.py",),
        only=(
            "store.work.xǁWorkQueueǁrenew*",
            "store.work.xǁWorkQueueǁfinish*",
            "store.work.xǁWorkQueueǁrelease*",
            "store.work.xǁWorkQueueǁstop*",
            "store.work_claim.*",
        ),
        elsewhere=_PG_ONLY,
    ),
    "work_queue_pg": Group(  # what only PostgreSQL runs: the claim lock, FOR UPDATE
        ("store/work_claim.py",),
        ("tests/store/test_lease_renewal.py", "tests/store/test_claim_locks.py"),
        only=_PG_ONLY,
    ),
    "takeover": Group(  # what a dead replica left, sent back; a stalled launch fenced off
        ("store/stale.py", "store/replicas.py", "store/work.py"),
        ("tests/store/test_takeover_rules.py",),
        only=("store.stale.*", "store.replicas.*", "store.work.x__launched*"),
    ),
    "post_once": Group(("bot/post_once.py",), ("tests/bot/test_post_once_rules.py",)),
    "grounding": Group(
        ("agent/review/grounding.py",),
        (
            "tests/agent/test_grounding.py",
            "tests/agent/test_grounding_values.py",
            "tests/agent/test_review.py",
            "tests/agent/test_attack_techniques.py",
        ),
    ),
    "duckdb_pool": Group(  # every way a worker is killed and replaced, what it inherits
        ("tools/logs/duckdb_pool.py",),  # the pool alone: real workers, a three-row CSV
        ("tests/tools/test_duckdb_pool_kill.py", "tests/tools/test_duckdb_pool_workers.py"),
    ),
    "webhook": Group(("bot/webhook.py",), ("tests/bot/test_webhook_checks.py",)),
    "policy": Group(
        ("alerts/policy/match.py", "alerts/policy/decide.py"),
        ("tests/alerts/test_policy.py", "tests/alerts/test_policy_match.py"),
    ),
    "web_access": Group(
        ("bot/web/access.py", "bot/web/app.py"),
        (
            "tests/bot/web/test_access.py",
            "tests/bot/web/test_guard.py",
            "tests/bot/web/test_pages.py",
        ),
        only=(  # who may see what, and the guard in front of every route
            "bot.web.access.*",
            "bot.web.app.x__expected_origin*",
            "bot.web.app.x__csrf_ok*",
            "bot.web.app.x_guard*",
            "bot.web.app.x__guarded*",
        ),
    ),
    "mcp_egress": Group(
        ("tools/mcp/egress.py",),
        ("tests/tools/test_mcp_egress.py",),
    ),
}
# A small fixed subset for CI: pure functions, fast tests, nothing timing-dependent.
CI_GROUPS = ("grounding_ci", "mcp_egress")
CI_ONLY = ("grounding_ci",)  # a part of another group: not run again with every group
GROUPS["grounding_ci"] = Group(
    ("agent/review/grounding.py",),
    ("tests/agent/test_grounding.py", "tests/agent/test_grounding_values.py"),
    only=("agent.review.grounding.xǁHaystackǁhas*", "agent.review.grounding.x_value_found*"),
)

# Mutants no test can tell from the original, each with the reason.
_G = "agent.review.grounding."
_SET = "the dict is an ordered set: its values are never read"
_ONE_COLON = 'kind is "bytes:<unit>", one colon: every split gives the same [1]'
_P = "alerts.policy."
_UNUSED_BOUNDS = "start and end are read only when hours is given, which sets both"
_APP = "bot.web.app."
_HEADER_CASE = "aiohttp's request headers are case-insensitive"
_HOOK = "bot.webhook.xǁAlertWebhookǁ"
_INT = "tools.intel.internal."
_IND = "tools.intel.indicators."
_ADDR = "alerts.addresses."
_LOWER_X = 'stripping "X" after lower(): there is no "X" left to strip'
_INTERNAL_NAMED = "every internal range has a non-public reason: the fallback is never shown"
_SIX_TO_FOUR = "a 6to4 address (2002::/16) is public to ipaddress: the fallback is None too"
_BODY = "bot.slack_body."
_FIRST_PART = 'split(";") with any maxsplit: the part before the first ";" is the same'
_UTF8 = '"UTF-8" and "utf-8" name the same codec'
_CURSOR = "an UPDATE's result is always a CursorResult: the isinstance is for mypy"
_NO_SLOT = (
    "candidates read when neither a slot nor the pool is free: admits() and room refuse"
    " every one (the condition only saves the query)"
)
_FOR_UPDATE_OF = (
    "FOR UPDATE without OF locks the FROM's tables: only work (the EXISTS subquery's"
    " rows are not locked either way)"
)
_POOL = "tools.logs.duckdb_pool."
_NO_PIPE = "Popen is given PIPE for stdin and stdout: never None, the raise is unreachable"
_PO = "bot.post_once."
_SAME_LENGTH = "the lists zipped have one length by construction (_aligned pads or cuts)"
_STAMPS = "stamps are searched for times between non-digits only: letters around change nothing"
_DEDUPE = "bot.middleware.xǁDeduperǁ"
_VOTE = "bot.feedback.xǁFeedbackActionsǁ"
_BOLT_BODY = 'BoltResponse\'s body is "" by default'
_NOT_THERE = (
    'a dialog without a {} read as "XXXX": no run was socbot\'s there, so votable refuses'
    " it as it refuses the empty one (before anyone is told)"
)
EQUIVALENT: dict[str, str] = {
    _G + "xǁHaystackǁ__init____mutmut_13": _STAMPS,
    _G + "xǁHaystackǁ__init____mutmut_30": _STAMPS,
    _G + "xǁHaystackǁ__init____mutmut_32": _STAMPS,
    _G + "x__refang__mutmut_21": r"\bHXXP with re.I matches what \bhxxp does",
    _G + "x__refang__mutmut_23": "the haystack is lower-cased right after: HTTP is http",
    _G + "x_quoted_values__mutmut_3": _SET,
    _G + "x_quoted_values__mutmut_20": _SET,
    _G + "x_quoted_values__mutmut_24": _SET,
    _G + "x_quoted_values__mutmut_39": _SET,
    _G + "x_quoted_values__mutmut_46": _SET,
    _G + "x_value_found__mutmut_21": _ONE_COLON,
    _G + "x_value_found__mutmut_22": _ONE_COLON,
    _G + "x_value_found__mutmut_24": _ONE_COLON,
    _G + "xǁHaystackǁhas_number__mutmut_7": "< or <= 1e-9: no two parsed floats differ by 1e-9",
    _G + "xǁHaystackǁhas_number__mutmut_15": (
        "0 or 1 decimals for a value without '.' (>= 1e16): floats there are whole"
    ),
    _P + "match.x__entity_check__mutmut_21": (
        'a missing role read as "" or "xxxx": only a rule asking for role "xxxx" tells'
    ),
    _P + "match.x__window_check__mutmut_6": _UNUSED_BOUNDS,
    _P + "match.x__window_check__mutmut_7": _UNUSED_BOUNDS,
    _P + "match.x_networks__mutmut_2": "strict=None is strict=False (falsy)",
    _P + "decide.xǁRuleSetǁtrials__mutmut_11": (
        "the refusal is also computed after a miss, but the miss is reported first"
    ),
    "bot.web.access.xǁAccessǁmay_see__mutmut_6": (
        'channel_of("XXXX") is None like channel_of(""): not a slack: conversation'
    ),
    _APP + "x__csrf_ok__mutmut_4": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_5": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_17": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_18": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_30": 'check_csrf refuses "" and "XXXX" alike (not the MAC)',
    _APP + "x__guarded__mutmut_22": 'quote\'s default safe is "/"',
    _APP + "x__guarded__mutmut_23": 'safe="XX/XX": letters are never quoted anyway',
    _HOOK + "authorized__mutmut_9": _HEADER_CASE,
    _HOOK + "authorized__mutmut_10": _HEADER_CASE,
    _HOOK + "handle__mutmut_19": "aiohttp's response headers are case-insensitive",
    _HOOK + "handle__mutmut_20": "aiohttp's response headers are case-insensitive",
    _HOOK + "authorized__mutmut_11": 'no header read as "XXXX": not bearer, so no token',
    _HOOK + "authorized__mutmut_21": (
        'a non-bearer header compared as "XXXX": only a configured token "XXXX" tells'
    ),
    _HOOK + "handle__mutmut_104": "the task's name is for debugging only",
    _HOOK + "handle__mutmut_106": "the task's name is for debugging only",
    _HOOK + "handle__mutmut_52": (
        "reading limit + 2 bytes: a body over the limit is still over it, one under is whole"
    ),
    _BODY + "x_check_slack_request__mutmut_20": _FIRST_PART,
    _BODY + "x_check_slack_request__mutmut_31": _FIRST_PART,
    _BODY + "x_check_slack_request__mutmut_29": 'no Content-Type read as "xxxx": 415 either way',
    _BODY + "x_check_slack_request__mutmut_42": _UTF8,
    _BODY + "x_signature_valid__mutmut_56": _UTF8,
    _BODY + "x_signature_valid__mutmut_9": 'no timestamp read as "XXXX": not digits either',
    _BODY + "x_signature_valid__mutmut_18": 'no signature read as "XXXX": no HMAC either',
    "bot.middleware.xǁGatekeeperǁ_members__mutmut_6": (
        "< or <= at the very instant a 300 s monotonic-clock cache expires"
    ),
    "bot.middleware.xǁGatekeeperǁmiddleware__mutmut_59": _BOLT_BODY,
    _DEDUPE + "claim_recent__mutmut_3": _SET,
    _DEDUPE + "claim_recent__mutmut_5": "popitem(last=None): None is falsy, the oldest goes",
    _DEDUPE + "middleware__mutmut_23": _BOLT_BODY,
    _VOTE + "on_verdict__mutmut_10": 'no private_metadata read as "XXXX": not JSON either',
    _VOTE + "on_verdict__mutmut_56": _NOT_THERE.format("channel"),
    _VOTE + "on_verdict__mutmut_62": _NOT_THERE.format("thread"),
    "bot.review.xǁSlackReviewǁon_edit__mutmut_10": (
        'a click without a value looks up "XXXX": no bullet has that id (socbot makes'
        " pb-<8 hex>), so no proposal either way"
    ),
    "bot.approvals.xǁSlackApprovalsǁon_decision__mutmut_20": (
        'a click without a value read as "XXXX": not digits either, so no request'
    ),
    "bot.suppress.xǁSuppressActionsǁon_decision__mutmut_44": (
        'a click without a value read as "XXXX": not digits either, so suppression 0, none'
    ),
    "bot.suppress.xǁSuppressActionsǁon_decision__mutmut_53": (
        'no action_id read as "XXXX": neither approve nor lift, so a rejection either way'
        " (bolt routes only suppression_(approve|reject|lift) here)"
    ),
    _INT + "x__bare_suffixes__mutmut_4": _LOWER_X,
    _INT + "x_host_reason__mutmut_5": _LOWER_X,
    _INT + "x_is_internal_domain__mutmut_5": _LOWER_X,
    _INT + "x_url_part_reasons__mutmut_6": _SET,
    _INT + "x_url_part_reasons__mutmut_29": _SET,
    _INT + "x__blob_texts__mutmut_29": (
        'b64decode (not strict) stops at the padding: one "=" or three after 4n + 3 digits'
    ),
    _INT + "x_host_reason__mutmut_34": _INTERNAL_NAMED,
    _INT + "x_host_reason__mutmut_35": _INTERNAL_NAMED,
    _IND + "x__host_target__mutmut_3": "_split_url refuses a URL without a host first",
    _IND + "x_refang__mutmut_36": "^HXXP with re.I matches what ^hxxp does",
    _IND
    + "x_refang__mutmut_38": "validate_url lower-cases the scheme; a domain with :// is refused",
    _IND + "x_validate_domain__mutmut_6": _LOWER_X,
    _IND + "x_validate_domain__mutmut_21": _LOWER_X,
    _IND + "x_validate_domain__mutmut_30": '"IDNA" and "idna" name the same codec',
    _IND + "x_validate_domain__mutmut_32": '"ASCII" and "ascii" name the same codec',
    _IND + "x_validate_domain__mutmut_8": "any text with :// has a / too",
    _ADDR + "x_loopback_wildcard__mutmut_5": _LOWER_X,
    _ADDR + "x_parse_ipv4_loose__mutmut_5": '"" popped or kept: no part, or an empty one, is None',
    _ADDR + "x_parse_ipv4_loose__mutmut_36": '"0" read as octal is 0 too',
    _ADDR + "x_parse_ipv4_loose__mutmut_42": '"XX89XX" holds 8 and 9; a part is digits',
    _ADDR + "x_non_public_reason__mutmut_14": _SIX_TO_FOUR,
    _ADDR + "x_non_public_reason__mutmut_15": _SIX_TO_FOUR,
    "store.work.xǁWorkQueueǁrelease__mutmut_23": _CURSOR,
    "store.work.xǁWorkQueueǁrelease__mutmut_24": _CURSOR,
    _CLAIMING + "claim__mutmut_9": "SQL keywords and function names are case-insensitive",
    _CLAIMING + "_candidates__mutmut_32": _FOR_UPDATE_OF,
    _CLAIMING + "_candidates__mutmut_34": _FOR_UPDATE_OF,
    _CLAIMING + "_now__mutmut_2": (
        "SQLite's DateTime stores the digits without the zone: aware and naive UTC alike"
    ),
    _CLAIMING + "claim__mutmut_42": _NO_SLOT,
    _CLAIMING + "claim__mutmut_45": _NO_SLOT,
    _CLAIMING + "claim__mutmut_62": _NO_SLOT,
    _CLAIMING + "claim__mutmut_64": _NO_SLOT,
    _CLAIMING + "claim__mutmut_66": "waiting is only read for its truth: None is False",
    _CLAIMING + "claim__mutmut_84": (
        "break after the first row waiting for a slot: room stays 0 and background yields,"
        " so no later row could start"
    ),
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_15": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_18": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_21": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_38": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_41": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_44": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_15": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_18": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_23": _SAME_LENGTH,
    _POOL + "x__pipe__mutmut_2": _NO_PIPE,
    _POOL + "x__pipe__mutmut_3": _NO_PIPE,
    _POOL + "x__pipe__mutmut_4": _NO_PIPE,
    _POOL + "xǁDuckDBPoolǁ__init____mutmut_11": "_closed = None: read only for its truth",
    _POOL + "xǁDuckDBPoolǁ_discard__mutmut_4": (
        "< or <= size: a discarded worker was taken under the loop's semaphore (one loop"
        " at a time), so idle plus taken <= size and idle < size whenever one is discarded"
    ),
    "tools.mcp.egress.x__texts__mutmut_1": (
        "True, False and None sent as text: one label, no address, name or e-mail in it"
    ),
}


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

    return text + (
        "\n[tool.mutmut]\n"
        f"source_paths = {toml_list(SOURCES)}\n"
        f"also_copy = {toml_list(['prompts', 'examples', 'scripts', 'bench'])}\n"
        f"only_mutate = {toml_list(group.modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(group.tests)}\n"
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
        unchecked = counts.get("not checked", 0)  # an interrupted run
        total = len(mine) - len(equivalent) - unchecked
        score = 100.0 * killed / total if total else 100.0
        lowest = min(lowest, score)
        print(
            f"{module}: {len(mine)} mutants, {unchecked} not checked, {killed} killed, "
            f"{len(equivalent)} equivalent, {total - killed} survived ({dict(counts)}) "
            f"-> {score:.1f} %"
        )
        for mutant, status in sorted(mine.items()):
            if status not in KILLED | {"not checked"} and mutant not in EQUIVALENT:
                print(f"    {mutant}: {status}")
    return lowest


if __name__ == "__main__":
    sys.exit(main())
