"""What masking remembered secret values costs a log line (app.secrets._KnownSecrets): every target's
decrypted values are masked by value in every later log line, so the cost per line must not grow
with the number of targets. Prints the time per line for 100, 1,000 and 5,000 remembered values.

    .venv/bin/python -m bench.log_masking
"""

from __future__ import annotations

import secrets
import time

from app.secrets import _KnownSecrets

LINE = '127.0.0.1:34544 - "GET /targets?message=SQL01%3A+test+failed+on+the+server HTTP/1.1" 303 ' * 3


def per_line(values: int, lines: int = 500) -> float:
    known = _KnownSecrets()
    known.add(secrets.token_urlsafe(12) for _ in range(values))
    started = time.perf_counter()
    for _ in range(lines):
        known.mask(LINE)
    return (time.perf_counter() - started) / lines


def main() -> None:
    for n in (100, 1_000, 5_000):
        print(
            f"log masking: {n:>5,} remembered values: {per_line(n) * 1000:.3f} ms per {len(LINE)}-character line"
        )


if __name__ == "__main__":
    main()
