"""Connection strings whose secrets must never be shown, and malformed strings a target must refuse.

Each secret value is unique and greppable, so a test can look for it in any output: a page, an
API response, a log, the CLI, every column of the store.
"""

from __future__ import annotations

# The issue's repro (#33): an unclosed brace swallows the rest, and the driver manager repeats it.
ISSUE_REPRO = "DRIVER={FreeTDS;SERVER=127.0.0.1;PORT=1;KeyStoreSecret=KSLeak11;TrustStorePassword=TSLeak12;UID=sa;PWD=pw13"
ISSUE_REPRO_SECRETS = ("KSLeak11", "TSLeak12", "pw13")

# (key, value): keys that carry secrets under several vendors' names, and keys nobody listed
# (a secret by structure: any key not on the allow-list), with values that need the grammar
# (braces, ';', '=', '}}').
SECRET_ATTRIBUTES: list[tuple[str, str]] = [
    ("PWD", "PwdLeak21"),
    ("Password", "PasswordLeak22"),
    ("KeyStoreSecret", "KsSecretLeak23"),
    ("TrustStorePassword", "TsPassLeak24"),
    ("SSLClientKeystoreDBPassword", "Db2KdbLeak25"),
    ("SSLClientKeystash", "/secure/StashLeak26.sth"),
    ("ClientKey", "file:/keys/c.pem,ClientKeyLeak27"),
    ("TrustedContextSystemPassword", "TcPassLeak28"),
    ("AccessToken", "TokenLeak29"),
    ("ApiKey", "ApiKeyLeak30"),
    ("VendorExtraOption", "UnlistedLeak31"),  # no credential-like name: a secret by structure
    ("Keystore Pass", "SpacedKeyLeak32"),
    ("PWD2", "{BracedLeak33;with=semi}}colon}"),
]


def secret_value_of(raw: str) -> str:
    """The value a driver receives for `raw` as written (braces removed, `}}` read as `}`)."""
    if raw.startswith("{") and raw.endswith("}"):
        return raw[1:-1].replace("}}", "}")
    return raw


# the greppable part of each secret (what must appear nowhere)
SECRET_MARKERS = [
    "PwdLeak21",
    "PasswordLeak22",
    "KsSecretLeak23",
    "TsPassLeak24",
    "Db2KdbLeak25",
    "StashLeak26",
    "ClientKeyLeak27",
    "TcPassLeak28",
    "TokenLeak29",
    "ApiKeyLeak30",
    "UnlistedLeak31",
    "SpacedKeyLeak32",
    "BracedLeak33",
]


def corpus_connection(engine: str, port: int) -> str:
    """One well-formed string per engine carrying every secret attribute (each key once), aimed
    at a closed loopback port so that the driver fails and reports."""
    if engine == "sqlserver":
        head = f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={port};DATABASE=master;UID=tw_probe;TDS_Version=7.4"
    else:
        head = f"DATABASE=SAMPLE;HOSTNAME=127.0.0.1;PORT={port};PROTOCOL=TCPIP;UID=db2probe"
    return head + "".join(f";{k}={v}" for k, v in SECRET_ATTRIBUTES)


# (string, kind, 0-based position, values that must not appear in the message)
MALFORMED: list[tuple[str, str, int, tuple[str, ...]]] = [
    (ISSUE_REPRO, "unclosed_brace", 7, ISSUE_REPRO_SECRETS),
    ("SERVER=db1;PWD={MalLeak41;UID=u", "unclosed_brace", 15, ("MalLeak41",)),
    ("SERVER=db1;=MalLeak42;UID=u", "empty_key", 11, ("MalLeak42",)),
    ("SERVER=db1; =MalLeak43", "empty_key", 12, ("MalLeak43",)),
    ("SERVER=db1;Server=db2;PWD=MalLeak44", "duplicate_key", 11, ("MalLeak44",)),
    ("SERVER=db1;pwd=MalLeak45;PWD=MalLeak45b", "duplicate_key", 25, ("MalLeak45",)),
    ("SERVER=db1;MalLeak46;UID=u", "no_equals", 11, ("MalLeak46",)),
    ("PWD={MalLeak47}tail;SERVER=db1", "after_brace", 15, ("MalLeak47", "tail")),
    ("SERVER=db1;PWD=MalLeak48\r\nUID=u", "control", 24, ("MalLeak48",)),
    ("SERVER=db1;PWD=MalLeak49\x00", "control", 24, ("MalLeak49",)),
]
