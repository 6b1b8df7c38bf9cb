"""What people decide in Slack: approvals of risky calls, the playbook review and its edit
dialog, suppressions and their dialog, votes on verdicts, cases (take, assign, resolve,
reopen; their thread messages, reminders and the weekly digest as work). Each checks who
clicked before anything else.

May import notify, slack, blocks, work, observe. A new decision: a module here, its
authority check in the mutation groups (``scripts/mutation.py``)."""

__all__ = [
    "approvals",
    "case_audit",
    "case_digest",
    "case_posts",
    "case_rules",
    "cases",
    "playbook_review",
    "suppression",
    "votes",
]
