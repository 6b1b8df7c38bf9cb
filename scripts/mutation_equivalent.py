"""Mutants no test can tell from the original, each with the reason (``scripts/mutation.py``).

Names number the changes of one function in order: after an edit of a listed function,
re-run its group with ``--fresh`` and check that each name still shows the mutant meant
(``mutmut show <name>`` in ``var/mutation/<group>``).
"""

from __future__ import annotations

CLAIMING = "store.queue._claims.xǁClaimingQueueǁ"

_G = "agent.review.grounding."
_SET = "the dict is an ordered set: its values are never read"
_ONE_COLON = 'kind is "bytes:<unit>", one colon: every split gives the same [1]'
_P = "alerts.policy."
_UNUSED_BOUNDS = "start and end are read only when hours is given, which sets both"
_APP = "bot.web.guard."
_HEADER_CASE = "aiohttp's request headers are case-insensitive"
_HOOK = "bot.intake.alerts_endpoint.xǁAlertWebhookǁ"
_INT = "tools.intel.internal."
_IND = "tools.intel.indicators."
_ADDR = "alerts.addresses."
_LOWER_X = 'stripping "X" after lower(): there is no "X" left to strip'
_INTERNAL_NAMED = "every internal range has a non-public reason: the fallback is never shown"
_SIX_TO_FOUR = "a 6to4 address (2002::/16) is public to ipaddress: the fallback is None too"
_BODY = "bot.transport._slack_body."
_FIRST_PART = 'split(";") with any maxsplit: the part before the first ";" is the same'
_UTF8 = '"UTF-8" and "utf-8" name the same codec'
_CURSOR = "an UPDATE's result is always a CursorResult: the isinstance is for mypy"
_NO_SLOT = (
    "candidates read when neither a slot nor the pool is free: admits() and room refuse"
    " every one (the condition only saves the query)"
)
_FOR_UPDATE_OF = (
    "FOR UPDATE without OF locks the FROM's tables: only work (the EXISTS subquery's"
    " rows are not locked either way)"
)
_POOL = "tools.logs.duckdb_pool."
_NO_PIPE = "Popen is given PIPE for stdin and stdout: never None, the raise is unreachable"
_PO = "bot.slack.post_once."
_AUDITS = "bot.decisions.case_audit.xǁCaseAuditsǁ"
_NO_THREAD = "a case without channel and thread gets no post (_queue_post): its key is unread"
_ROWID_ORDER = (
    "the id breaks created_at ties; on SQLite (the group's database) ties come in id order"
    " anyway — the tiebreak is for PostgreSQL"
)
_ASSIGNEE = "case_rules.refusal reads the assignee only for the decision assign, never audit"
_NO_HIT_RULE = (
    "the rule id of no policy hit: asked is then None and the rule is read only with an asked"
)
_SIGNER = "bot.web.auth.session.xǁSignerǁ"
_SIGNIN = "bot.web.auth.signin."
_CONFIGURED = "SignIn() refuses settings without client_id and client_secret: never empty here"
_SAME_LENGTH = "the lists zipped have one length by construction (_aligned pads or cuts)"
_STAMPS = "stamps are searched for times between non-digits only: letters around change nothing"
_DEDUPE = "bot.events.middleware.xǁDeduperǁ"
_VOTE = "bot.decisions.votes.xǁFeedbackActionsǁ"
_BOLT_BODY = 'BoltResponse\'s body is "" by default'
_NOT_THERE = (
    'a dialog without a {} read as "XXXX": no run was socbot\'s there, so votable refuses'
    " it as it refuses the empty one (before anyone is told)"
)
_PSEUDO_TRIE = "the trie regex: one branch wrapped in (?:) or a leaf of None match the same words"
_PSEUDO_FAST = (
    "only speed: the memo, the seen set, the compiled pattern and the alias pre-check save "
    "work; without them every value is found and replaced the same (token_for dedupes)"
)
_PSEUDO_NOTHING = "no pattern and no look-alike: the loop has nothing to replace, text returned"
_PSEUDO_ALIAS = "every spelling the pattern matches is an alias key: the default is never used"
_PSEUDO_OVERLAP = (
    "a look-alike cannot touch a value's match: values are not glued to a letter or digit, "
    "look-alikes begin with one and end with a digit"
)
_PSEUDO_CASE = "an ASCII text lowered or not: the match is case-insensitive either way"
_PSEUDO_DONE = (
    "the marked pairs read before only save work: reading a known or refused value again "
    "changes nothing"
)
_PSEUDO_BOUND = "a bound on memory: one entry more or fewer kept changes no output"
_PSEUDO_GLUE = (
    "the check only chooses the fast path: with every text sent down the pattern's path "
    "(or the filter) the matches are the same"
)
_PSEUDO_STRICT = "one character before and after each match: the three have the same length"
_B64_ALPHABET = "a run holds only base64 characters (the mask): strict or not, the same bytes"
_FIND_AFTER = "the space after a run is found after its first character: never at 0"
_PSEUDO_SLICE = "text[None:i] is text[0:i]"
_CODEC = "ASCII and UTF-8 name the same codecs as ascii and utf-8"
_TO_PATTERN = (
    "only chooses the automaton: text it is not sure of goes to the case-insensitive pattern,"
    " which finds the same (hypothesis compares the two)"
)
_PSEUDO_DEDUPE = "token_for hands the same value the same token: known() only saves a lookup"
_PSEUDO_NONE_FALSE = "json.dumps(ensure_ascii=None) is ensure_ascii=False (falsy)"
_PSEUDO_KIND = "detector.value(None, …) finds no kind it would not find in the text itself"
_DETECT = "agent.model.privacy.detect."
_COLUMNS = "agent.model.privacy.columns."
_JOINERS = "X is a letter (refused before the joiners are read); the joiners are all still there"
_PAIRED = "one domain run and one local tail per @: the two lists have the same length"
_RECTANGLE = "one chosen column per wanted one, and every row is as long as the columns"
_SAME_ENDS = "ASCII text read as ASCII or as replaced ASCII: the same bytes and the same ends"
_PRIV_MAP = "agent.model.privacy.mapper.xǁPseudonymiserǁ"
_PRIV_B64 = "agent.model.privacy.encoded."
_PANE = "bot.events.pane.xǁPaneǁ"
_NEWEST = "only found[0] is read, the newest under any limit"

_CASES_READ = "store.cases.browse.xǁ_Readerǁquery__mutmut_"
EQUIVALENT: dict[str, str] = {
    # eval_aggregate: ``percentile`` is None only for no values, so low and high are both
    # None or neither is
    "evals.aggregate.x_bootstrap__mutmut_26": "low is None exactly when high is None",
    # retention: ``since`` is read from the clock inside request_prune; no finished row
    # can carry that very instant, so ">=" and ">" select the same rows
    "store.retention.x_request_prune__mutmut_15": "since is the clock's own instant",
    **{
        f"store.retention.x_request_prune__mutmut_{n}": "the column's default is that value"
        " (queued, priority 0 for background work, 0 attempts, not stopped, {}, utcnow)"
        for n in (18, 19, 24, 25, 27, 29, 30, 35, 36, 37, 38)
    },
    "store.retention.xǁPrunerǁ_batch__mutmut_29": "a composite key's columns share one table",
    # demo: what the one scripted investigation never reads
    **{
        f"cli.demo.command.x_demo_settings__mutmut_{n}": why
        for n, why in (
            (3, "the catalogue is ASCII: any codec reads it alike"),
            (6, _UTF8),
            (9, "the script never asks for a runbook"),
            (12, "the script never asks for a runbook"),
            (32, "investigate never reads the chat history file"),
            (40, "investigate never reads the chat history file"),
            (36, "learning runs only on feedback; the demo takes none"),
            (53, "learning runs only on feedback; the demo takes none"),
            (38, "any file name inside the temporary folder, deleted with it"),
            (39, "any file name inside the temporary folder, deleted with it"),
            (49, "the recorded answers take any non-empty key"),
            (50, "the recorded answers take any non-empty key"),
        )
    },
    # pane_auth: the limit of a query whose first row alone is used; the case title is
    # read only beside a case id (``bot.blocks.pane.prompts``)
    **{f"{_PANE}_target__mutmut_{n}": _NEWEST for n in (40, 41, 71, 72)},
    f"{_PANE}_offer__mutmut_44": "case_title is shown only with a case_id, None here",
    # past_alerts_scope: the registry calls a tool with every argument, defaults filled in
    # from the declaration, which is built from the signature of mutmut's trampoline (the
    # original's 10); the default itself is checked (test_past_alerts: test_defaults_and_edges)
    "tools.past_alerts.x_search_past_alerts__mutmut_1": "the declaration's default is passed",
    # eval_scorer: the recorded calls rebuilt for the code check (only ``result`` is read
    # through ``searchable``; ref, tool and args are not, args' "null" quotes no value)
    **{
        f"evals.established.x_verified_share__mutmut_{n}": "EvidenceItem fields the check"
        " never reads"
        for n in (13, 14, 15, 24)
    },
    **{
        f"evals.established.x_cited__mutmut_{n}": 'a missing finding or evidence read as "XXXX":'
        " no value to establish is XXXX"
        for n in (10, 15)
    },
    _G + "xǁHaystackǁ__init____mutmut_13": _STAMPS,
    _G + "xǁHaystackǁ__init____mutmut_30": _STAMPS,
    _G + "xǁHaystackǁ__init____mutmut_32": _STAMPS,
    _G + "x_quoted_values__mutmut_3": _SET,
    _G + "x_quoted_values__mutmut_20": _SET,
    _G + "x_quoted_values__mutmut_24": _SET,
    _G + "x_quoted_values__mutmut_39": _SET,
    _G + "x_quoted_values__mutmut_46": _SET,
    _G + "x_value_found__mutmut_21": _ONE_COLON,
    _G + "x_value_found__mutmut_22": _ONE_COLON,
    _G + "x_value_found__mutmut_24": _ONE_COLON,
    _G + "xǁHaystackǁhas_number__mutmut_7": "< or <= 1e-9: no two parsed floats differ by 1e-9",
    _G + "xǁHaystackǁhas_number__mutmut_15": (
        "0 or 1 decimals for a value without '.' (>= 1e16): floats there are whole"
    ),
    _P + "match.x__entity_check__mutmut_21": (
        'a missing role read as "" or "xxxx": only a rule asking for role "xxxx" tells'
    ),
    _P + "match.x__window_check__mutmut_6": _UNUSED_BOUNDS,
    _P + "match.x__window_check__mutmut_7": _UNUSED_BOUNDS,
    _P + "match.x_networks__mutmut_2": "strict=None is strict=False (falsy)",
    _P + "decide.xǁRuleSetǁtrials__mutmut_11": (
        "the refusal is also computed after a miss, but the miss is reported first"
    ),
    "bot.web.auth.access.xǁAccessǁmay_see__mutmut_6": (
        'channel_of("XXXX") is None like channel_of(""): not a slack: conversation'
    ),
    _APP + "x__csrf_ok__mutmut_4": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_5": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_17": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_18": _HEADER_CASE,
    _APP + "x__csrf_ok__mutmut_30": 'check_csrf refuses "" and "XXXX" alike (not the MAC)',
    _APP + "x__guarded__mutmut_22": 'quote\'s default safe is "/"',
    _APP + "x__guarded__mutmut_23": 'safe="XX/XX": letters are never quoted anyway',
    _HOOK + "authorized__mutmut_9": _HEADER_CASE,
    _HOOK + "authorized__mutmut_10": _HEADER_CASE,
    _HOOK + "handle__mutmut_19": "aiohttp's response headers are case-insensitive",
    _HOOK + "handle__mutmut_20": "aiohttp's response headers are case-insensitive",
    _HOOK + "authorized__mutmut_11": 'no header read as "XXXX": not bearer, so no token',
    _HOOK + "authorized__mutmut_21": (
        'a non-bearer header compared as "XXXX": only a configured token "XXXX" tells'
    ),
    _HOOK + "dispatch_later__mutmut_3": "the task's name is for debugging only",
    _HOOK + "dispatch_later__mutmut_5": "the task's name is for debugging only",
    _HOOK + "handle__mutmut_52": (
        "reading limit + 2 bytes: a body over the limit is still over it, one under is whole"
    ),
    _BODY + "x_check_slack_request__mutmut_20": _FIRST_PART,
    _BODY + "x_check_slack_request__mutmut_31": _FIRST_PART,
    _BODY + "x_check_slack_request__mutmut_29": 'no Content-Type read as "xxxx": 415 either way',
    _BODY + "x_check_slack_request__mutmut_42": _UTF8,
    _BODY + "x_signature_valid__mutmut_56": _UTF8,
    _BODY + "x_signature_valid__mutmut_9": 'no timestamp read as "XXXX": not digits either',
    _BODY + "x_signature_valid__mutmut_18": 'no signature read as "XXXX": no HMAC either',
    "bot.events.middleware.xǁGatekeeperǁ_members__mutmut_6": (
        "< or <= at the very instant a 300 s monotonic-clock cache expires"
    ),
    "bot.events.middleware.xǁGatekeeperǁmiddleware__mutmut_59": _BOLT_BODY,
    _DEDUPE + "claim_recent__mutmut_3": _SET,
    _DEDUPE + "claim_recent__mutmut_5": "popitem(last=None): None is falsy, the oldest goes",
    _DEDUPE + "middleware__mutmut_23": _BOLT_BODY,
    _VOTE + "on_verdict__mutmut_10": 'no private_metadata read as "XXXX": not JSON either',
    _VOTE + "on_verdict__mutmut_56": _NOT_THERE.format("channel"),
    _VOTE + "on_verdict__mutmut_62": _NOT_THERE.format("thread"),
    "bot.decisions.playbook_review.xǁSlackReviewǁon_edit__mutmut_23": (
        'a click without a value looks up "XXXX": no bullet has that id (socbot makes'
        " pb-<8 hex>), so no proposal either way"
    ),
    "bot.decisions.approvals.xǁSlackApprovalsǁon_decision__mutmut_20": (
        'a click without a value read as "XXXX": not digits either, so no request'
    ),
    "bot.decisions.suppression.xǁSuppressActionsǁon_decision__mutmut_22": (
        'a click without a value read as "XXXX": not digits either, so suppression 0, none'
    ),
    "bot.decisions.suppression.xǁSuppressActionsǁon_decision__mutmut_31": (
        'no action_id read as "XXXX": neither approve nor lift, so a rejection either way'
        " (bolt routes only suppression_(approve|reject|lift) here)"
    ),
    _INT + "x__bare_suffixes__mutmut_4": _LOWER_X,
    _INT + "x_host_reason__mutmut_5": _LOWER_X,
    _INT + "x_is_internal_domain__mutmut_5": _LOWER_X,
    _INT + "x_url_part_reasons__mutmut_6": _SET,
    _INT + "x_url_part_reasons__mutmut_29": _SET,
    _INT + "x__blob_texts__mutmut_29": (
        'b64decode (not strict) stops at the padding: one "=" or three after 4n + 3 digits'
    ),
    _INT + "x_host_reason__mutmut_34": _INTERNAL_NAMED,
    _INT + "x_host_reason__mutmut_35": _INTERNAL_NAMED,
    _IND + "x__host_target__mutmut_3": "_split_url refuses a URL without a host first",
    _IND + "x_validate_domain__mutmut_6": _LOWER_X,
    _IND + "x_validate_domain__mutmut_21": _LOWER_X,
    _IND + "x_validate_domain__mutmut_30": '"IDNA" and "idna" name the same codec',
    _IND + "x_validate_domain__mutmut_32": '"ASCII" and "ascii" name the same codec',
    _IND + "x_validate_domain__mutmut_8": "any text with :// has a / too",
    _ADDR + "x_loopback_wildcard__mutmut_5": _LOWER_X,
    _ADDR + "x_parse_ipv4_loose__mutmut_5": '"" popped or kept: no part, or an empty one, is None',
    _ADDR + "x_parse_ipv4_loose__mutmut_36": '"0" read as octal is 0 too',
    _ADDR + "x_parse_ipv4_loose__mutmut_42": '"XX89XX" holds 8 and 9; a part is digits',
    _ADDR + "x_non_public_reason__mutmut_14": _SIX_TO_FOUR,
    _ADDR + "x_non_public_reason__mutmut_15": _SIX_TO_FOUR,
    "store.queue.work.xǁWorkQueueǁrelease__mutmut_19": _CURSOR,
    "store.queue.work.xǁWorkQueueǁrelease__mutmut_20": _CURSOR,
    CLAIMING + "_claim__mutmut_9": "SQL keywords and function names are case-insensitive",
    CLAIMING + "_candidates__mutmut_30": _FOR_UPDATE_OF,
    CLAIMING + "_candidates__mutmut_32": _FOR_UPDATE_OF,
    CLAIMING + "_now__mutmut_2": (
        "SQLite's DateTime stores the digits without the zone: aware and naive UTC alike"
    ),
    CLAIMING + "_claim__mutmut_40": _NO_SLOT,
    CLAIMING + "_claim__mutmut_43": _NO_SLOT,
    CLAIMING + "_claim__mutmut_60": _NO_SLOT,
    CLAIMING + "_claim__mutmut_62": _NO_SLOT,
    CLAIMING + "_claim__mutmut_64": "waiting is only read for its truth: None is False",
    CLAIMING + "_claim__mutmut_82": (
        "break after the first row waiting for a slot: room stays 0 and background yields,"
        " so no later row could start"
    ),
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_15": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_18": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_21": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_38": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_41": _SAME_LENGTH,
    _PO + "xǁRunPostsǁ_outcome_plan__mutmut_44": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_15": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_18": _SAME_LENGTH,
    _PO + "xǁRunPostsǁoutcome__mutmut_23": _SAME_LENGTH,
    _POOL + "x__pipe__mutmut_2": _NO_PIPE,
    _POOL + "x__pipe__mutmut_3": _NO_PIPE,
    _POOL + "x__pipe__mutmut_4": _NO_PIPE,
    _POOL + "xǁDuckDBPoolǁ__init____mutmut_11": "_closed = None: read only for its truth",
    _POOL + "xǁDuckDBPoolǁ_discard__mutmut_4": (
        "< or <= size: a discarded worker was taken under the loop's semaphore (one loop"
        " at a time), so idle plus taken <= size and idle < size whenever one is discarded"
    ),
    "tools.results.x_truncate__mutmut_43": "ensure_ascii=None is falsy: the same as False",
    _SIGNER + "_mac__mutmut_11": (
        'rstrip("XX=XX"): a 32-byte digest\'s last base64 digit is one of AEIMQUYcgkosw048'
        " (its low four bits are zero), never X"
    ),
    _SIGNER + "sign__mutmut_17": (
        'rstrip("XX=XX"): the JSON ends with "}", whose last base64 digit is 9, Q or 0, never X'
    ),
    _SIGNER + "read__mutmut_23": (
        "+len % 4 pads a 3-mod-4 text with === where -len % 4 pads =: b64decode (not"
        " strict) ignores padding past the data"
    ),
    _SIGNIN + "x_id_token_claims__mutmut_12": (
        "+len % 4 pads a 3-mod-4 text with === where -len % 4 pads =: b64decode (not"
        " strict) ignores padding past the data"
    ),
    _SIGNIN + "x_redirect__mutmut_7": _HEADER_CASE.replace("request", "response"),
    _SIGNIN + "x_redirect__mutmut_8": _HEADER_CASE.replace("request", "response"),
    _SIGNIN + "xǁSignInǁ__init____mutmut_29": _CONFIGURED,
    _SIGNIN + "xǁSignInǁ_claims__mutmut_13": _CONFIGURED,
    _SIGNIN + "xǁSignInǁ_claims__mutmut_17": _CONFIGURED,
    _SIGNIN + "xǁSignInǁ_claims__mutmut_18": _CONFIGURED,
    _SIGNIN + "xǁSignInǁ_claims__mutmut_34": (
        'an ID token "XXXX" (no dots) is as unreadable as "": refused the same'
    ),
    _SIGNIN + "xǁSignInǁcallback__mutmut_83": 'set_cookie\'s path defaults to "/"',
    "tools.mcp.egress.x__texts__mutmut_1": (
        "True, False and None sent as text: one label, no address, name or e-mail in it"
    ),
    "agent.model.privacy.mapper.xǁPseudonymiserǁadd__mutmut_6": _PSEUDO_DEDUPE,
    "agent.model.privacy.mapper.xǁPseudonymiserǁadd__mutmut_7": _PSEUDO_DEDUPE,
    "agent.model.privacy.mapper.xǁPseudonymiserǁadd__mutmut_8": _PSEUDO_DEDUPE,
    "agent.model.privacy.mapper.xǁPseudonymiserǁadd__mutmut_20": _PSEUDO_FAST,
    "agent.model.privacy.mapper.xǁPseudonymiserǁrestore_json__mutmut_5": _PSEUDO_NONE_FALSE,
    "agent.model.privacy.mapper.xǁPseudonymiserǁseed_alert__mutmut_5": _PSEUDO_KIND,
    **{
        f"agent.model.privacy.mapper.xǁPseudonymiserǁpseudonymise__mutmut_{n}": _PSEUDO_FAST
        for n in (2, 3, 6, 14, 16, 32, 34, 38, 70)
    },
    **{
        f"agent.model.privacy.mapper.xǁPseudonymiserǁpseudonymise__mutmut_{n}": _PSEUDO_DONE
        for n in (25, 30)
    },
    _PRIV_MAP + "pseudonymise__mutmut_29": _PSEUDO_BOUND,
    _PRIV_MAP + "pseudonymise__mutmut_69": _PSEUDO_BOUND,
    "agent.model.privacy.scan.x_splice__mutmut_3": _PSEUDO_SLICE,
    **{f"agent.model.privacy.scan.x_trie_regex__mutmut_{n}": _PSEUDO_TRIE for n in (8, 21)},
    **{f"agent.model.privacy.scan.xǁSpellingsǁfind__mutmut_{n}": _PSEUDO_GLUE for n in (18, 32)},
    **{
        f"agent.model.privacy.scan.x_candidates__mutmut_{n}": (
            "a kind word starting inside another follows one of its ASCII letters, which"
            " LOOKALIKE's look-behind refuses: overlapping matches add no look-alike"
        )
        for n in (22, 24)
    },
    "agent.model.privacy.scan.x_candidates__mutmut_15": _CODEC,
    **{f"agent.model.privacy.scan.x_non_ascii__mutmut_{n}": _CODEC for n in (12, 24)},
    "agent.model.privacy.scan.x_non_ascii__mutmut_3": (
        'only the kept answer: no text is its own answer\'s object but "" (answered "")'
    ),
    **{
        f"agent.model.privacy.scan.x__extra_cases__mutmut_{n}": (
            "Python's table holds neither code point 127 nor 128"
        )
        for n in (2, 3)
    },
    **{f"agent.model.privacy.scan.x_variants__mutmut_{n}": _TO_PATTERN for n in (7, 10)},
    **{
        f"agent.model.privacy.scan.xǁSpellingsǁ__init____mutmut_{n}": _TO_PATTERN
        for n in (3, 4, 5, 7, 8)
    },
    _PRIV_MAP + "_known__mutmut_10": _TO_PATTERN,
    **{_PRIV_MAP + f"_replace__mutmut_{n}": _PSEUDO_OVERLAP for n in (11, 12)},
    _PRIV_MAP + "_replace__mutmut_28": "spans do not overlap: in order of their ends as of starts",
    _PRIV_MAP + "pseudonymise__mutmut_53": (
        "a run already known had its decoded text read when it was first met (its values"
        " were added with it): reading it again adds nothing"
    ),
    "agent.model.privacy.tokens.x_lookalikes__mutmut_2": "ASCII text is its own skeleton",
    **{
        f"agent.model.privacy.scan.xǁTokensǁrestore__mutmut_{n}": _PSEUDO_STRICT
        for n in (34, 38, 39)
    },
    "agent.model.privacy.scan.xǁTokensǁrestore__mutmut_2": (
        "ASCII text encoded or encoded with ? for what is not ASCII: the same bytes"
    ),
    "agent.model.privacy.scan.xǁTokensǁrestore__mutmut_9": _CODEC,
    _PRIV_MAP + "_token_of__mutmut_16": _PSEUDO_ALIAS,
    _PRIV_MAP + "_token_of__mutmut_18": _PSEUDO_ALIAS,
    _PRIV_MAP + "pseudonymise__mutmut_60": (
        "a run whose lowered spelling is known never reaches add: its key is never read"
    ),
    "agent.model.privacy.mapper.x__spellings__mutmut_9": _PSEUDO_NONE_FALSE,
    _PRIV_B64 + "x__decoded__mutmut_13": _B64_ALPHABET,
    _PRIV_B64 + "x__decoded__mutmut_14": _B64_ALPHABET,
    _PRIV_B64 + "x__text__mutmut_2": _UTF8,
    _PRIV_B64 + "x__text__mutmut_4": "codec names are case-insensitive",
    _PRIV_B64 + "x__text__mutmut_12": '"X" is printable: allowing it changes nothing',
    _PRIV_B64 + "x_runs__mutmut_8": "codec names are case-insensitive",
    _PRIV_B64 + "x_runs__mutmut_11": "bytes.find(x, None) starts at 0",
    _PRIV_B64 + "x_runs__mutmut_30": _FIND_AFTER,
    _PRIV_B64 + "x_runs__mutmut_31": _FIND_AFTER,
    **{
        f"alerts.policy.auto_resolve.x_record__mutmut_{n}": "AutoResolve's fields are str, "
        "list of str and float or None: model_dump's python and json modes give the same dict"
        for n in (3, 4, 5)
    },
    "alerts.policy.auto_resolve.x_refusal__mutmut_8": "no confidence read as 'XXXX' or '': "
    "neither is a rank, both refused alike",
    "alerts.policy.auto_resolve.x_refusal__mutmut_17": "no severity read as 'XXXX' or '': "
    "neither is critical",
    "core.quality.x_drawn__mutmut_7": "random() < share and <= share differ only when random() "
    "returns exactly share (probability 2**-53 per draw)",
    "store.cases.auto.x_asked_of__mutmut_5": "first() reads one row whatever the LIMIT",
    "store.cases.auto.x_asked_of__mutmut_17": "first() reads one row whatever the LIMIT",
    "store.cases.auto.x_asked_of__mutmut_2": _NO_HIT_RULE,
    "store.cases.auto.x_asked_of__mutmut_24": _NO_HIT_RULE,
    "store.cases.auto.xǁAutoResolutionǁ__call____mutmut_89": _NO_THREAD,
    "store.cases.auto.xǁAutoResolutionǁ__call____mutmut_94": _NO_THREAD,
    "store.cases.audits.x_awaiting__mutmut_5": _ROWID_ORDER,
    "store.cases.audits.x_awaiting__mutmut_7": _ROWID_ORDER,
    _AUDITS + "on_review_button__mutmut_12": 'row_id("") and row_id("XXXX") are both None',
    _AUDITS + "_reviewable__mutmut_15": _ASSIGNEE,
    _AUDITS + "_reviewable__mutmut_24": _ASSIGNEE,
    # cases_page: a bucket read past limit + 1 only reads more rows (by severity and by age
    # both cut the page at size and put the cursor on its last row)
    _CASES_READ + "18": "no limit: more rows read, the same page cut from them",
    _CASES_READ + "22": "limit + 2: one more row read, the same page cut from them",
    # home_auth: the week's figures' last digits and boundary; a base that is no URL
    "store.cases.home.x__week__mutmut_21": "count() counts any non-NULL value: 1 or 2 alike",
    "store.cases.home.x__week__mutmut_29": "a case opened to the microsecond a week ago",
    "store.cases.home.x__week__mutmut_48": "the cost is shown to the cent: 6 or 7 digits",
    "bot.events.home.xǁAppHomeǁview__mutmut_58": "page_url links no base but http(s): none",
    # web_names
    "bot.web.pages.names.xǁNamesǁ_failed__mutmut_47": "no Retry-After: 0 or 1 s, "
    "max() with FAILED_S (120 s) gives FAILED_S either way",
    "bot.web.pages.names.xǁNamesǁ_shown__mutmut_21": "cleaned()'s default size NAME_CHARS "
    "equals OTHER_CHARS (64)",
    "bot.web.pages.names.xǁNamesǁ_start__mutmut_30": "pop(id) without a default: the done "
    "callback runs once per task and the id is pending until then (nothing else removes it)",
    # privacy_detect: what the recognisers and the marked columns find
    **{_DETECT + f"x__emails__mutmut_{n}": _PAIRED for n in (19, 22, 23)},
    _DETECT + "x__emails__mutmut_30": "a dict used as an ordered set: its values are never read",
    _DETECT + "x__encoded_at__mutmut_1": (
        "either reader finds what _window_emails finds (test_scan): one is faster"
    ),
    _DETECT + "x__encoded_emails__mutmut_26": "[\\w.+-]* always matches (maybe empty)",
    _DETECT + "x__encoded_emails__mutmut_31": 'text[at] is "@" or "%", never "."',
    _DETECT + "x__phones__mutmut_13": _JOINERS,
    _DETECT + "xǁDetectorǁ_ips__mutmut_11": _JOINERS,
    _DETECT + "xǁDetectorǁ_ips__mutmut_25": _JOINERS,
    _DETECT + "x__us_ends__mutmut_39": _JOINERS,
    **{_DETECT + f"x__us_ends__mutmut_{n}": _SAME_ENDS for n in (1, 3, 10)},
    _DETECT + "x__us_ends__mutmut_51": 'the shape\'s next two bytes are "0": no "-0000" there',
    **{
        _DETECT + f"x__us_numbers__mutmut_{n}": (
            "a match found from another start ends at one of the ends, whose own window holds"
            " that start: the same matches in the same order (hypothesis compares finditer)"
        )
        for n in (13, 14)
    },
    **{
        _DETECT + f"xǁDetectorǁ__init____mutmut_{n}": "the host pattern is IGNORECASE"
        for n in (23, 24)
    },
    _DETECT + "xǁDetectorǁscan__mutmut_10": (
        'a spelling holds "%" only in "%40" (local part and domain hold none)'
    ),
    **{
        _DETECT + f"xǁDetectorǁscan__mutmut_{n}": (
            "a DOMAIN\\user's user starts with a letter: never all digits, the one test"
            " only USER has"
        )
        for n in (37, 41, 42)
    },
    **{_COLUMNS + f"x__table__mutmut_{n}": _RECTANGLE for n in (38, 41, 42, 48, 50, 51)},
    _COLUMNS + "x__table__mutmut_63": "no wanted column: no cell of any row is read",
    _COLUMNS + "x_json_in__mutmut_11": 'find("{") and rfind("}") are never the same index',
    _COLUMNS + "x_json_in__mutmut_8": (
        'without a "{" the slice from -1 is "" or "}", and with "}" before "{" it is "":'
        " not JSON either way"
    ),
    _COLUMNS + "x_marked_values__mutmut_10": '"" is no container: every one is walked, as None',
}
