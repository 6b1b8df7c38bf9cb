"""Alert intake, the bottom floor: any vendor payload in, a normalized ``Alert`` out.

Owns the alert model, transport envelopes, the format catalogue (``formats/*.toml`` +
JMESPath), entities, indicators, address parsing and defanging (``defang``: the one
reading of ``hxxp``/``[.]``/``(at)`` for every check and gate), the fallback for unknown payloads
the strict JSON reader, and the bundled ATT&CK Enterprise catalogue (``attack``, data in
``mitre/``). Imports nothing of socbot but ``config``. A new alert
format is a TOML file in ``alerts/formats/``; new parsing code goes here.
"""
