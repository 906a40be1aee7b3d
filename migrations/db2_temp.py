"""DB2: a system or user temporary table space to another storage group: a new one like it on
the target, then DROP the old one (automatic storage temporary table spaces cannot change their
storage group)."""

from __future__ import annotations

from datetime import datetime

from migrations.db2_frame import (
    BACKUP_TEMP,
    ROUTINES,
    Db2Script,
    create_tablespace_like,
    ensure_group,
    source_text,
    start,
    where_sg,
)
from migrations.header import Operations
from migrations.plan import Move, MoveTempTablespace, Options
from migrations.quoting import db2_ident, db2_str

AUTHORITIES = (
    "Needs SYSCTRL or SYSADM (CREATE / DROP TABLESPACE, a new storage group, GRANT USE OF TABLESPACE), "
    "SELECT on SYSIBMADM.ADMINTEMPTABLES " + ROUTINES.format(extra="")
)
OPERATIONS = Operations(
    duration="seconds: catalog changes only (DROP TABLESPACE fails, and the script stops, while the old one is in use)",
    log_volume="a few catalog log records",
    blocking="none for applications: new work uses the new table space at once; nothing waits on the DROP",
    backups=(
        "the script stops before any change while a BACKUP of the database runs (run it again afterwards); otherwise no effect on backup jobs (temporary table spaces are not backed up)"
    ),
    abort="interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again",
    recover="run the script again later: it carries on (the new table space is kept, the old one dropped once free)",
)


def render_temp(
    move: Move, a: MoveTempTablespace, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    what = f"temporary table space {db2_ident(a.tablespace)} of database {move.target.database}"
    method = [
        "CREATE SYSTEM (or USER, like the old one: read from SYSCAT.TABLESPACES at run time) TEMPORARY TABLESPACE",
        f"{db2_ident(a.new_tablespace)} on the target storage group, like {db2_ident(a.tablespace)} (page size, extent size,",
        f"buffer pool), then DROP TABLESPACE {db2_ident(a.tablespace)}: automatic storage temporary table spaces cannot",
        'change their storage group (IBM Db2 docs, "Temporary table spaces": a rebalance returns SQL0109N). The new',
        "name replaces the old one. A user temporary table space: the USE privileges of the old one are granted on",
        "the new one, and the DROP waits until no declared or created temporary table is in it (IBM Db2 docs,",
        '"Dropping table spaces"; SYSIBMADM.ADMINTEMPTABLES shows them).',
    ]
    limits = [
        "Not supported in pureScale (checked).",
        AUTHORITIES,
        "No restart needed: new work uses the new table space at once; DROP fails while a running query "
        "uses the old one (run the script again later).",
        "User temporary: applications that name the table space (DECLARE GLOBAL TEMPORARY TABLE ... IN "
        f"{db2_ident(a.tablespace)}) must use {db2_ident(a.new_tablespace)}; without IN, Db2 picks one they have USE of. "
        "A created temporary table defined in it stops the script before anything changes (move it by hand).",
    ]
    s = start(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source=source_text(a.source),
        destination=where_sg(a.target),
        method=method,
        limits=limits,
        operations=OPERATIONS,
        backup=BACKUP_TEMP,
    )
    temp_steps(s, a)
    return s.text()


def _temp_checks(s: Db2Script, a: MoveTempTablespace) -> None:
    """Before anything changes: the old table space temporary (or already replaced), the new name
    free or the same kind in the target group, no created temporary table defined in the old one."""
    old, new, group = db2_str(a.tablespace), db2_str(a.new_tablespace), db2_str(a.target.name)
    exists = "EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {})"
    old_type = f"(SELECT DATATYPE FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old})"
    s.check(
        f"table space {a.tablespace} is a system or user temporary table space, or already replaced by {a.new_tablespace}",
        "SYSIBM.SYSDUMMY1",
        f"{a.tablespace[:24]} not temporary",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old} AND DATATYPE IN ('T', 'U')) "
            f"AND NOT {exists.format(new)}"
        ),
    )
    s.check(
        f"table space {a.new_tablespace}, if it exists, is temporary of the same kind as {a.tablespace} in storage group {a.target.name}",
        "SYSCAT.TABLESPACES",
        f"{a.new_tablespace[:24]} exists elsewhere",
        where=(
            f"TBSPACE = {new} AND (DATATYPE NOT IN ('T', 'U') OR COALESCE(SGNAME, '') <> {group} "
            f"OR DATATYPE <> COALESCE({old_type}, DATATYPE))"
        ),
    )
    s.check(
        f"no created temporary table is defined in {a.tablespace} (its definition would block the DROP: move it by hand)",
        "SYSCAT.TABLES",
        "a created temp table is defined in it",
        where=f"TYPE = 'G' AND TBSPACE = {old}",
    )


def temp_steps(s: Db2Script, a: MoveTempTablespace) -> None:
    """A system or user temporary table space to another storage group: a new one of the same kind
    like it on the target, then DROP the old one (IBM Db2 docs: automatic storage temporary table
    spaces cannot change their storage group; a database needs a system temporary table space of
    the catalog's page size, so the new one is created first). Which kind it is (SYSCAT.TABLESPACES
    DATATYPE T or U) is read at run time. A user temporary table space also gets the old one's USE
    privileges, and is dropped only while no declared or created temporary table is in it (IBM Db2
    docs, "Dropping table spaces")."""
    _temp_checks(s, a)
    old, new, group = db2_str(a.tablespace), db2_str(a.new_tablespace), db2_str(a.target.name)
    exists = "EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {})"
    ensure_group(s, a.target, "step 1")
    create_tablespace_like(s, a.new_tablespace, a.tablespace, a.target.name, "step 2", temporary=True)
    grant = (
        f"{db2_str('GRANT USE OF TABLESPACE ' + db2_ident(a.new_tablespace) + ' TO ')} || "
        "CASE WHEN R.GRANTEETYPE = 'G' AND R.GRANTEE = 'PUBLIC' THEN 'PUBLIC' ELSE "
        "CASE R.GRANTEETYPE WHEN 'U' THEN 'USER ' WHEN 'G' THEN 'GROUP ' ELSE 'ROLE ' END || "
        "'\"' || REPLACE(RTRIM(R.GRANTEE), '\"', '\"\"') || '\"' END || "
        "CASE WHEN R.USEAUTH = 'G' THEN ' WITH GRANT OPTION' ELSE '' END"
    )
    s.change(
        f"step 3: a user temporary table space: the users, groups and roles with USE of {a.tablespace} get USE of "
        f"{a.new_tablespace} (nothing to do for a system temporary one)",
        "BEGIN\n"
        "  FOR R AS SELECT A.GRANTEE, A.GRANTEETYPE, A.USEAUTH FROM SYSCAT.TBSPACEAUTH AS A "
        f"WHERE A.TBSPACE = {old} AND A.USEAUTH IN ('Y', 'G') "
        f"AND EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {new} AND DATATYPE = 'U') "
        "AND NOT EXISTS (SELECT 1 FROM SYSCAT.TBSPACEAUTH AS B "
        f"WHERE B.TBSPACE = {new} AND B.GRANTEE = A.GRANTEE AND B.GRANTEETYPE = A.GRANTEETYPE AND B.USEAUTH IN ('Y', 'G')) DO\n"
        f"    {s.say(f'step 3: granting USE of {db2_ident(a.new_tablespace)} like {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {grant};\n"
        "  END FOR;\n"
        "END",
    )
    s.check(
        f"no declared or created temporary table is in {a.tablespace} right now "
        "(SYSIBMADM.ADMINTEMPTABLES; they block the DROP: run the script again when the applications using them have ended)",
        "SYSIBMADM.ADMINTEMPTABLES AS T",
        "temp tables in use in it: run again later",
        where=f"T.TBSP_ID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old})",
        transient=True,
    )
    drop = f"DROP TABLESPACE {db2_ident(a.tablespace)}"
    s.change(
        f"step 4: drop {a.tablespace} (fails while a query uses it: run again in a quieter moment)",
        "BEGIN\n"
        f"  IF {exists.format(old)} AND {exists.format(new)} THEN\n"
        f"    {s.say(f'step 4: dropping {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say(f'step 4: already done: {db2_ident(a.tablespace)} is gone')}\n"
        "  END IF;\n"
        "END",
    )
    s.check(
        f"post-check: {a.new_tablespace} is a temporary table space in {a.target.name} and {a.tablespace} is gone",
        "SYSIBM.SYSDUMMY1",
        "post-check: temporary table space not replaced",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {new} AND DATATYPE IN ('T', 'U') AND SGNAME = {group}) "
            f"OR {exists.format(old)}"
        ),
        post=True,
    )
    s.window(
        "BEGIN\n"
        f"  {s.say(f'finished: temporary table space {db2_ident(a.new_tablespace)} is in {db2_ident(a.target.name)}')}\n"
        "END"
    )
