"""Cases: one per investigated alert (grouped alerts follow their leader's) or per mention
someone took; their transitions (take, assign, resolve, reopen, remind, audit; the blind
reviews awaiting one, ``audits``), each one conditional UPDATE that also writes its
``case_events`` row and the work row that tells the thread, so a decision is recorded once
across replicas; the figures read from them; and what a person's App Home shows (``home``).

Owns ``cases``, ``case_events`` and ``case_tally`` (kept by triggers). May import
playbook, triage, queue, investigations, db, schema."""

__all__ = [
    "audits",
    "auto",
    "browse",
    "captures",
    "digests",
    "figures",
    "home",
    "opening",
    "quality",
    "records",
    "report",
    "tally",
    "transitions",
]
