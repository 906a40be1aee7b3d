"""T-SQL dialect: which module writes the script of an action.

`render(move, direction, forward, options, generated_at)` looks the action's type up in
TRANSFORMS (as sqlglot's Generator.TRANSFORMS maps an expression type to its writer); file moves
are looked up once more by their mode. This module imports the writers and nothing imports it
but the package, so the writers never import back: the frame they share is tsql_frame, the
checks tsql_checks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from migrations import tsql_leading, tsql_offline, tsql_online, tsql_partition, tsql_readonly, tsql_tempdb
from migrations.plan import AddPartition, Move, MoveFiles, MovePartition, Options, SetReadOnly, Unsupported

# (move, action, direction, forward, options, generated_at) -> script text
Writer = Callable[[Move, Any, str, Move, Options, datetime], str]

FILE_MODES: dict[str, Writer] = {
    "online": tsql_online.render_online,
    "offline": tsql_offline.render_offline,
    "restart": tsql_tempdb.render_restart,
}


def _render_files(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    return FILE_MODES[action.mode](move, action, direction, forward, options, at)


TRANSFORMS: dict[type, Writer] = {
    MoveFiles: _render_files,
    SetReadOnly: tsql_readonly.render_read_only,
    MovePartition: tsql_partition.render_partition,
    AddPartition: tsql_leading.render_add_partition,
}


def render(move: Move, direction: str, forward: Move, options: Options, generated_at: datetime) -> str:
    writer = TRANSFORMS.get(type(move.action))
    if writer is None:
        raise Unsupported(f"{move.key}: {type(move.action).__name__} is a DB2 action; it has no T-SQL form")
    return writer(move, move.action, direction, forward, options, generated_at)
