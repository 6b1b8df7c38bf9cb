"""Fakes at the network edge for tests (a scripted Gemini model, Gemini REST, Slack Web API).

The ``test_*.py`` files here check the harness itself (a fake answers like the service it
stands for), not socbot: they guard no socbot behaviour and are counted apart from it.
"""
