"""One move in, its script text out: the dialect's dispatcher picks the writer (tsql, db2).

Kept apart from the package's __init__ so that modules of the package (ilm) import it without
importing the package they belong to.
"""

from __future__ import annotations

from datetime import datetime

from migrations import db2, tsql
from migrations.advice_read import Dialect
from migrations.plan import Move, MoveDb2Log, MoveFiles, Options, PlanError, Script

EXTENSION = {"tsql": ".sql", "db2": ".db2"}


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


def render_check(move: Move, dialect: Dialect, options: Options, generated_at: datetime) -> Script | None:
    """The check-only run of `move`'s forward script: DB2 writes it as a file of its own (the
    `.check.db2` beside the forward and rollback scripts: the same checks, none of the steps);
    None for T-SQL, whose scripts take TW_CHECK_ONLY themselves."""
    if dialect != "db2":
        return None
    action = move.action
    restart = isinstance(action, MoveDb2Log)
    return Script("check", db2.render(move, "check", move, options, generated_at), False, restart, move.notes)


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
