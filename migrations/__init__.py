"""Script generators: a neutral plan of moves in, T-SQL or DB2 CLP script text out.

Pure: no I/O, no clock (the generation time is passed in), nothing from `app` or `connectors`.

    from migrations import Options, render_pair, select_moves, TierSpot
    selection = select_moves(advice_json, source="advice.json", tiers=[...], dialect="tsql")
    for move in selection.moves:
        forward, rollback = render_pair(move, "tsql", Options(generator="tierwise 0.1.0"), now)

Modules:
- `plan`: the neutral model (moves, actions, their inverses, the plan checksum);
- `from_advice` (selection, run order), `advice_read` (validation), `advice_build` (one move);
- `quoting`: every identifier, literal, path and comment text goes through it;
- `tsql` (frame, shared checks) with `tsql_files`, `tsql_online`, `tsql_offline`,
  `tsql_partition` (+ `tsql_partition_sql`), `tsql_readonly`; `db2` for DB2 CLP;
- `header`: the header every script starts with.
"""

from __future__ import annotations

from datetime import datetime

from migrations import db2, tsql
from migrations.from_advice import AdviceError, Dialect, Selection, Skipped, TierSpot, select_moves
from migrations.plan import (
    AddDataPartition,
    AddPartition,
    FileMove,
    Move,
    MoveDataPartition,
    MoveDb2Log,
    MoveFiles,
    MovePartition,
    MoveTablespace,
    MoveTempTablespace,
    NewFile,
    Options,
    PlanError,
    Script,
    SetReadOnly,
    StorageGroup,
    Target,
    Unsupported,
    Why,
)
from migrations.quoting import UnsafeNameError

EXTENSION = {"tsql": ".sql", "db2": ".db2"}

__all__ = [
    "EXTENSION",
    "AddDataPartition",
    "AddPartition",
    "AdviceError",
    "Dialect",
    "FileMove",
    "Move",
    "MoveDataPartition",
    "MoveDb2Log",
    "MoveFiles",
    "MovePartition",
    "MoveTablespace",
    "MoveTempTablespace",
    "NewFile",
    "Options",
    "PlanError",
    "Script",
    "Selection",
    "SetReadOnly",
    "Skipped",
    "StorageGroup",
    "Target",
    "TierSpot",
    "UnsafeNameError",
    "Unsupported",
    "Why",
    "render_pair",
    "render_script",
    "select_moves",
]


def render_script(
    move: Move, dialect: Dialect, options: Options, generated_at: datetime, *, rollback_of: Move | None = None
) -> str:
    """One script: `move` forward, or (with `rollback_of`) the inverse move undoing it."""
    forward = rollback_of or move
    direction = "rollback" if rollback_of is not None else "forward"
    if dialect == "tsql":
        return tsql.render(move, direction, forward, options, generated_at)
    if dialect == "db2":
        return db2.render(move, direction, forward, options, generated_at)
    raise PlanError(f"unknown dialect {dialect!r} (tsql or db2)")


def render_pair(
    move: Move, dialect: Dialect, options: Options, generated_at: datetime
) -> tuple[Script, Script]:
    """The forward script and its rollback. Raises Unsupported when either cannot be written
    safely: a move without a rollback is not scripted."""
    action = move.action
    manual = isinstance(action, MoveFiles) and action.mode == "offline"
    restart = (isinstance(action, MoveFiles) and action.mode == "restart") or isinstance(action, MoveDb2Log)
    inverse = move.inverse()
    forward = Script(
        "forward", render_script(move, dialect, options, generated_at), manual, restart, move.notes
    )
    back = Script(
        "rollback",
        render_script(inverse, dialect, options, generated_at, rollback_of=move),
        manual,
        restart,
        inverse.notes,
    )
    return forward, back
