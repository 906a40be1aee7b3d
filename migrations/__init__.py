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
- `render`: one move to its forward and rollback scripts (and DB2's check-only script), through the
  dialect's dispatcher;
- `tsql` (dispatch table) over `tsql_frame` (batches, gate, step, fail), `tsql_checks` (shared
  pre-checks), `tsql_files` (what the file moves share) and the writers `tsql_online`,
  `tsql_offline`, `tsql_tempdb`, `tsql_partition` (+ `tsql_partition_sql`), `tsql_leading`,
  `tsql_readonly`;
- `db2` (dispatch table) over `db2_frame` (the CLP script, checks, storage groups, table spaces),
  `db2_ranges` (partition ranges and row checks) and the writers `db2_tablespace`,
  `db2_partition`, `db2_leading`, `db2_temp`, `db2_log`;
- a dispatcher imports the writers, a writer imports the frames, never back
  (tests/migrations/test_import_cycles.py checks it);
- `header`: the header every script starts with.
"""

from __future__ import annotations

from migrations.from_advice import (
    AdviceError,
    Dialect,
    Selection,
    Skipped,
    TierSpot,
    read_advised,
    select_advised,
    select_moves,
)
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
from migrations.render import EXTENSION, render_check, render_pair, render_script

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
    "read_advised",
    "render_check",
    "render_pair",
    "render_script",
    "select_advised",
    "select_moves",
]
