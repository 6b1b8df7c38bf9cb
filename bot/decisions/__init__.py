"""What people decide in Slack: approvals of risky calls, the playbook review and its
dialog, suppressions and their dialog, votes on verdicts."""

__all__ = ["approvals", "playbook_review", "suppression", "votes"]
