"""The investigation engine (seed 004: Plan & Execute), in wings.

- ``agent/model/``: the seam to Gemini; ``agent/review/``: evidence check, critic and
  rewrite; ``agent/playbook/``: bullets and learning.
- At the top level, the engine itself: the stages (classifier, planner, executor,
  reflector, concluder, prompts, history) and the orchestration that calls them
  (``engine`` → ``waves`` / ``direct`` → ``concluding``, sharing a ``kit``).

Imports ``tools``, ``store``, ``core``, ``alerts`` and ``config``; never ``bot`` or ``cli``
(progress leaves through the ``core.events.Sink`` interface).
"""
