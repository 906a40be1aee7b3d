"""Secret values a poll decrypted are masked by value in every later log line (app.secrets)."""

from __future__ import annotations

import secrets
import time

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


def test_a_line_costs_a_look_up_per_character_however_many_targets() -> None:
    known = _KnownSecrets()
    known.add(secrets.token_urlsafe(12) for _ in range(5000))
    line = '127.0.0.1:34544 - "GET /targets?message=SQL01%3A+test+failed+on+the+server HTTP/1.1" 303 ' * 3
    started = time.perf_counter()
    for _ in range(200):
        known.mask(line)
    per_line = (time.perf_counter() - started) / 200
    assert per_line < 0.002, f"{per_line * 1000:.2f} ms per line"
