"""The functions a guarded query may call: an allowlist of BigQuery built-ins.

A query may call only the built-in scalar, aggregate and window functions listed here, by
the name it is written with (``STRPOS``, ``SAFE.SUBSTR``, ``NET.HOST``). Everything else
fails closed: user-defined and persistent functions (``project.dataset.fn(...)``,
back-quoted names), remote and ML/AI functions, system and session functions
(``SESSION_USER``, ``CURRENT_USER``), and every name nobody put on this list. The DuckDB
backend runs the same allowlisted query after transpiling; names sqlglot does not know pass
through to DuckDB verbatim, so ``tests/tools/test_hostile_sql.py`` checks each of them is a plain
scalar or aggregate function there too.
"""

from __future__ import annotations

from sqlglot import exp

_AGGREGATE = """
ANY_VALUE ARRAY_AGG ARRAY_CONCAT_AGG AVG BIT_AND BIT_OR BIT_XOR COUNT COUNTIF GROUPING
LOGICAL_AND LOGICAL_OR MAX MAX_BY MIN MIN_BY STRING_AGG SUM
APPROX_COUNT_DISTINCT APPROX_QUANTILES APPROX_TOP_COUNT APPROX_TOP_SUM
CORR COVAR_POP COVAR_SAMP STDDEV STDDEV_POP STDDEV_SAMP VAR_POP VAR_SAMP VARIANCE
"""
_WINDOW = """
FIRST_VALUE LAST_VALUE NTH_VALUE LEAD LAG PERCENTILE_CONT PERCENTILE_DISC
RANK DENSE_RANK PERCENT_RANK CUME_DIST NTILE ROW_NUMBER
"""
_ARRAY = """
ARRAY ARRAY_CONCAT ARRAY_FIRST ARRAY_LAST ARRAY_LENGTH ARRAY_REVERSE ARRAY_SLICE
ARRAY_TO_STRING GENERATE_ARRAY GENERATE_DATE_ARRAY GENERATE_TIMESTAMP_ARRAY
"""
_TIME = """
CURRENT_DATE DATE DATE_ADD DATE_SUB DATE_DIFF DATE_TRUNC DATE_FROM_UNIX_DATE FORMAT_DATE
LAST_DAY PARSE_DATE UNIX_DATE DATE_BUCKET
CURRENT_DATETIME DATETIME DATETIME_ADD DATETIME_SUB DATETIME_DIFF DATETIME_TRUNC
FORMAT_DATETIME PARSE_DATETIME DATETIME_BUCKET
CURRENT_TIME TIME TIME_ADD TIME_SUB TIME_DIFF TIME_TRUNC FORMAT_TIME PARSE_TIME
CURRENT_TIMESTAMP TIMESTAMP TIMESTAMP_ADD TIMESTAMP_SUB TIMESTAMP_DIFF TIMESTAMP_TRUNC
FORMAT_TIMESTAMP PARSE_TIMESTAMP TIMESTAMP_SECONDS TIMESTAMP_MILLIS TIMESTAMP_MICROS
UNIX_SECONDS UNIX_MILLIS UNIX_MICROS TIMESTAMP_BUCKET EXTRACT
MAKE_INTERVAL JUSTIFY_DAYS JUSTIFY_HOURS JUSTIFY_INTERVAL
"""
_STRING = """
ASCII BYTE_LENGTH CHAR_LENGTH CHARACTER_LENGTH CHR CODE_POINTS_TO_BYTES
CODE_POINTS_TO_STRING CONCAT CONTAINS_SUBSTR EDIT_DISTANCE ENDS_WITH FORMAT FROM_BASE32
FROM_BASE64 FROM_HEX INITCAP INSTR LEFT LENGTH LOWER LPAD LTRIM NORMALIZE
NORMALIZE_AND_CASEFOLD OCTET_LENGTH REGEXP_CONTAINS REGEXP_EXTRACT REGEXP_EXTRACT_ALL
REGEXP_INSTR REGEXP_REPLACE REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT RPAD RTRIM
SAFE_CONVERT_BYTES_TO_STRING SOUNDEX SPLIT STARTS_WITH STRPOS SUBSTR SUBSTRING TO_BASE32
TO_BASE64 TO_CODE_POINTS TO_HEX TRANSLATE TRIM UNICODE UPPER STRING
FARM_FINGERPRINT MD5 SHA1 SHA256 SHA512
"""
_JSON = """
JSON_EXTRACT JSON_EXTRACT_SCALAR JSON_EXTRACT_ARRAY JSON_EXTRACT_STRING_ARRAY JSON_QUERY
JSON_VALUE JSON_QUERY_ARRAY JSON_VALUE_ARRAY JSON_KEYS JSON_TYPE PARSE_JSON TO_JSON
TO_JSON_STRING JSON_ARRAY JSON_OBJECT BOOL INT64 FLOAT64 LAX_BOOL LAX_INT64 LAX_FLOAT64
LAX_STRING
"""
_MATH_AND_CONDITIONAL = """
ABS SIGN IS_INF IS_NAN IEEE_DIVIDE RAND SQRT CBRT POW POWER EXP LN LOG LOG10 GREATEST LEAST
DIV MOD ROUND TRUNC CEIL CEILING FLOOR SAFE_DIVIDE SAFE_MULTIPLY SAFE_NEGATE SAFE_ADD
SAFE_SUBTRACT RANGE_BUCKET COS COSH ACOS ACOSH SIN SINH ASIN ASINH TAN TANH ATAN ATANH ATAN2
COT COTH CSC CSCH SEC SECH BIT_COUNT PARSE_NUMERIC PARSE_BIGNUMERIC
COALESCE IF IFNULL NULLIF NULLIFZERO ZEROIFNULL GENERATE_UUID
OFFSET ORDINAL SAFE_OFFSET SAFE_ORDINAL STRUCT
"""
_NET = """
NET.IP_FROM_STRING NET.SAFE_IP_FROM_STRING NET.IP_TO_STRING NET.IP_NET_MASK NET.IP_TRUNC
NET.IPV4_FROM_INT64 NET.IPV4_TO_INT64 NET.HOST NET.PUBLIC_SUFFIX NET.REG_DOMAIN
"""

BIGQUERY_FUNCTIONS = frozenset(
    " ".join((_AGGREGATE, _WINDOW, _ARRAY, _TIME, _STRING, _JSON, _MATH_AND_CONDITIONAL, _NET))
    .upper()
    .split()
)

# Nodes sqlglot builds from syntax rather than from a function name as written: casts,
# CASE/IF, literals such as DATE '...' and [1, 2], the NO_PAREN current-time functions,
# and the helper nodes its builders wrap around an allowlisted function's arguments.
_SYNTAX_NODES: tuple[type[exp.Expr], ...] = (
    exp.Cast,
    exp.TryCast,
    exp.Extract,
    exp.Case,
    exp.If,
    exp.Array,
    exp.Struct,
    exp.Unnest,
    exp.Exists,
    exp.Coalesce,
    exp.CurrentDate,
    exp.CurrentDatetime,
    exp.CurrentTime,
    exp.CurrentTimestamp,
    exp.SafeFunc,
    exp.NetFunc,
    exp.GroupConcat,
    exp.Ceil,
    exp.Floor,
    exp.Initcap,
    exp.Substring,
    exp.Translate,
    exp.Normalize,
    exp.MakeInterval,
    exp.JSONObject,
    exp.JSONArray,
    exp.ArgMax,
    exp.ArgMin,
    exp.TsOrDsToTimestamp,
    exp.TsOrDsToDate,
    exp.TsOrDsToDatetime,
    exp.TsOrDsToTime,
    exp.Chr,
    exp.Lower,
)
# Operators are Func subclasses in sqlglot (AND, OR, ||, comparison); they are syntax.
_OPERATORS: tuple[type[exp.Expr], ...] = (exp.Connector, exp.Binary, exp.Unary, exp.Predicate)

REFUSAL_HINT = (
    "only built-in BigQuery scalar, aggregate and window functions are allowed (string, "
    "date/time, math, JSON, array, NET.*, SAFE.*); no user-defined, persistent, remote, "
    "ML/AI, table-valued or system functions"
)


def function_problem(node: exp.Func) -> str | None:
    """Why this function call is not allowed, or None when it is."""
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        called = node.meta.get("bigquery_name") or node.name or node.sql_name()
        qualified = f"{parent.this.sql(dialect='bigquery')}.{called}"[:120]
        return (
            f"function {qualified} is not allowed (a namespaced, user-defined or persistent "
            f"function): {REFUSAL_HINT}"
        )
    written = node.meta.get("bigquery_name")
    if isinstance(node, exp.Anonymous):
        if isinstance(node.this, exp.Identifier) and node.this.quoted:
            return f"back-quoted function name `{node.name}` is not allowed: {REFUSAL_HINT}"
        written = node.name
    if written is None:
        if isinstance(node, _OPERATORS) or type(node) in _SYNTAX_NODES:
            return None
        return f"{node.sql_name()} is not allowed: {REFUSAL_HINT}"
    name = str(written).upper()
    if isinstance(parent, exp.NetFunc):
        name = f"NET.{name}"
    if name not in BIGQUERY_FUNCTIONS:
        return f"function {name} is not allowed: {REFUSAL_HINT}"
    return None
