"""DB2 LUW dialect: which module writes the CLP script of an action.

`render(move, direction, forward, options, generated_at)` looks the action's type up in
TRANSFORMS (as sqlglot's Generator.TRANSFORMS maps an expression type to its writer); a data
partition is looked up once more by its route. This module imports the writers and nothing
imports it but the package, so the writers never import back: the frame they share (the script,
checks, storage groups, table spaces) is db2_frame.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from migrations import db2_leading, db2_log, db2_partition, db2_tablespace, db2_temp
from migrations.plan import (
    AddDataPartition,
    Move,
    MoveDataPartition,
    MoveDb2Log,
    MoveTablespace,
    MoveTempTablespace,
    Options,
    Unsupported,
)

# (move, action, direction, forward, options, generated_at) -> script text
Writer = Callable[[Move, Any, str, Move, Options, datetime], str]

PARTITION_ROUTES: dict[str, Writer] = {
    "detach_attach": db2_partition.render_detach_attach,
    "tablespace": db2_tablespace.render_partition_alone,
}


def _render_partition(
    move: Move, a: MoveDataPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    return PARTITION_ROUTES[a.route](move, a, direction, forward, options, at)


TRANSFORMS: dict[type, Writer] = {
    MoveTablespace: db2_tablespace.render_tablespace,
    MoveDataPartition: _render_partition,
    MoveTempTablespace: db2_temp.render_temp,
    MoveDb2Log: db2_log.render_log,
    AddDataPartition: db2_leading.render_add_partition,
}


def render(move: Move, direction: str, forward: Move, options: Options, generated_at: datetime) -> str:
    writer = TRANSFORMS.get(type(move.action))
    if writer is None:
        raise Unsupported(
            f"{move.key}: {type(move.action).__name__} is a SQL Server action; it has no DB2 form"
        )
    return writer(move, move.action, direction, forward, options, generated_at)
