"""The team playbook: bullets, their YAML files, entry rules, learning runs, votes."""

__all__ = ["bullets", "feedback", "files", "learning", "rules"]
