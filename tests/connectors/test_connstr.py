"""The connection-string grammar ([MS-ODBCSTR]), the allow-list, and masking by value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors import connstr
from connectors.connstr import ConnectionStringError, parse
from tests.secret_corpus import (
    ISSUE_REPRO,
    ISSUE_REPRO_SECRETS,
    MALFORMED,
    SECRET_ATTRIBUTES,
    SECRET_MARKERS,
    corpus_connection,
    secret_value_of,
)


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.key, a.value) for a in parse(text)]


# --- the grammar ------------------------------------------------------------------------------


def test_braced_values_hold_semicolons_equals_and_escaped_braces() -> None:
    assert pairs("DRIVER={ODBC Driver 18 for SQL Server};PWD={a;b=c}}d};Encrypt=yes") == [
        ("DRIVER", "ODBC Driver 18 for SQL Server"),
        ("PWD", "a;b=c}d"),
        ("Encrypt", "yes"),
    ]


def test_spaces_empty_pairs_and_a_trailing_semicolon() -> None:
    assert pairs(" SERVER = db1 ;; PWD = {x y} ; DATABASE= ;") == [
        ("SERVER", "db1"),
        ("PWD", "x y"),
        ("DATABASE", ""),
    ]
    assert pairs("") == [] and pairs(";;") == []


def test_a_plain_value_may_hold_braces_and_equals_after_its_first_character() -> None:
    assert pairs("PWD=a}b{c=d;UID=u") == [("PWD", "a}b{c=d"), ("UID", "u")]


def test_keys_are_compared_without_case_or_surrounding_spaces() -> None:
    with pytest.raises(ConnectionStringError) as caught:
        parse("Server=a; SERVER =b")
    assert caught.value.kind == "duplicate_key"
    assert str(caught.value) == "SERVER is given twice (at character 11)"


@pytest.mark.parametrize(("text", "kind", "position", "secrets"), MALFORMED)
def test_malformed_strings_name_the_problem_and_position_never_a_value(
    text: str, kind: str, position: int, secrets: tuple[str, ...]
) -> None:
    with pytest.raises(ConnectionStringError) as caught:
        parse(text)
    assert caught.value.kind == kind
    assert caught.value.position == position
    assert f"(at character {position + 1})" in str(caught.value)
    for secret in secrets:
        assert secret not in str(caught.value)


def test_the_issue_repro_is_an_unclosed_brace_of_driver() -> None:
    with pytest.raises(ConnectionStringError) as caught:
        parse(ISSUE_REPRO)
    assert str(caught.value) == "the value of DRIVER opens a brace that is never closed (at character 8)"


def test_a_key_that_looks_like_a_value_is_not_named() -> None:
    with pytest.raises(ConnectionStringError) as caught:
        parse("SERVER=a;p@ss;w0rd={x")
    assert "p@ss" not in str(caught.value) and "w0rd" not in str(caught.value)


# any text a password may be, control characters aside (the parser refuses those)
_values = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


@given(_values)
def test_append_quotes_any_value_so_that_it_parses_back(value: str) -> None:
    text = connstr.append("DRIVER={FreeTDS};SERVER=db1;", "PWD", value)
    assert pairs(text)[-1] == ("PWD", value)


def test_quote_keeps_plain_values_plain() -> None:
    assert connstr.quote("S3cret=x}") == "S3cret=x}"
    assert connstr.quote("a;b") == "{a;b}"
    assert connstr.quote("{x}") == "{{x}}}"
    assert connstr.quote(" x") == "{ x}"
    assert connstr.quote("") == "{}"


# --- what is a secret -------------------------------------------------------------------------


def test_the_allow_list_leaves_off_every_documented_secret_keyword() -> None:
    for key in ("PWD", "KeystoreSecret", "ClientKey", "SSLClientKeystoreDBPassword", "SSLClientKeystash",
                "TrustedContextSystemPassword", "Password"):  # fmt: skip
        assert connstr.is_secret_key(key), key
    for key in ("DRIVER", "Server", "DATABASE", "UID", "Encrypt", "TrustServerCertificate", "HOSTNAME",
                "PORT", "PROTOCOL", "CurrentSchema", "ApplicationIntent", "MultiSubnetFailover",
                "Trusted_Connection", "Authentication", "TDS_Version", " security "):  # fmt: skip
        assert not connstr.is_secret_key(key), key


@pytest.mark.parametrize("engine", ["sqlserver", "db2"])
def test_every_value_off_the_allow_list_is_secret_and_display_keeps_the_rest(engine: str) -> None:
    text = corpus_connection(engine, 1)
    values = connstr.secret_values(text)
    for key, raw in SECRET_ATTRIBUTES:
        assert secret_value_of(raw) in values, key
    shown = connstr.display(text)
    for marker in SECRET_MARKERS:
        assert marker not in shown
    assert "127.0.0.1" in shown and "PORT=1" in shown
    assert ("DRIVER={FreeTDS}" in shown) if engine == "sqlserver" else ("PROTOCOL=TCPIP" in shown)
    assert "tw_probe" not in shown and "db2probe" not in shown  # account names are masked too


def test_scrub_masks_by_value_where_no_pattern_would() -> None:
    """A driver message that repeats a secret without its key: only the value says it is one."""
    cs = "DRIVER={FreeTDS};SERVER=db1;VendorExtraOption=UnlistedLeak31;UID=tw;PWD=x"
    message = "handshake failed: option value 'UnlistedLeak31' rejected for login tw (x)"
    out = connstr.scrub(message, cs)
    assert "UnlistedLeak31" not in out and "login ***" in out and "(***)" in out
    assert out.startswith("handshake failed: option value '***' rejected")


def test_scrub_shows_the_whole_string_as_display_does() -> None:
    cs = "DRIVER={FreeTDS};SERVER=db1;KeyStoreSecret=KsSecretLeak23;UID=tw"
    assert connstr.scrub(f"bad: {cs}", cs) == "bad: DRIVER={FreeTDS};SERVER=db1;KeyStoreSecret=***;UID=***"


def test_the_issue_repro_as_the_driver_manager_repeats_it() -> None:
    """unixODBC answers the repro with "Can't open lib '<everything after the brace>'"."""
    tail = ISSUE_REPRO.split("{", 1)[1]
    message = (
        f"[01000] [unixODBC][Driver Manager]Can't open lib '{tail}' : file not found (0) (SQLDriverConnect)"
    )
    out = connstr.scrub(message, ISSUE_REPRO)
    for secret in ISSUE_REPRO_SECRETS:
        assert secret not in out
    assert (
        out
        == "[01000] [unixODBC][Driver Manager]Can't open lib '***' : file not found (0) (SQLDriverConnect)"
    )
    # each secret alone, as a driver may quote one, is masked too
    for secret in ISSUE_REPRO_SECRETS:
        assert secret not in connstr.scrub(f"value {secret} refused", ISSUE_REPRO)


@pytest.mark.parametrize(("text", "kind", "position", "secrets"), MALFORMED)
def test_malformed_strings_still_have_their_secrets_found(
    text: str, kind: str, position: int, secrets: tuple[str, ...]
) -> None:
    message = f"driver said: {text[:position]} | {text[position:]} | " + " ".join(secrets)
    out = connstr.scrub(message, text)
    for secret in secrets:
        if secret != "tail":  # the text after a brace is part of a malformed value, not a key's
            assert secret not in out, (secret, out)


def test_short_values_are_masked_only_standing_alone() -> None:
    assert connstr.mask("user sa saw the sample", ["sa"]) == "user *** saw the sample"


def test_pattern_redaction_covers_credential_like_keys_in_free_text() -> None:
    line = (
        "connect failed: KeyStoreSecret=KsSecretLeak23;TrustStorePassword={TsPassLeak24;x};"
        "SSLClientKeystoreDBPassword=Db2KdbLeak25 apikey = ApiKeyLeak30;Server=db1"
    )
    out = connstr.redact_text(line)
    for marker in ("KsSecretLeak23", "TsPassLeak24", "Db2KdbLeak25", "ApiKeyLeak30"):
        assert marker not in out
    assert out.endswith(";Server=db1")


def test_the_connectors_read_as_drivers_do_what_a_new_target_may_not_hold() -> None:
    """A string stored before targets were checked still polls: a repeated key and text after a
    brace pass the lenient reading (the connectors'), never the strict one (a new target's)."""
    from connectors.sqlserver import attribute, parse_connection_string

    old = "DRIVER={FreeTDS}x;SERVER=db1;server=db2;PORT=1433"
    assert parse_connection_string(old) == [
        ("DRIVER", "FreeTDS"),
        ("SERVER", "db1"),
        ("server", "db2"),
        ("PORT", "1433"),
    ]
    assert attribute(old, "port") == "1433"
    with pytest.raises(ConnectionStringError):
        parse(old)
    with pytest.raises(ConnectionStringError, match="never closed"):
        parse_connection_string(ISSUE_REPRO)
