"""The eval harness: scenario packs, offline tools per scenario, scoring and reports.

Sits between ``cli`` and ``bot`` (it drives the engine as the CLI does, never Slack):
it may import ``agent`` and the floors below, and only ``cli/eval_*.py`` imports it.
Pure parts (``scenario``, ``score``, ``aggregate``, ``compare``) import no engine code;
new scorers go in ``score``, new report forms beside ``report_html``.
"""
