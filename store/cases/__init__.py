"""Cases: one per investigated alert (grouped alerts follow their leader's) or per mention
someone took; their transitions (take, assign, resolve, reopen, remind, audit; the blind
reviews awaiting one, ``audits``), each one conditional UPDATE that also writes its
``case_events`` row and the work row that tells the thread, so a decision is recorded once
across replicas; the figures read from them; what a person's App Home shows (``home``) and
who opened theirs lately (``home_openers``).

Owns ``cases``, ``case_events``, ``case_tally`` (kept by triggers) and ``home_openers``.
May import playbook, triage, queue, investigations, db, schema."""

__all__ = [
    "audits",
    "auto",
    "browse",
    "captures",
    "digests",
    "figures",
    "home",
    "home_openers",
    "opening",
    "quality",
    "records",
    "report",
    "tally",
    "transitions",
]
