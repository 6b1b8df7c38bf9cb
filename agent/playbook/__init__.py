"""The team playbook: selecting bullets for a prompt (``selection``), recording their use
in a run (``use``), and learning new ones from outcomes and feedback (``learning/``,
seeds 001 and 002). May import ``agent.model``, the stages and ``agent.run``, never the
engine or the waves.
"""
