"""Connection strings by their grammar, and which of their values are secrets.

The grammar is ODBC's ([MS-ODBCSTR] 2.1.2, "ODBCConnectionString"): `key=value` pairs separated
by `;`; a value in braces may hold `;` and `=`, with `}}` for a literal `}`; a value that starts
with `{` must be braced; keys are matched without regard to case. The Db2 CLI takes the same
syntax in SQLDriverConnect (IBM, "CLI/ODBC configuration keywords"), so one parser serves both
engines.

A value is a secret unless its key is on `HARMLESS_KEYS`, an allow-list built from the two
vendors' keyword references: a key nobody has vouched for (KeyStoreSecret, TrustStorePassword,
SSLClientKeystoreDBPassword, a driver's next new one) is masked wherever it could be shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MASK = "***"

# Keys whose values are not secrets. Lower case; compared after stripping spaces.
HARMLESS_KEYS: frozenset[str] = frozenset(
    # Microsoft ODBC Driver for SQL Server, "DSN and Connection String Keywords and Attributes"
    # (learn.microsoft.com/sql/connect/odbc/dsn-connection-string-attribute). Left off: PWD,
    # KeystoreSecret (a key vault client secret) and ClientKey ("file:path,password").
    {
        "addr",
        "address",
        "ansinpw",
        "app",
        "applicationintent",
        "attachdbfilename",
        "authentication",
        "autotranslate",
        "clientcertificate",
        "columnencryption",
        "connectretrycount",
        "connectretryinterval",
        "database",
        "description",
        "driver",
        "dsn",
        "encrypt",
        "failover_partner",
        "failoverpartnerspn",
        "filedsn",
        "getdataextensions",
        "hostnameincertificate",
        "ipaddresspreference",
        "keepalive",
        "keepaliveinterval",
        "keystoreauthentication",
        "keystoreprincipalid",
        "language",
        "longasmax",
        "mars_connection",
        "multisubnetfailover",
        "net",
        "network",
        "querylog_on",
        "querylogfile",
        "querylogtime",
        "quotedid",
        "regional",
        "replication",
        "retryexec",
        "savefile",
        "server",
        "servercertificate",
        "serverspn",
        "statslog_on",
        "statslogfile",
        "transparentnetworkipresolution",
        "trusted_connection",
        "trustservercertificate",
        "uid",
        "usefmtonly",
        "wsid",
    }
    # FreeTDS ODBC driver, "ODBC connection attributes" (freetds.org/userguide/odbcconnattr.htm)
    | {
        "servername",
        "port",
        "tds_version",
        "clientcharset",
        "textsize",
        "packetsize",
        "encryption",
        "usentlmv2",
        "realm",
        "timeout",
        "connectiontimeout",
    }
    # IBM Db2, "CLI/ODBC configuration keywords" (ibm.com/docs/en/db2, topic "CLI/ODBC
    # configuration keywords listing by category"): the connection, schema, client-information,
    # timeout and SSL-location keywords. Left off: PWD, SSLClientKeystoreDBPassword,
    # SSLClientKeystash (the stash file unlocks the key database), TrustedContextSystemPassword,
    # and every other keyword (masked until someone vouches for it).
    | {
        "althostname",
        "altport",
        "autocommit",
        "clientacctstr",
        "clientapplname",
        "clientuserid",
        "clientwrkstnname",
        "connecttimeout",
        "connecttype",
        "currentfunctionpath",
        "currentpackagepath",
        "currentpackageset",
        "currentrefreshage",
        "currentschema",
        "currentsqlid",
        "cursorhold",
        "dbalias",
        "dbname",
        "deferredprepare",
        "hostname",
        "instance",
        "krbplugin",
        "locktimeout",
        "programname",
        "protocol",
        "querytimeoutinterval",
        "receivetimeout",
        "schemalist",
        "security",
        "servicename",
        "sslclienthostnamevalidation",
        "sslclientkeystoredb",
        "sslclientlabel",
        "sslservercertificate",
        "tabletype",
        "targetprincipal",
        "txnisolation",
    }
)

# Keys that name an account: not secrets (they are on the allow-list), but a driver's "login
# failed for user X" tells who to try, so their values are masked in messages all the same.
ACCOUNT_KEYS: frozenset[str] = frozenset(
    {"uid", "user", "user id", "userid", "username", "keystoreprincipalid"}
)

# The keys the password-from-environment option would duplicate.
PASSWORD_KEYS: frozenset[str] = frozenset({"pwd", "password"})


def is_secret_key(key: str) -> bool:
    return normal_key(key) not in HARMLESS_KEYS


def normal_key(key: str) -> str:
    return key.strip().lower()


@dataclass(frozen=True)
class Attribute:
    key: str  # as written, without surrounding spaces
    value: str  # braces removed, `}}` read as `}`, surrounding spaces removed
    raw: str  # the value as written (with its braces, if any)
    key_at: int  # where the key starts in the string


class ConnectionStringError(ValueError):
    """A malformed connection string. The message names the problem and the character, never a
    value: the string is a secret's envelope."""

    def __init__(self, problem: str, position: int, kind: str) -> None:
        super().__init__(f"{problem} (at character {position + 1})")
        self.problem = problem
        self.position = position
        self.kind = kind


_SHOWABLE_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_ .-]{0,63}$")


def _named(key: str) -> str:
    """A key as a message may name it: only one that looks like a keyword (not a value typed where
    a key belongs)."""
    key = key.strip()
    return f"the value of {key}" if _SHOWABLE_KEY.match(key) else "a value"


def _key_label(key: str) -> str:
    key = key.strip()
    return key if _SHOWABLE_KEY.match(key) else "a key"


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def parse(text: str, *, strict: bool = True) -> list[Attribute]:
    """The attributes of `text`, in order. Raises ConnectionStringError for: a control character
    (a line break, NUL…), a pair without '=', an empty key, a brace that is never closed, text
    after a closing brace, and a key given twice. `strict=False` lets the last two pass, as
    drivers do (the text after a brace is skipped, a repeated key listed again): the connectors
    read strings stored before targets were checked."""
    if (bad := _CONTROL.search(text)) is not None:
        raise ConnectionStringError("a control character (line break, NUL, …)", bad.start(), "control")
    out: list[Attribute] = []
    seen: dict[str, int] = {}
    i, n = 0, len(text)
    while i < n:
        semi = text.find(";", i)
        pair_end = n if semi < 0 else semi
        if not text[i:pair_end].strip():  # an empty pair: ";;" or trailing spaces
            i = pair_end + 1
            continue
        eq = text.find("=", i)
        if eq < 0 or eq > pair_end:
            raise ConnectionStringError("an attribute has no '='", i + _lead(text, i), "no_equals")
        key = text[i:eq].strip()
        key_at = i + _lead(text, i)
        if not key:
            raise ConnectionStringError("an attribute has no name before '='", key_at, "empty_key")
        j = eq + 1
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == "{":
            k, buf = j + 1, []
            while True:
                if k >= n:
                    raise ConnectionStringError(
                        f"{_named(key)} opens a brace that is never closed", j, "unclosed_brace"
                    )
                if text[k] == "}":
                    if text.startswith("}}", k):
                        buf.append("}")
                        k += 2
                        continue
                    break
                buf.append(text[k])
                k += 1
            value, raw = "".join(buf), text[j : k + 1]
            after = k + 1
            while after < n and text[after] in " \t":
                after += 1
            if after < n and text[after] != ";" and not strict:
                semi_after = text.find(";", after)
                after = n if semi_after < 0 else semi_after
            elif after < n and text[after] != ";":
                raise ConnectionStringError(
                    f"text after the closing brace of {_named(key).removeprefix('the value of ')}",
                    after,
                    "after_brace",
                )
            next_i = after + 1
        else:
            raw = text[j:pair_end]
            value = raw.strip()
            next_i = pair_end + 1
        norm = normal_key(key)
        if norm in seen and strict:
            raise ConnectionStringError(f"{_key_label(key)} is given twice", key_at, "duplicate_key")
        seen[norm] = key_at
        out.append(Attribute(key=key, value=value, raw=raw.strip(), key_at=key_at))
        i = next_i
    return out


def _lead(text: str, i: int) -> int:
    """Spaces before position i's first visible character."""
    k = i
    while k < len(text) and text[k] in " \t":
        k += 1
    return k - i


def quote(value: str) -> str:
    """A value as the grammar carries it: plain when it can be (the Db2 CLI reads plain values
    best), else braced with `}` doubled: when it holds `;`, starts with `{`, is empty, or has
    spaces at either end (a plain value loses them)."""
    if value and ";" not in value and not value.startswith("{") and value == value.strip():
        return value
    return "{" + value.replace("}", "}}") + "}"


def append(text: str, key: str, value: str) -> str:
    """`text` with `key=value` added at the end, the value quoted as needed."""
    base = text.rstrip().rstrip(";")
    return f"{base};{key}={quote(value)}" if base else f"{key}={quote(value)}"


# ---------------------------------------------------------------------------------------------
# What must never be shown: the values to mask in a message about this string.


def _lenient_pairs(text: str) -> list[tuple[str | None, str]]:
    """Best-effort (key, value as written) pairs of a string that may be malformed: braces honoured
    where they close, an unclosed brace running to the end (key None: the whole tail is a value),
    and, separately, every `;`-separated piece as if no brace existed, so that a secret swallowed
    by a stray brace is still found."""
    pairs: list[tuple[str | None, str]] = []
    i, n = 0, len(text)
    while i < n:
        eq = text.find("=", i)
        semi = text.find(";", i)
        if eq < 0 or (0 <= semi < eq):
            piece_end = n if semi < 0 else semi
            piece = text[i:piece_end].strip()
            if piece:
                pairs.append((None, piece))  # no '=': it may be a value typed on its own
            i = piece_end + 1
            continue
        key = text[i:eq].strip()
        j = eq + 1
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == "{":
            k = j + 1
            while k < n:
                if text[k] == "}":
                    if text.startswith("}}", k):
                        k += 2
                        continue
                    break
                k += 1
            if k >= n:  # never closed: everything after the brace is one value, whatever its key
                pairs.append((None, text[j + 1 :]))
                break
            pairs.append((key, text[j + 1 : k]))
            semi = text.find(";", k)
            i = n if semi < 0 else semi + 1
        else:
            end = n if semi < 0 else semi
            pairs.append((key, text[j:end]))
            i = end + 1
    for piece in text.split(";"):
        key, sep, value = piece.partition("=")
        if sep:
            pairs.append((key.strip().lstrip("{").strip(), value))
        elif piece.strip():
            pairs.append((None, piece))
    return pairs


def secret_values(text: str, *, accounts: bool = True) -> list[str]:
    """Every value of `text` that must not be shown: the value of each key not on the allow-list
    (as written and decoded) and (`accounts`) each account name. A malformed string is read
    leniently (`_lenient_pairs`), so that nothing is missed. Longest first, so that a longer
    secret is masked before a part of it."""
    masked = ACCOUNT_KEYS if accounts else frozenset()
    found: set[str] = set()
    try:
        attributes = parse(text)
    except ConnectionStringError:
        for key, value in _lenient_pairs(text):
            if key is None or is_secret_key(key) or normal_key(key) in masked:
                found.update(_forms(value))
    else:
        for a in attributes:
            if is_secret_key(a.key) or normal_key(a.key) in masked:
                found.update(_forms(a.raw))
                found.update(_forms(a.value))
    return sorted((v for v in found if v), key=len, reverse=True)


def display(text: str) -> str:
    """`text` as it may be shown: every secret value and account name masked, the rest (driver,
    server, port, database, options) kept."""
    return redact_text(mask(text, secret_values(text)))


def _forms(value: str) -> set[str]:
    """A value as a driver may repeat it: as written, without its braces, with `}}` read as `}`."""
    v = value.strip()
    inner = v[1:-1] if v.startswith("{") and v.endswith("}") and len(v) > 1 else v.lstrip("{")
    return {v, inner.strip(), inner.replace("}}", "}").strip()}


def mask(message: str, values: Iterable[str]) -> str:
    """`message` with each of `values` replaced by the mask. A value shorter than four characters
    is masked only where it stands alone (not inside a longer word), so that a one-letter password
    does not turn every message to asterisks."""
    for value in sorted({v for v in values if v}, key=len, reverse=True):
        pattern = re.escape(value)
        if len(value) < 4:
            pattern = rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])"
        message = re.sub(pattern, MASK, message, flags=re.IGNORECASE)
    return message


def scrub(message: str, connection_string: str) -> str:
    """A driver's message about `connection_string` with that string masked: where the message
    repeats it whole, it is shown as `display` shows it; every secret value of it, wherever it
    stands, is masked (by value, not by pattern); and any credential the message spells out itself
    is masked by pattern (`redact_text`)."""
    whole = connection_string.strip()
    if whole and whole in message:
        message = message.replace(whole, display(whole))
    return redact_text(mask(message, secret_values(connection_string)))


# ---------------------------------------------------------------------------------------------
# Redaction by pattern: for text where the connection string is not known (a log line, a
# traceback). A key that looks like it carries a credential, followed by '=', has its value masked.

_CREDENTIAL_KEY = re.compile(
    r"(?i)(?<![A-Za-z0-9_])("
    r"[A-Za-z0-9_]*(?:pwd|passw(?:or)?d|secret|token|apikey|api key|keystash|credential|clientkey)[A-Za-z0-9_]*"
    r"|uid|user|user id|userid|username|access token"
    r")\s*=[ \t]*"
)


def _value_end(text: str, start: int) -> int:
    """Where the value starting at `start` ends: `{...}` with `}}` for a literal brace, a quoted
    value with doubled quotes, else up to `;` or the end of the line. An unterminated brace or
    quote runs to the end of the text: masking too much is safe."""
    n = len(text)
    if start < n and text[start] in "{\"'":
        close = "}" if text[start] == "{" else text[start]
        k = start + 1
        while k < n:
            if text[k] == close:
                if text.startswith(close * 2, k):
                    k += 2
                    continue
                return k + 1
            k += 1
        return n
    ends = [e for e in (text.find(";", start), text.find("\n", start)) if e >= 0]
    return min(ends) if ends else n


def redact_text(text: str) -> str:
    """`text` with the value of every credential-like attribute (PWD=, Password={..}, UID=,
    KeyStoreSecret=, TrustStorePassword=, SSLClientKeystoreDBPassword=, …) masked wherever it
    stands: the pattern half of redaction, for text whose connection string is not known."""
    out: list[str] = []
    pos = 0
    for m in _CREDENTIAL_KEY.finditer(text):
        if m.start() < pos:  # inside a value already masked
            continue
        end = _value_end(text, m.end())
        out.append(text[pos : m.end()])
        out.append(MASK)
        pos = end
    out.append(text[pos:])
    return "".join(out)
