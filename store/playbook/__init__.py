"""The team playbook: bullets, their YAML files, the rules of entry, learning runs and
their metrics, analysts' votes.

May import triage, queue, investigations, db, schema."""

__all__ = ["bullets", "feedback", "files", "learning", "rules"]
