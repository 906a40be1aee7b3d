"""The T-SQL partition scripts after hardening (issue #15, part C): structural assertions on the
generated text of the golden cases (tsql_partition: move one partition; tsql_ilm_add_partition:
the ILM leading edge), forward and rollback.

Each test names the fix it guards; each fails on the generator before that fix."""

from __future__ import annotations

import re

import pytest

from tests.migrations.golden_cases import CASES, render_case
from tests.migrations.sqltokens import tsql_batches

PARTITION = next(c for c in CASES if c.name == "tsql_partition")
ILM = next(c for c in CASES if c.name == "tsql_ilm_add_partition")


def scripts(case: object) -> dict[str, str]:
    return render_case(case)  # type: ignore[arg-type]


def move_batch(text: str) -> str:
    """The batch of the partition move that holds the transaction."""
    (batch,) = [b for b in tsql_batches(text) if "BEGIN TRANSACTION" in b]
    return batch


def at(text: str, needle: str) -> int:
    i = text.find(needle)
    assert i >= 0, f"not in the script: {needle}"
    return i


PARTITION_SCRIPTS = list(scripts(PARTITION).items())


# -- 1. compression after MERGE/SPLIT ------------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_partition_gets_its_compression_back_before_the_switch_in(name: str, text: str) -> None:
    """MERGE/SPLIT gives the re-created partition its neighbour's compression; the switch-in needs
    the staging table's (= the partition's original) compression: every index's empty partition n
    is rebuilt to the value read from sys.partitions before the move, after the SPLIT and before
    the switch-in, and the result is verified inside the transaction."""
    b = move_batch(text)
    # read per index (heap/clustered and each nonclustered) from sys.partitions, before the transaction
    assert "SELECT i.index_id, p.data_compression_desc," in b
    assert at(
        b,
        "JOIN sys.partitions AS p ON p.object_id = i.object_id AND p.index_id = i.index_id AND p.partition_number = @n",
    ) < at(b, "BEGIN TRANSACTION")
    # the rebuild statements: ALTER TABLE for the clustered index, ALTER INDEX for the others
    assert (
        "CASE WHEN i.index_id = 1 THEN N'ALTER TABLE ' + @qtable ELSE N'ALTER INDEX ' + QUOTENAME(i.name) + N' ON ' + @qtable END"
        in b
    )
    assert (
        "N' REBUILD PARTITION = ' + CAST(@n AS nvarchar(10)) + N' WITH (DATA_COMPRESSION = ' + p.data_compression_desc"
        in b
    )
    split = at(b, "SPLIT RANGE (@v);")
    rebuild = at(b, "@ddl = compress_sql FROM @ix")
    switch_in = at(b, "N' SWITCH TO ' + @qtable")
    assert split < rebuild < switch_in
    # only where the compression differs, and checked after the switch-in
    assert "AND data_compression_desc <> @want)" in b[rebuild:switch_in]
    verify = at(b, "WHERE p.data_compression_desc <> x.compression)")
    assert switch_in < verify < at(b, "COMMIT TRANSACTION")


# -- 2. WAIT_AT_LOW_PRIORITY and the row count -----------------------------------------------------


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_switch_out_waits_at_low_priority_on_2014_and_briefly_on_2012(name: str, text: str) -> None:
    b = move_batch(text)
    branch = at(b, "AS nvarchar(128)), 4) AS int) >= 12")
    low = at(
        b,
        "SET @switch_option = N' WITH (WAIT_AT_LOW_PRIORITY (MAX_DURATION = 5 MINUTES, ABORT_AFTER_WAIT = SELF))';",
    )
    old = at(b, "SET @switch_option = N'';")
    assert branch < low < old < at(b, "BEGIN TRANSACTION")
    # the move's transaction; after its commit (the exact count) the usual 30 s apply again
    locked = b[branch : at(b, "COMMIT TRANSACTION")]
    timeouts = [int(t) for t in re.findall(r"SET LOCK_TIMEOUT (\d+);", locked)]
    # 2014+: the session timeout never cuts the 5-minute low-priority wait short; 2012: others queue 5 s at most
    assert timeouts == [360000, 5000]
    # the switch-out (the only lock request others could queue behind) carries the option
    assert "N' SWITCH PARTITION ' + CAST(@n AS nvarchar(10)) + N' TO ' + @qstage + @switch_option + N';'" in b
    assert "SWITCH PARTITION" in b and "LOCK_TIMEOUT 30000" not in locked


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_no_row_count_runs_under_the_sch_m_lock(name: str, text: str) -> None:
    """H7 #1: a COUNT(*) inside the transaction held the table's Sch-M lock (every reader
    blocked) for the length of a scan. Between the switch-out and the commit only metadata is
    read: sys.partitions (rows the rebuild wrote, rows partition n holds after the switch-in)."""
    b = move_batch(text)
    locked = b[at(b, "N' SWITCH PARTITION '") : at(b, "COMMIT TRANSACTION")]
    assert "COUNT_BIG" not in locked and "COUNT(" not in locked
    moved = at(
        b, "SELECT @rows_moved = SUM(rows) FROM sys.partitions WHERE object_id = OBJECT_ID(@qstage, N'U')"
    )
    rebuild = at(b, "@ddl = rebuild_sql FROM @ix")
    switch_in = at(b, "N' SWITCH TO ' + @qtable")
    meta = at(b, "IF @rows_in IS NULL OR @rows_in <> @rows_moved")
    assert rebuild < moved < switch_in < meta < at(b, "COMMIT TRANSACTION")


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_exact_count_runs_after_the_commit_and_a_difference_says_what_to_do(name: str, text: str) -> None:
    """H7 #1: the exact count runs after the commit (and after the CATCH that rolls back), with a
    normal lock timeout; a difference stops the script saying the move is committed, which object,
    the query to count again and what to do, instead of a silent rollback."""
    b = move_batch(text)
    catch_end = at(b, "END CATCH;")
    count = at(b, "SET @sql = N'SELECT @c = COUNT_BIG(*) FROM ' + @qtable + N' WHERE $PARTITION.'")
    assert at(b, "COMMIT TRANSACTION") < catch_end < b.rindex("SET LOCK_TIMEOUT 30000;") < count
    differ = at(b, "IF @rows_after <> @rows_moved")
    assert count < differ
    message = b[differ : b.index("END;", differ)]
    for words in (
        "is COMMITTED (nothing was rolled back)",
        "' + @qtable + N' to '",
        "QUOTENAME(@target_fg)",
        "run ' + @check + N' again",
        "do not run the rollback script",
        "DBCC CHECKTABLE",
        "run this script again",
    ):
        assert words in message, words
    assert "SET NOEXEC ON;" in message and "ROLLBACK" not in message
    # a count that cannot run (lock timeout) is reported the same way
    assert "its row count could not be read (' + ERROR_MESSAGE()" in b[count:differ]


# -- 3. table features that rule out SWITCH or MERGE/SPLIT ------------------------------------------

FEATURES = {
    "temporal": "COALESCE(OBJECTPROPERTY(@object_id, 'TableTemporalType'), 0) <> 0",
    "cdc": "is_tracked_by_cdc = 1",
    "change tracking": "FROM sys.change_tracking_tables WHERE object_id = @object_id",
    "replication": "(is_replicated = 1 OR is_merge_published = 1 OR is_sync_tran_subscribed = 1)",
    "full-text": "FROM sys.fulltext_indexes WHERE object_id = @object_id",
    "lob": "(c.max_length = -1 OR t.name IN (N'text', N'ntext', N'image'))",
    "ansi_nulls": "uses_ansi_nulls = 0",
    "rowguidcol": "OR is_rowguidcol = 1",
    "ansi_padding": "is_ansi_padded = 0 AND system_type_id IN (165, 167, 173, 175)",
}


@pytest.mark.parametrize("feature", FEATURES, ids=list(FEATURES))
def test_switch_prerequisites_stop_before_anything_changes(feature: str) -> None:
    for name, text in PARTITION_SCRIPTS:
        condition = FEATURES[feature]
        batches = tsql_batches(text)
        checked = [b for b in batches if condition in b]
        # in the pre-check batches (before anything changes, so a check-only run reports it) and
        # again in the move batch, before its transaction
        assert len(checked) >= 2 and "BEGIN TRANSACTION" not in checked[0], (name, feature)
        assert any("BEGIN TRANSACTION" in b for b in checked), (name, feature)
        for b in checked:
            i = at(b, condition)
            block = b[i : b.index("END;", i)]
            assert "RAISERROR(N'%s', 16, 1, @msg);" in block and "SET NOEXEC ON;" in block, (name, feature)
            assert "Nothing was changed." in block, (name, feature)
            if "BEGIN TRANSACTION" in b:
                assert i < b.index("BEGIN TRANSACTION")


# -- 4. ILM leading edge: real boundary and filegroup checks ----------------------------------------

ILM_SCRIPTS = scripts(ILM)
ILM_FORWARD = ILM_SCRIPTS["tsql_ilm_add_partition.forward.sql"]
ILM_ROLLBACK = ILM_SCRIPTS["tsql_ilm_add_partition.rollback.sql"]


def test_ilm_pre_checks_test_the_boundary_and_the_filegroup() -> None:
    (pre,) = [b for b in tsql_batches(ILM_FORWARD) if "@above bit" in b]
    # an existing boundary is "already done" only when its partition is on the planned filegroup
    assert "IF @exists = 1 AND @partition_fg <> @fg" in pre
    assert "WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;" in pre
    # a boundary above: not the leading edge (the split would not be on the empty end)
    assert "IF @exists = 0 AND @above = 1" in pre
    # the filegroup the new partition goes to exists, has files and is writable
    assert "FILEGROUP_ID(@fg) IS NULL OR NOT EXISTS (SELECT 1 FROM sys.database_files" in pre
    assert "WHERE name = @fg AND is_read_only = 1" in pre
    # every scheme on the function would need a NEXT USED: another scheme stops the script
    assert (
        "OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)"
        in pre
    )
    # a NEXT USED someone else set is reported
    assert "dds.destination_id = @fanout + 1;" in pre and "NEXT USED filegroup is" in pre


def test_ilm_split_is_verified_inside_its_transaction() -> None:
    (step,) = [b for b in tsql_batches(ILM_FORWARD) if "BEGIN TRANSACTION" in b]
    split = at(step, "SPLIT RANGE (@v);")
    where = at(step, "WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;")
    empty = at(step, "IF @rows <> 0")
    commit = at(step, "COMMIT TRANSACTION;")
    assert at(step, "BEGIN TRY") < at(step, "BEGIN TRANSACTION") < split < where < empty < commit
    assert "IF @partition_fg IS NULL OR @partition_fg <> @fg" in step[split:commit]
    # the new partition's rows, exactly (partition elimination on $PARTITION), not sys.partitions.rows
    assert (
        "WHERE $PARTITION.' + QUOTENAME(@function) + N'(' + QUOTENAME(@column) + N') = @p;'"
        in step[split:commit]
    )
    assert "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;" in step[commit:]
    (post,) = [b for b in tsql_batches(ILM_FORWARD) if "post-check failed: the partition starting at" in b]
    assert "IF @partition_fg IS NULL OR @partition_fg <> @fg" in post


def test_ilm_rollback_counts_the_rows_it_would_merge_exactly() -> None:
    (step,) = [b for b in tsql_batches(ILM_ROLLBACK) if "MERGE RANGE (@v)" in b]
    assert "SUM(p.rows)" not in step
    count = at(step, "SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema)")
    assert count < at(step, "IF @rows IS NULL OR @rows > 0") < at(step, "MERGE RANGE (@v)")


def test_ilm_rollback_merges_in_a_transaction_after_locking_and_recounting() -> None:
    """DBA review (#15): the MERGE ran on its own after a count taken without a lock, so a row
    arriving in between was moved (fully logged) into the partition below. Now: BEGIN TRAN, an
    exclusive table lock held to the end, the exact recount, a refusal that rolls back, MERGE,
    COMMIT."""
    (step,) = [b for b in tsql_batches(ILM_ROLLBACK) if "MERGE RANGE (@v)" in b]
    assert "SET XACT_ABORT ON;" in step
    timeout = at(step, "SET LOCK_TIMEOUT 5000;")
    begin = at(step, "BEGIN TRANSACTION;")
    lock = at(step, "N' WITH (TABLOCKX, HOLDLOCK);'")
    assert "SELECT TOP (0) 1 FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table)" in step[begin:lock]
    recount = step.index("SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema)", lock)
    refuse = at(step, "IF @rows IS NULL OR @rows <> 0")
    merge = at(step, "MERGE RANGE (@v)")
    commit = at(step, "COMMIT TRANSACTION;")
    assert timeout < at(step, "BEGIN TRY") < begin < lock < recount < refuse < merge < commit
    assert "RAISERROR(N'%s', 16, 1, @msg);" in step[refuse:merge]
    catch = step[commit:]
    assert "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;" in catch and "SET NOEXEC ON;" in catch


def test_ilm_rollback_header_has_its_own_limits() -> None:
    """The rollback's header told of the split (metadata-only before the period, rows at or above
    the boundary) and said nothing of the merge's own refusal and lock."""
    limits = ILM_ROLLBACK[ILM_ROLLBACK.index("-- Limits and notes:") : ILM_ROLLBACK.index("-- Operations:")]
    assert "metadata-only" not in limits and "rows at or above the boundary" not in limits
    assert "TABLOCKX, HOLDLOCK" in limits and "counted again exactly inside the MERGE's transaction" in limits
    ops = ILM_ROLLBACK[ILM_ROLLBACK.index("-- Operations:") : ILM_ROLLBACK.index("-- Generator:")]
    assert "the merge is one transaction" in ops and "TABLOCKX" in ops


def test_ilm_lock_wait_is_short() -> None:
    """SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY: new queries queue behind their Sch-M request."""
    for text in (ILM_FORWARD, ILM_ROLLBACK):
        assert [int(t) for t in re.findall(r"SET LOCK_TIMEOUT (\d+);", text)] == [5000]


# -- 5. Operations block --------------------------------------------------------------------------

FIELDS = ("Duration:", "Log volume:", "Blocking:", "Backups:", "To abort:", "To recover:")
ALL = [*PARTITION_SCRIPTS, *ILM_SCRIPTS.items()]


@pytest.mark.parametrize(("name", "text"), ALL, ids=[n for n, _ in ALL])
def test_every_script_has_a_complete_operations_block(name: str, text: str) -> None:
    header = text[: text.index(":on error exit")]
    lines = header.splitlines()
    start = lines.index("-- Operations:")
    block = lines[start + 1 : start + 1 + len(FIELDS)]
    for field, line in zip(FIELDS, block, strict=True):
        head, _, body = line.partition(field)
        assert head == "--   " and len(body.strip()) > 30, (name, field, line)


def test_partition_operations_use_the_plan_size_and_name_the_locks() -> None:
    fwd = dict(PARTITION_SCRIPTS)["tsql_partition.forward.sql"]
    ops = fwd[fwd.index("-- Operations:") : fwd.index("-- Generator:")]
    assert "for 0.8 GB at ~100 MB/s" in ops
    assert "under FULL recovery the rebuild is fully logged" in ops
    assert "WAIT_AT_LOW_PRIORITY" in ops and "Sch-M" in ops
    ilm_ops = ILM_FORWARD[ILM_FORWARD.index("-- Operations:") : ILM_FORWARD.index("-- Generator:")]
    assert "metadata only" in ilm_ops and "at most 5 s" in ilm_ops


# -- 6. float and real keys before SQL Server 2016 ------------------------------------------------

MAJOR = "CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int)"


@pytest.mark.parametrize(("name", "text"), ALL, ids=[n for n, _ in ALL])
def test_float_keys_never_use_style_3_before_sql_server_2016(name: str, text: str) -> None:
    """DBA review (#15): CONVERT style 3 for float/real exists from SQL Server 2016 (13.x) on;
    before it the style is processed as 0 (6 digits), so a boundary read back as text was
    rounded. Below 13: real uses style 2 (16 digits, enough for a real), float is refused with
    its own message before any conversion."""
    batches = [b for b in tsql_batches(text) if "@style = CASE" in b]
    assert batches, name
    for b in batches:
        old = at(b, f"WHEN t.name IN (N'real', N'float') AND {MAJOR} < 13 THEN 2")
        assert old < at(b, "WHEN t.name IN (N'real', N'float') THEN 3")
        refuse = at(b, f"IF @type = N'float' AND {MAJOR} < 13")
        block = b[refuse : b.index("END;", refuse)]
        assert "style 3 arrived in 2016" in block and "Nothing was changed." in block
        assert "RAISERROR(N'%s', 16, 1, @msg);" in block and "SET NOEXEC ON;" in block
        first_use = b.find("CAST(@style AS nvarchar(5))")
        assert first_use == -1 or refuse < first_use, name


# -- 7. partition move: log room, running backup, step 1's message after its checks ----------------


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_partition_move_checks_the_log_room_before_the_transaction(name: str, text: str) -> None:
    """The header says the log needs room for the partition; nothing checked it. Now, in the
    move's batch, after the already-done exit and before the transaction: the partition's used
    pages against the log's free space plus growth room (FULL / BULK_LOGGED only)."""
    b = move_batch(text)
    need = at(
        b, "SET @log_move_mb = CEILING((SELECT COALESCE(SUM(au.used_pages), 0) / 128 FROM sys.partitions AS p"
    )
    assert "WHERE p.object_id = @object_id AND p.partition_number = @n) * 1.10);" in b[need:]
    stop = at(b, "IF @recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb")
    assert at(b, "IF @current_fg = @target_fg") < need < stop < at(b, "BEGIN TRANSACTION")


def test_filegroup_creation_checks_running_backups_and_says_creating_after_its_checks() -> None:
    """ADD FILE waits for a running BACKUP, then one of them fails: the checks batch of step 1
    stops on one (VIEW SERVER STATE first, so the check cannot pass blind), and "creating
    filegroup" is printed only once every check passed."""
    text = dict(PARTITION_SCRIPTS)["tsql_partition.forward.sql"]
    batches = tsql_batches(text)
    # the pre-check batch (a check-only run runs it): permission, running backups, free space
    (checks,) = [b for b in batches if "step 1: already done: filegroup" in b]
    perms = at(checks, "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0")
    backup = at(checks, "WHERE UPPER(r.command) LIKE N'BACKUP%'")
    space = at(checks, "SET @need_mb = CEILING(")
    assert at(checks, "already done: filegroup") < perms < backup < space
    assert "ADD FILEGROUP" not in checks and "step 1: creating" not in checks
    # right before ADD FILEGROUP the backup check runs again, then "creating" is said
    (step1,) = [b for b in batches if "ADD FILEGROUP" in b]
    perms = at(step1, "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0")
    backup = at(step1, "WHERE UPPER(r.command) LIKE N'BACKUP%'")
    creating = at(step1, "step 1: creating filegroup")
    assert perms < backup < creating < at(step1, "ADD FILEGROUP")


def test_filegroup_removal_stops_while_a_backup_runs_and_says_how_to_finish() -> None:
    """H7 #2: the rollback removed the filegroup it created without looking for a running BACKUP
    (REMOVE FILE waits for it, then one of them fails) or a database snapshot. Now the removal's
    batch checks VIEW SERVER STATE, running BACKUP/DBCC and snapshots after the already-done and
    still-used exits (a re-run that has nothing to remove checks nothing) and before REMOVE FILE;
    a failed removal names the file and filegroup, the likely cause of error 5042 (deferred drop
    after the commit; H5: not a missing log backup) and the re-run."""
    text = dict(PARTITION_SCRIPTS)["tsql_partition.rollback.sql"]
    (b,) = [b for b in tsql_batches(text) if "REMOVE FILEGROUP" in b]
    gone = at(b, "already done: filegroup")
    keep = at(b, "keeping filegroup")
    perms = at(b, "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0")
    backup = at(b, "WHERE UPPER(r.command) LIKE N'BACKUP%'")
    snapshot = at(b, "WHERE s.source_database_id = DB_ID(")
    remove = at(b, "ALTER DATABASE [Sales] REMOVE FILE ")
    freeing = at(b, "AND type = 0)")
    assert gone < keep < freeing < perms < backup < snapshot < remove < at(b, "REMOVE FILEGROUP")
    assert b[gone:keep].count("RETURN;") == 1 and b[keep:freeing].count("RETURN;") == 1
    catch = b[at(b, "BEGIN CATCH") :]
    for words in ("error 5042", "deferred drop", "wait a minute", "run the script again", "SET NOEXEC ON;"):
        assert words.lower() in catch.lower(), words
    assert "take a log backup" not in catch.lower()
    assert "Nothing was removed." in b[backup:snapshot]


def test_filegroup_removal_waits_for_deferred_drop_instead_of_keeping_the_filegroup() -> None:
    """sys.allocation_units lists allocation units marked for deferred drop (type 0, DROPPED) with
    their filegroup: after the move back commits, a large partition's old pages are freed in the
    background. The rollback used to count them as "other data", say "keeping filegroup" and
    finish, leaving the filegroup for good. Now only live units (type <> 0) keep it; dropped ones
    stop the script before anything is removed, saying to run it again in a few minutes."""
    text = dict(PARTITION_SCRIPTS)["tsql_partition.rollback.sql"]
    (b,) = [b for b in tsql_batches(text) if "REMOVE FILEGROUP" in b]
    keep_if = b[: at(b, "keeping filegroup")]
    used = keep_if[keep_if.rindex("IF EXISTS") :]
    assert (
        "FROM sys.allocation_units WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc') AND type <> 0)"
        in used
    )
    assert "type = 0" not in used
    stop = b[at(b, "AND type = 0)") : at(b, "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0")]
    assert (
        "IF EXISTS (SELECT 1 FROM sys.allocation_units WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc') AND type = 0)"
        in b
    )
    for words in (
        "deferred drop",
        "Nothing was removed",
        "Run the script again in a few minutes",
        "RAISERROR(N'%s', 16, 1, @msg);",
        "SET NOEXEC ON;",
    ):
        assert words in stop, words
    assert at(stop, "RAISERROR(N'%s', 16, 1, @msg);") < at(stop, "SET NOEXEC ON;")


@pytest.mark.parametrize(("name", "text"), PARTITION_SCRIPTS, ids=[n for n, _ in PARTITION_SCRIPTS])
def test_log_room_counts_each_volume_once_and_sets_aside_the_filegroup_growth(name: str, text: str) -> None:
    """H7 #3, the partition move: what the target filegroup's files must grow by (the partition
    beyond their free space) lands on their volume, which the log's growth room must not count
    again; log files are grouped per volume."""
    b = move_batch(text)
    capacity = at(
        b,
        "SELECT @fg_free_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128,",
    )
    reserve = at(
        b,
        "SET @log_reserved_mb = CEILING((CASE WHEN @need_mb > @fg_free_mb THEN @need_mb - @fg_free_mb ELSE 0 END) * 1.10);",
    )
    volume = at(b, "WHERE df.data_space_id = FILEGROUP_ID(@target_fg) ORDER BY df.file_id;")
    grow = at(b, "SELECT @log_grow_mb = ")
    assert capacity < reserve < volume < grow < at(b, "BEGIN TRANSACTION")
    assert "WHERE df.type = 1 GROUP BY vs.volume_id) AS v;" in b[grow:]


# -- 5. the session's SET options (issue #30, N6) -------------------------------------------------


def test_staging_table_is_created_under_the_tables_own_quoted_identifier_setting() -> None:
    """N6: both tables of a switch must have the same ANSI_NULLS and QUOTED IDENTIFIER settings
    (Microsoft Learn, "Transferring Data Efficiently by Using Partition Switching", table and index
    structure requirements). The session runs with QUOTED_IDENTIFIER ON (the gate sets it; sqlcmd
    connects with it OFF), so a staging table made by SELECT INTO got ON, and a table created with
    it OFF (OBJECTPROPERTY IsQuotedIdentOn = 0, "table ... quoted identifier setting for the object
    is ON") could never be switched back. The SELECT INTO now runs in a dynamic batch that sets the
    table's own setting first, inside the move's transaction, before the switch-out."""
    for name, text in PARTITION_SCRIPTS:
        b = move_batch(text)
        create = at(b, "N'SELECT TOP (0) * INTO ' + @qstage")
        qi = at(
            b,
            "CASE WHEN OBJECTPROPERTY(@object_id, 'IsQuotedIdentOn') = 0 THEN N'SET QUOTED_IDENTIFIER OFF; '",
        )
        assert at(b, "BEGIN TRANSACTION;") < qi < create < at(b, "SWITCH PARTITION"), name
        # the same dynamic batch: the SET and the SELECT INTO are one @sql, executed once
        assert "ELSE N'' END\n        + N'SELECT TOP (0) * INTO '" in b, name


def test_every_script_sets_the_options_indexed_views_and_filtered_indexes_require() -> None:
    """N6: indexed views, indexes on computed columns and filtered indexes need ANSI_NULLS,
    ANSI_PADDING, ANSI_WARNINGS, ARITHABORT, CONCAT_NULL_YIELDS_NULL and QUOTED_IDENTIFIER ON and
    NUMERIC_ROUNDABORT OFF whenever their data is changed or they are built (Microsoft Learn, "SET
    options that affect results"; CREATE INDEX, "Required SET options for filtered indexes"; error
    1934 otherwise). sqlcmd connects with QUOTED_IDENTIFIER OFF ("sqlcmd utility", -I), so every
    script sets the seven in its gate, before its first pre-check."""
    wanted = [
        "SET ANSI_NULLS ON;",
        "SET ANSI_PADDING ON;",
        "SET ANSI_WARNINGS ON;",
        "SET ARITHABORT ON;",
        "SET CONCAT_NULL_YIELDS_NULL ON;",
        "SET QUOTED_IDENTIFIER ON;",
        "SET NUMERIC_ROUNDABORT OFF;",
    ]
    for case in CASES:
        if case.dialect != "tsql":
            continue
        for name, text in render_case(case).items():
            gate = tsql_batches(text)[1]
            assert "$(TierwiseSqlcmdMode)" in gate, name
            lines = [ln.strip() for ln in gate.split("\n")]
            assert all(w in lines for w in wanted), name


def test_log_room_adds_the_log_written_while_the_transaction_is_open() -> None:
    """N9 (issue #30): the move is one transaction, so the log stays active from the switch-out to
    the commit and the database's other work fills it meanwhile, log backups or not. The check
    adds its measured log rate times the move's estimated length (the rebuild at 100 MB/s plus
    the 5 minutes the switch-out may wait for its lock) to the partition's own log."""
    for name, text in PARTITION_SCRIPTS:
        for b in [x for x in tsql_batches(text) if "sys.dm_db_log_space_usage" in x]:
            assert at(b, "SELECT @log_flushed0") < at(b, "WAITFOR DELAY") < at(b, "SELECT @log_flushed1"), (
                name
            )
            assert "SET @log_run_s = CEILING(@log_move_mb / 100.0) + 300;" in b, name
            assert at(b, "SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);") < at(
                b, "@log_free_mb + @log_grow_mb < @log_need_mb"
            ), name
