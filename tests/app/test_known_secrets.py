"""Secret values a poll decrypted are masked by value in every later log line (app.secrets)."""

from __future__ import annotations

import secrets

from app.secrets import _KnownSecrets, redact, remember_secrets


def test_values_are_masked_wherever_they_stand_also_as_a_url_repeats_them() -> None:
    known = _KnownSecrets()
    known.add(["Unl1sted;Leak/31", "short", "", "SecondOne77"])
    line = "opt=Unl1sted;Leak/31 q=Unl1sted%3BLeak%2F31 p=Unl1sted%3BLeak%2F31 SecondOne77SecondOne77 short"
    assert (
        known.mask(line) == "opt=*** q=*** p=*** ****** short"
    )  # "short": five characters, left to the pattern
    assert known.mask("Unl1sted;Leak") == "Unl1sted;Leak"  # a prefix alone is not the secret


def test_the_longest_value_wins_where_two_start_alike() -> None:
    known = _KnownSecrets()
    known.add(["abcdef", "abcdefghij"])
    assert known.mask("xabcdefghijx abcdefx") == "x***x ***x"


def test_redact_masks_remembered_values_in_any_text() -> None:
    value = "Rem3mbered-" + secrets.token_hex(4)
    assert redact(f"connected with {value}") == f"connected with {value}"
    remember_secrets([value])
    assert redact(f"connected with {value}") == "connected with ***"


def test_one_value_among_thousands_is_found_and_no_other_text_is_touched() -> None:
    """Masking stays exact however many targets' values are remembered (what a line costs with
    5,000 values is measured by bench/log_masking.py, not asserted here)."""
    known = _KnownSecrets()
    values = [secrets.token_urlsafe(12) for _ in range(5000)]
    known.add(values)
    line = '127.0.0.1:34544 - "GET /targets HTTP/1.1" 303 '
    assert known.mask(line * 3) == line * 3
    assert known.mask(f"{line}login failed with {values[4321]}") == f"{line}login failed with ***"
