"""The header every script starts with: what moves, from where to where, why, and how to run it.

Plain lines of text; the dialect module turns them into comment lines (quoting.comment_lines),
which neutralises anything in names or reasons that a client tool could act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from migrations.plan import Move, Options

GENERATOR_REVISION = "migrations/1"


@dataclass(frozen=True)
class Operations:
    """What the on-call DBA plans around before running a script (the questions dbatools'
    Move-DbaDbFile and Ola Hallengren's CommandLog answer): each a short sentence, with numbers
    where the plan has them."""

    duration: str  # estimated duration, and what it scales with
    log_volume: str  # transaction log (T-SQL) or active log (DB2) the script generates
    blocking: str  # which locks, who waits, for how long at most
    backups: str  # effect on backup jobs; whether to pause them
    abort: str  # how to stop it mid-step safely
    recover: str  # how to get back to a working state if it stopped halfway

    def lines(self) -> list[str]:
        return [
            "Operations:",
            f"  Duration:    {self.duration}",
            f"  Log volume:  {self.log_volume}",
            f"  Blocking:    {self.blocking}",
            f"  Backups:     {self.backups}",
            f"  To abort:    {self.abort}",
            f"  To recover:  {self.recover}",
        ]


def _gb(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1024**3:,.1f} GB"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.1f} ms/s"


def timestamp(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("generated_at must be timezone-aware (pass datetime.now(UTC))")
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def header_lines(
    move: Move,
    *,
    direction: str,
    forward: Move,
    dialect_title: str,
    what: str,
    source: str,
    destination: str,
    method: list[str],
    limits: list[str],
    run: list[str],
    options: Options,
    generated_at: datetime,
    operations: Operations | None = None,
) -> list[str]:
    """`move` is what this script does; `forward` is the recommendation (the same move, or the
    move this rollback undoes)."""
    w = forward.why
    # "check": the DB2 check-only run of the forward move (db2_frame; its .check.db2 file)
    title = {"forward": "FORWARD", "check": "CHECK ONLY (changes nothing)"}.get(direction, "ROLLBACK")
    lines = [
        "=" * 96,
        f"tierwise {dialect_title} migration script: {title}",
        "=" * 96,
        f"Moves:      {what}",
        f"Server:     {move.target.server}",
        f"Database:   {move.target.database}",
        f"From:       tier {move.from_tier or 'unknown'}: {source}",
        f"To:         tier {move.to_tier}: {destination}",
    ]
    if direction == "rollback":
        lines.append(
            f"Undoes:     the forward move of {forward.key} (tier {forward.from_tier or 'unknown'} -> {forward.to_tier})"
        )
    lines.append(f"Object:     {forward.kind} {forward.name} (key {forward.key})")
    why = f"{w.profile or 'n/a'}" + (f" ({w.rule})" if w.rule else "")
    lines.append(f"Why:        {why}")
    lines.extend(f"            - {r}" for r in w.reasons)
    lines.append(
        f"Predicted:  I/O wait {_ms(w.io_ms_per_s_now)} now -> {_ms(w.io_ms_per_s_after)} on tier {forward.to_tier}"
    )
    lines.append(f"Size:       {_gb(w.size_bytes)}")
    lines.append("Method:")
    lines.extend(f"  {m}" for m in method)
    if limits or move.notes:
        lines.append("Limits and notes:")
        lines.extend(f"  - {n}" for n in [*limits, *move.notes])
    if operations is not None:
        lines.extend(operations.lines())
    lines.extend(
        [
            f"Generator:  {options.generator} ({GENERATOR_REVISION})",
            f"Generated:  {timestamp(generated_at)}",
            f"Plan:       sha256 {forward.checksum()} (the forward plan; the rollback shows the same)",
            "Run:",
            *[f"  {r}" for r in run],
            "Safe to run twice: every step checks first and says 'already done' when there is nothing to do.",
            "=" * 96,
        ]
    )
    return lines
