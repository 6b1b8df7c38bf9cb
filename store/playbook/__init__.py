"""The team playbook: bullets, their YAML files, entry rules, learning runs, votes."""
