"""The review of a draft: evidence references, the code check of findings against tool
results (grounding), the critic and the bounded rewrite (seeds 000 and 003).

May import ``agent.model``, ``agent.errors``, the stages' output models (``agent.planner``,
``agent.concluder``) and the floors below; never the orchestration (engine, waves, run).
"""
