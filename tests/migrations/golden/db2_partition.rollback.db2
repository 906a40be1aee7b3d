--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: ROLLBACK
-- ================================================================================================
-- Moves:      data partition P2024Q1 of "SALES"."ORDERS", from table space "TS_ORDERS_2024_FC" to "TS_ORDERS_2024"
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier fc: storage group "SG_FC" (/db2/fc1, /db2/fc2)
-- To:         tier flash: storage group "SG_HOT"
-- Undoes:     the forward move of SALESDB/partition/SALES.ORDERS/1 (tier flash -> fc)
-- Object:     partition SALES.ORDERS P2024Q1 (key SALESDB/partition/SALES.ORDERS/1)
-- Why:        sequential_read (TW601)
--             - tablespace TS_ORDERS_2024: TW601 sequential reads (57 % of physical reads are prefetch): disks stream scans well; flash adds little
--             - 0.4 object physical reads per second, 3 % read-miss, heat 16,343.0 per GB-hour (0.86x the database average)
--             - moves with tablespace TS_ORDERS_2024 (recommended: fc)
-- Predicted:  I/O wait n/a now -> 0.0 ms/s on tier fc
-- Size:       0.1 GB
-- Method:
--   table space TS_ORDERS_2024_FC is shared with other partitions: detach / copy / attach (online for the
--   other partitions; this partition's rows are invisible in the table from the DETACH until the ATTACH
--   and SET INTEGRITY complete). Everything that can be built and checked comes before the DETACH:
--     1-3. when the forward script stopped after its DETACH: its detached table attached back with the
--        original range, SET INTEGRITY, its copy table dropped (nothing to do otherwise)
--     4. storage group "SG_HOT", created if missing
--     5. table space "TS_ORDERS_2024" on it, created if missing like the source
--     6. CREATE TABLE "SALES"."TW_1287ED701E8C_COPY" LIKE "SALES"."ORDERS" INCLUDING COLUMN DEFAULTS IN the target, empty,
--        with the table's compression and append mode; then checks: the copy can be attached (columns and
--        table options match), the active log holds the copy, the target paths hold it uncompressed
--     7. ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_1287ED701E8C_DETACHED",
--        then a wait of up to 10 minutes for the asynchronous partition detach task to finish
--     8. INSERT INTO the copy SELECT * FROM the detached table (one logged statement)
--     9. ALTER TABLE ... ATTACH PARTITION with the same bounds FROM the copy, when it holds every row
--     10. repair: if step 8 or 9 failed, the detached table is attached back with the original range
--     11. SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED
--     12. post-checks (partition in the target table space, STATUS empty, as many rows as the detached
--        table), then DROP the detached table
--   If the script stops after step 7 some other way, run it again (it carries on), or re-attach by hand:
--     ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM ('2024-01-01') INCLUSIVE ENDING AT ('2024-04-01') EXCLUSIVE FROM "SALES"."TW_1287ED701E8C_DETACHED"@
--     SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED@
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs DBADM granted WITH DATAACCESS, the default (DETACH / ATTACH, CREATE TABLE, INSERT, DROP TABLE, SET INTEGRITY, the row counts), plus SYSCTRL or SYSADM when the target table space or storage group must be created (CREATE TABLESPACE; a new storage group), EXECUTE on the SYSIBMADM.DBMS_PIPE module (the wait after the DETACH; DATAACCESS includes it), SELECT on SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION and SYSIBMADM.DBCFG (the log check; PUBLIC in a non-restrictive database), and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS, ADMIN_GET_TAB_INFO (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - The copy is one logged INSERT: the active log must hold about 2x the partition's uncompressed size (checked before the DETACH).
--   - Refused before anything changes: LOB, XML, LONG, identity or generated columns; dependent MQTs or staging tables; partitions being attached or detached; a copy table that does not match the table; a row-compressed table without statistics (RUNSTATS first: its uncompressed size is unknown).
-- Operations:
--   Duration:    the asynchronous detach usually ends within seconds to a few minutes once no query holds the partition (the script waits up to 10 min), then under a minute for 0.1 GB at ~50-150 MB/s (one logged INSERT ... SELECT; speeds vary), then SET INTEGRITY (index maintenance of the attached rows, about as long again with non-partitioned indexes)
--   Log volume:  about the partition's size (0.1 GB) in one transaction; the script checks before the DETACH that the active log has 2x its uncompressed size free (MON_TRANSACTION_LOG_UTILIZATION, MAX_LOG), since a full log fails the INSERT with SQL0964C
--   Blocking:    DETACH waits for queries that hold locks on the partition (dynamic UR queries excepted; at most the lock timeout, 60 s) and invalidates static packages on the table; an asynchronous task then finishes the detach (the script waits for it). The partition's rows are invisible in the table from the DETACH until the ATTACH and SET INTEGRITY complete, that is for the whole Duration above (longer if the script stops and is run again later; meanwhile they are in the detached table); the other partitions stay readable and writable (SET INTEGRITY ... ALLOW WRITE ACCESS)
--   Backups:     the script stops before any change while a BACKUP of the database runs (run it again afterwards); keep it out of the backup window (the copy's log volume goes into the next online backup's log range); take a new full database backup afterwards, when a table space was created
--   To abort:    interrupt the CLP (Ctrl-C) or FORCE APPLICATION: the running statement rolls back; the script is safe to run again, every step checks first
--   To recover:  a failed copy or attach is repaired by the script itself (the detached table is attached back with the original range, nothing is lost) and the script stops; otherwise run it again: it carries on from the step it stopped at; or run the rollback script, whose step 1 attaches the detached table back (the detached table keeps every row until the last step)
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 a8718f93eaf09bac18de5e02faf744cade3af1f36c5b5c40961a8a625cb55b93 (the forward plan; the rollback shows the same)
-- Run:
--   db2 -td@ -vsf <this file>   (as the instance owner; it connects to SALESDB itself)
--   A statement waits at most 60 s for a lock (SET CURRENT LOCK TIMEOUT); a lock timeout (SQL0911N reason 68) rolls back its unit of work and stops the script: run it again in a quieter moment.
--   Read docs/running-scripts.md first.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
-- Checks (a failing check stops the script with its number):
--   check 1: connected to database SALESDB
--   check 2: instance db2inst1
--   check 3: not a pureScale instance (SYSIBMADM.DB2_CF lists no cluster caching facility): unsupported here
--   check 4: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
--   check 5: a full database backup of SALESDB (not a table space backup, not to /dev/null or NUL) finished successfully in the last 24 hours
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): DETACH / ATTACH PARTITION, CREATE TABLESPACE and CREATE TABLE are not among the operations IBM lists as able to run beside an online backup, and the logged copy of the partition would land in the backup's log range (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024_FC or TS_ORDERS_2024, or detached by an earlier run (of this script or of the forward script)
--   check 8: the forward script's detached table TW_95F66C2B39BC_DETACHED, if it is there, is a regular table (its asynchronous detach has finished): else run this script again in a few minutes
--   check 9: the forward script did not stop after attaching its copy: while its detached table TW_95F66C2B39BC_DETACHED is there and the partition is in the table, only the forward script can finish (its row check, then the drop): run the forward script again, then this one
--   check 10: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
--   check 11: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
--   check 12: no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') depends on SALES.ORDERS (they would become detached dependents)
--   check 13: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
--   check 14: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024_FC (page size, extent size, type)
--   check 15: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
--   check 16: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
--   check 17: storage group SG_HOT exists
--   check 18: storage group SG_HOT has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 19: the copy table TW_1287ED701E8C_COPY can be attached as partition P2024Q1: the same columns as SALES.ORDERS in the same order (SYSCAT.COLUMNS: name, type, length, scale, nullability, code page, default, hidden, compress), the same row compression, value compression and append mode (SYSCAT.TABLES), not partitioned, in table space TS_ORDERS_2024. Else ATTACH would fail after the DETACH (SQL20408N / SQL20307N): nothing was detached; drop TW_1287ED701E8C_COPY and review
--   check 20: SALES.ORDERS, if row-compressed, has statistics (SYSCAT.TABLES.PCTPAGESSAVED >= 0): the log and room checks need its uncompressed size (RUNSTATS ON TABLE first)
--   check 21: the active log can hold the copy: 2x the partition's uncompressed data plus its indexes (10 % headroom) is no more than the log space available (SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION.TOTAL_LOG_AVAILABLE_KB, null with infinite logging) and no more than MAX_LOG's share of the primary log (LOGPRIMARY x LOGFILSIZ), the most one transaction may use
--   check 22: the paths of SG_HOT have room for the copy uncompressed (10 % headroom; storage is striped over the paths; sizes from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects, the data times 100 / (100 - PCTPAGESSAVED) when the table is row-compressed)
--   check 23: the detach of P2024Q1 has finished within 10 minutes: the detached table TW_1287ED701E8C_DETACHED is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). Else: detach still in progress: run the script again; the rows stay in SALES.TW_1287ED701E8C_DETACHED until it finishes
--   check 24: post-check: partition P2024Q1 is in table space TS_ORDERS_2024 (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS (else: when the repair step attached the detached table back, nothing is lost: read the messages above, fix the cause, run the script again)
--   check 25: before the drop: the attached partition P2024Q1 holds as many rows as the detached table TW_1287ED701E8C_DETACHED (rows with the partitioning key in the partition's range; else TW_1287ED701E8C_DETACHED is kept)
UPDATE COMMAND OPTIONS USING C ON S ON@
CONNECT TO SALESDB@
SET SERVEROUTPUT ON@
SET CURRENT LOCK TIMEOUT = 60@
-- check 1: connected to database SALESDB
SELECT RAISE_ERROR('75001', 'tierwise check 1 failed: not connected to SALESDB') FROM SYSIBM.SYSDUMMY1 WHERE UPPER(CURRENT SERVER) <> UPPER('SALESDB') FETCH FIRST 1 ROW ONLY@
-- check 2: instance db2inst1
SELECT RAISE_ERROR('75001', 'tierwise check 2 failed: not instance db2inst1') FROM SYSIBMADM.ENV_INST_INFO WHERE UPPER(INST_NAME) <> UPPER('db2inst1') FETCH FIRST 1 ROW ONLY@
-- check 3: not a pureScale instance (SYSIBMADM.DB2_CF lists no cluster caching facility): unsupported here
SELECT RAISE_ERROR('75001', 'tierwise check 3 failed: pureScale instance: unsupported here') FROM SYSIBMADM.DB2_CF FETCH FIRST 1 ROW ONLY@
-- check 4: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
SELECT RAISE_ERROR('75001', 'tierwise check 4 failed: HADR database: unsupported here, review') FROM TABLE(MON_GET_HADR(NULL)) AS H WHERE H.HADR_ROLE <> 'STANDARD' FETCH FIRST 1 ROW ONLY@
-- check 5: a full database backup of SALESDB (not a table space backup, not to /dev/null or NUL) finished successfully in the last 24 hours
SELECT RAISE_ERROR('75001', 'tierwise check 5 failed: no full database backup in the last 24 hours') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSIBMADM.DB_HISTORY WHERE OPERATION = 'B' AND OBJECTTYPE = 'D' AND OPERATIONTYPE IN ('F', 'N') AND COALESCE(SQLCODE, 0) >= 0 AND COALESCE(LOCATION, '') NOT LIKE '/dev/null%' AND UPPER(COALESCE(LOCATION, '')) NOT IN ('NUL', 'NUL:') AND END_TIME >= VARCHAR_FORMAT(CURRENT TIMESTAMP - 24 HOURS, 'YYYYMMDDHH24MISS')) FETCH FIRST 1 ROW ONLY@
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): DETACH / ATTACH PARTITION, CREATE TABLESPACE and CREATE TABLE are not among the operations IBM lists as able to run beside an online backup, and the logged copy of the partition would land in the backup's log range (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a BACKUP is running: wait, run again') FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP') FETCH FIRST 1 ROW ONLY@
-- check 7: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024_FC or TS_ORDERS_2024, or detached by an earlier run (of this script or of the forward script)
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed (see the script header)') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID IN ((SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC'), (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024'))) AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') FETCH FIRST 1 ROW ONLY@
-- check 8: the forward script's detached table TW_95F66C2B39BC_DETACHED, if it is there, is a regular table (its asynchronous detach has finished): else run this script again in a few minutes
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: forward detach still in progress: run again') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED' AND TYPE = 'T') FETCH FIRST 1 ROW ONLY@
-- check 9: the forward script did not stop after attaching its copy: while its detached table TW_95F66C2B39BC_DETACHED is there and the partition is in the table, only the forward script can finish (its row check, then the drop): run the forward script again, then this one
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: forward run unfinished: run it again first') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') FETCH FIRST 1 ROW ONLY@
-- check 10: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: partition range differs from the plan') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND (LOWVALUE <> '''2024-01-01''' OR HIGHVALUE <> '''2024-04-01''' OR LOWINCLUSIVE <> 'Y' OR HIGHINCLUSIVE <> 'N') FETCH FIRST 1 ROW ONLY@
-- check 11: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed (see the script header)') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME <> 'P2024Q1' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 12: no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') depends on SALES.ORDERS (they would become detached dependents)
SELECT RAISE_ERROR('75001', 'tierwise check 12 failed (see the script header)') FROM SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME WHERE D.BSCHEMA = 'SALES' AND D.BNAME = 'ORDERS' AND D.BTYPE = 'T' AND (T.TYPE = 'S' OR SUBSTR(T.PROPERTY, 2, 1) = 'Y') FETCH FIRST 1 ROW ONLY@
-- check 13: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed (see the script header)') FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND (TYPENAME IN ('BLOB', 'CLOB', 'DBCLOB', 'XML', 'LONG VARCHAR', 'LONG VARGRAPHIC') OR IDENTITY = 'Y' OR GENERATED <> ' ') FETCH FIRST 1 ROW ONLY@
-- check 14: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024_FC (page size, extent size, type)
SELECT RAISE_ERROR('75001', 'tierwise check 14 failed: TS_ORDERS_2024 does not match') FROM SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = 'TS_ORDERS_2024_FC' WHERE N.TBSPACE = 'TS_ORDERS_2024' AND (COALESCE(N.SGNAME, '') <> 'SG_HOT' OR N.PAGESIZE <> O.PAGESIZE OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE) FETCH FIRST 1 ROW ONLY@
-- check 15: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 15 failed (see the script header)') FROM SYSCAT.REFERENCES WHERE REFTABSCHEMA = 'SALES' AND REFTABNAME = 'ORDERS' FETCH FIRST 1 ROW ONLY@
-- check 16: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
SELECT RAISE_ERROR('75001', 'tierwise check 16 failed: partitioning key has 2+ columns: unsupported') FROM SYSIBM.SYSDUMMY1 WHERE (SELECT COUNT(*) FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') <> 1 FETCH FIRST 1 ROW ONLY@
-- step 1: repair an interrupted forward run: its detached table TW_95F66C2B39BC_DETACHED back as partition P2024Q1 with the original range (nothing to do when the forward run did not stop after its DETACH)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED' AND TYPE = 'T') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: the forward run stopped after its DETACH: attaching "TW_95F66C2B39BC_DETACHED" back as partition "P2024Q1"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM (''2024-01-01'') INCLUSIVE ENDING AT (''2024-04-01'') EXCLUSIVE FROM "SALES"."TW_95F66C2B39BC_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: nothing to repair');
  END IF;
END@
-- step 2: SET INTEGRITY after the repair (nothing to do without one)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS = 'C') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: SET INTEGRITY for "SALES"."ORDERS"');
    EXECUTE IMMEDIATE 'SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: already done: the table is not in set integrity pending state');
  END IF;
END@
-- step 3: drop the forward run's copy table TW_95F66C2B39BC_COPY if it is left (its rows are a copy of the partition's)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_COPY') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: dropping the copy table of the forward run, "TW_95F66C2B39BC_COPY"');
    EXECUTE IMMEDIATE 'DROP TABLE "SALES"."TW_95F66C2B39BC_COPY"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: nothing to drop');
  END IF;
END@
-- check 17: storage group SG_HOT exists
SELECT RAISE_ERROR('75001', 'tierwise check 17 failed: storage group SG_HOT missing') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT') FETCH FIRST 1 ROW ONLY@
-- step 4: storage group SG_HOT, not created here (no storage paths given): it exists (checked)
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 4: already done: storage group "SG_HOT" exists');
END@
-- check 18: storage group SG_HOT has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
SELECT RAISE_ERROR('75001', 'tierwise check 18 failed: no usable storage path in SG_HOT') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_HOT', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL) FETCH FIRST 1 ROW ONLY@
-- step 5: table space TS_ORDERS_2024 in SG_HOT, created only if missing, like TS_ORDERS_2024_FC
BEGIN
  DECLARE v_page INTEGER;
  DECLARE v_extent INTEGER;
  DECLARE v_type CHAR(1);
  DECLARE v_bp VARCHAR(128);
  DECLARE v_sql VARCHAR(1000);
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 5: already done: table space "TS_ORDERS_2024" exists');
  ELSE
    SELECT T.PAGESIZE, T.EXTENTSIZE, T.DATATYPE, B.BPNAME INTO v_page, v_extent, v_type, v_bp FROM SYSCAT.TABLESPACES AS T JOIN SYSCAT.BUFFERPOOLS AS B ON B.BUFFERPOOLID = T.BUFFERPOOLID WHERE T.TBSPACE = 'TS_ORDERS_2024_FC';
    SET v_sql = 'CREATE ' || CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END || ' TABLESPACE "TS_ORDERS_2024" PAGESIZE ' || VARCHAR(v_page) || ' MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG_HOT" EXTENTSIZE ' || VARCHAR(v_extent) || ' BUFFERPOOL "' || REPLACE(v_bp, '"', '""') || '"';
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 5: creating table space "TS_ORDERS_2024" in storage group "SG_HOT"');
    EXECUTE IMMEDIATE v_sql;
  END IF;
END@
-- step 6: the copy table TW_1287ED701E8C_COPY in TS_ORDERS_2024, empty, created only if missing, like "SALES"."ORDERS" with its compression and append mode
BEGIN
  DECLARE v_comp CHAR(1);
  DECLARE v_mode CHAR(1);
  DECLARE v_append CHAR(1);
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 6: already done: partition "P2024Q1" is in "TS_ORDERS_2024"');
  ELSEIF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 6: already done: "TW_1287ED701E8C_COPY" exists');
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 6: creating "TW_1287ED701E8C_COPY" like "SALES"."ORDERS" in "TS_ORDERS_2024"');
    EXECUTE IMMEDIATE 'CREATE TABLE "SALES"."TW_1287ED701E8C_COPY" LIKE "SALES"."ORDERS" INCLUDING COLUMN DEFAULTS IN "TS_ORDERS_2024"';
    SELECT COMPRESSION, ROWCOMPMODE, APPEND_MODE INTO v_comp, v_mode, v_append FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS';
    IF v_mode IN ('S', 'A') THEN
      EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."TW_1287ED701E8C_COPY" COMPRESS YES ' || CASE WHEN v_mode = 'A' THEN 'ADAPTIVE' ELSE 'STATIC' END;
    END IF;
    IF v_comp IN ('V', 'B') THEN
      EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."TW_1287ED701E8C_COPY" ACTIVATE VALUE COMPRESSION';
    END IF;
    IF v_append = 'Y' THEN
      EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."TW_1287ED701E8C_COPY" APPEND ON';
    END IF;
  END IF;
END@
-- check 19: the copy table TW_1287ED701E8C_COPY can be attached as partition P2024Q1: the same columns as SALES.ORDERS in the same order (SYSCAT.COLUMNS: name, type, length, scale, nullability, code page, default, hidden, compress), the same row compression, value compression and append mode (SYSCAT.TABLES), not partitioned, in table space TS_ORDERS_2024. Else ATTACH would fail after the DETACH (SQL20408N / SQL20307N): nothing was detached; drop TW_1287ED701E8C_COPY and review
SELECT RAISE_ERROR('75001', 'tierwise check 19 failed: the copy table cannot be attached: review') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')) AND EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') AND (EXISTS (SELECT COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, CODEPAGE, COALESCE("DEFAULT", ''), HIDDEN, COMPRESS FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' EXCEPT SELECT COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, CODEPAGE, COALESCE("DEFAULT", ''), HIDDEN, COMPRESS FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') OR EXISTS (SELECT COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, CODEPAGE, COALESCE("DEFAULT", ''), HIDDEN, COMPRESS FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY' EXCEPT SELECT COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, CODEPAGE, COALESCE("DEFAULT", ''), HIDDEN, COMPRESS FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') OR EXISTS (SELECT 1 FROM SYSCAT.TABLES AS A JOIN SYSCAT.TABLES AS B ON B.TABSCHEMA = A.TABSCHEMA WHERE A.TABSCHEMA = 'SALES' AND A.TABNAME = 'ORDERS' AND B.TABNAME = 'TW_1287ED701E8C_COPY' AND (A.COMPRESSION <> B.COMPRESSION OR A.ROWCOMPMODE <> B.ROWCOMPMODE OR A.APPEND_MODE <> B.APPEND_MODE OR COALESCE(B.TBSPACE, '') <> 'TS_ORDERS_2024')) OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY')) FETCH FIRST 1 ROW ONLY@
-- check 20: SALES.ORDERS, if row-compressed, has statistics (SYSCAT.TABLES.PCTPAGESSAVED >= 0): the log and room checks need its uncompressed size (RUNSTATS ON TABLE first)
SELECT RAISE_ERROR('75001', 'tierwise check 20 failed (see the script header)') FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND ROWCOMPMODE IN ('S', 'A') AND PCTPAGESSAVED < 0 AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')) FETCH FIRST 1 ROW ONLY@
-- check 21: the active log can hold the copy: 2x the partition's uncompressed data plus its indexes (10 % headroom) is no more than the log space available (SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION.TOTAL_LOG_AVAILABLE_KB, null with infinite logging) and no more than MAX_LOG's share of the primary log (LOGPRIMARY x LOGFILSIZ), the most one transaction may use
SELECT RAISE_ERROR('75001', 'tierwise check 21 failed: the active log cannot hold the copy') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')) AND (COALESCE((SELECT MIN(L.TOTAL_LOG_AVAILABLE_KB) FROM SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION AS L), (2 * ((SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I)) * (SELECT CASE WHEN T.ROWCOMPMODE IN ('S', 'A') AND T.PCTPAGESSAVED BETWEEN 0 AND 99 THEN 100.0 / (100 - T.PCTPAGESSAVED) ELSE 1 END FROM SYSCAT.TABLES AS T WHERE T.TABSCHEMA = 'SALES' AND T.TABNAME = 'ORDERS') + ((SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I))) * 1.10) < (2 * ((SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I)) * (SELECT CASE WHEN T.ROWCOMPMODE IN ('S', 'A') AND T.PCTPAGESSAVED BETWEEN 0 AND 99 THEN 100.0 / (100 - T.PCTPAGESSAVED) ELSE 1 END FROM SYSCAT.TABLES AS T WHERE T.TABSCHEMA = 'SALES' AND T.TABNAME = 'ORDERS') + ((SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I))) * 1.10 OR ((SELECT MAX(BIGINT(VALUE)) FROM SYSIBMADM.DBCFG WHERE NAME = 'max_log') > 0 AND (SELECT MAX(BIGINT(VALUE)) FROM SYSIBMADM.DBCFG WHERE NAME = 'logprimary') * (SELECT MAX(BIGINT(VALUE)) FROM SYSIBMADM.DBCFG WHERE NAME = 'logfilsiz') * 4 * (SELECT MAX(BIGINT(VALUE)) FROM SYSIBMADM.DBCFG WHERE NAME = 'max_log') / 100 < (2 * ((SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I)) * (SELECT CASE WHEN T.ROWCOMPMODE IN ('S', 'A') AND T.PCTPAGESSAVED BETWEEN 0 AND 99 THEN 100.0 / (100 - T.PCTPAGESSAVED) ELSE 1 END FROM SYSCAT.TABLES AS T WHERE T.TABSCHEMA = 'SALES' AND T.TABNAME = 'ORDERS') + ((SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I))) * 1.10)) FETCH FIRST 1 ROW ONLY@
-- check 22: the paths of SG_HOT have room for the copy uncompressed (10 % headroom; storage is striped over the paths; sizes from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects, the data times 100 / (100 - PCTPAGESSAVED) when the table is row-compressed)
SELECT RAISE_ERROR('75001', 'tierwise check 22 failed: not enough free space in SG_HOT') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') AND COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_HOT', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'), 0) < (((SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I)) * (SELECT CASE WHEN T.ROWCOMPMODE IN ('S', 'A') AND T.PCTPAGESSAVED BETWEEN 0 AND 99 THEN 100.0 / (100 - T.PCTPAGESSAVED) ELSE 1 END FROM SYSCAT.TABLES AS T WHERE T.TABSCHEMA = 'SALES' AND T.TABNAME = 'ORDERS') + ((SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_1287ED701E8C_DETACHED')) AS I))) * 1024 * 1.10 FETCH FIRST 1 ROW ONLY@
-- step 7: detach partition P2024Q1 into TW_1287ED701E8C_DETACHED (skipped when already moved or detached)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 7: already done: partition "P2024Q1" is in "TS_ORDERS_2024"; nothing to do');
  ELSEIF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 7: detaching partition "P2024Q1"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 7: already done: the partition is detached or attached from the copy');
  END IF;
END@
-- step 7: wait up to 10 minutes for the asynchronous partition detach task (checked every 10 seconds; DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to is the sleep)
-- check 23: the detach of P2024Q1 has finished within 10 minutes: the detached table TW_1287ED701E8C_DETACHED is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). Else: detach still in progress: run the script again; the rows stay in SALES.TW_1287ED701E8C_DETACHED until it finishes
BEGIN
  DECLARE v_waited INTEGER DEFAULT 0;
  DECLARE v_status INTEGER;
  WHILE v_waited < 600 AND (EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE <> 'T') OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS IN ('D', 'L'))) DO
    SET v_status = DBMS_PIPE.RECEIVE_MESSAGE('TIERWISE_WAIT_TW_1287ED701E8C_DETACHED', 10);
    SET v_waited = v_waited + 10;
  END WHILE;
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE <> 'T') OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS IN ('D', 'L')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'detach still in progress: run the script again; the rows stay in "SALES"."TW_1287ED701E8C_DETACHED" until it finishes');
    SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 23 failed: detach still in progress: run again';
  END IF;
END@
-- step 8 and step 9 with stop-on-error off: if either fails, the CLP carries on to the repair (step 10), which puts the original range back
UPDATE COMMAND OPTIONS USING S OFF@
-- step 8: copy the detached rows into TW_1287ED701E8C_COPY in TS_ORDERS_2024 (again from the start after a stop)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE = 'T') AND EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 8: copying the rows into "TW_1287ED701E8C_COPY"');
    EXECUTE IMMEDIATE 'DELETE FROM "SALES"."TW_1287ED701E8C_COPY"';
    EXECUTE IMMEDIATE 'INSERT INTO "SALES"."TW_1287ED701E8C_COPY" SELECT * FROM "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 8: nothing to copy');
  END IF;
END@
-- step 9: attach TW_1287ED701E8C_COPY as partition P2024Q1 with its original range, when it holds as many rows as TW_1287ED701E8C_DETACHED
BEGIN
  DECLARE v_sql VARCHAR(8000);
  DECLARE v_rows BIGINT DEFAULT 0;
  DECLARE v_other BIGINT DEFAULT 0;
  DECLARE s1 STATEMENT;
  DECLARE c1 CURSOR FOR s1;
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE = 'T') AND EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_1287ED701E8C_COPY"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_rows;
    CLOSE c1;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_1287ED701E8C_DETACHED"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_other;
    CLOSE c1;
    IF v_rows = v_other THEN
      CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 9: attaching partition "P2024Q1" from "TW_1287ED701E8C_COPY"');
      EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM (''2024-01-01'') INCLUSIVE ENDING AT (''2024-04-01'') EXCLUSIVE FROM "SALES"."TW_1287ED701E8C_COPY"';
    ELSE
      CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 9: not attached: "TW_1287ED701E8C_COPY" does not hold every row of "TW_1287ED701E8C_DETACHED"');
    END IF;
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 9: nothing to attach');
  END IF;
END@
UPDATE COMMAND OPTIONS USING S ON@
-- step 10: repair: when the partition is not in the table (step 8 or 9 failed), attach TW_1287ED701E8C_DETACHED back with the original range: the rows are where they were, and the post-check below stops the script
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE = 'T') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 10: the copy or its attach failed (see above): attaching "TW_1287ED701E8C_DETACHED" back as partition "P2024Q1"; nothing is lost');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM (''2024-01-01'') INCLUSIVE ENDING AT (''2024-04-01'') EXCLUSIVE FROM "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 10: nothing to repair');
  END IF;
END@
-- step 11: SET INTEGRITY for SALES.ORDERS (validates the attached range, maintains indexes)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS = 'C') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 11: SET INTEGRITY for "SALES"."ORDERS"');
    EXECUTE IMMEDIATE 'SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 11: already done: the table is not in set integrity pending state');
  END IF;
END@
-- check 24: post-check: partition P2024Q1 is in table space TS_ORDERS_2024 (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS (else: when the repair step attached the detached table back, nothing is lost: read the messages above, fix the cause, run the script again)
SELECT RAISE_ERROR('75001', 'tierwise check 24 failed: post-check: not in TS_ORDERS_2024') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') FETCH FIRST 1 ROW ONLY@
-- check 25: before the drop: the attached partition P2024Q1 holds as many rows as the detached table TW_1287ED701E8C_DETACHED (rows with the partitioning key in the partition's range; else TW_1287ED701E8C_DETACHED is kept)
BEGIN
  DECLARE v_key VARCHAR(1000);
  DECLARE v_nulls CHAR(1);
  DECLARE v_low VARCHAR(512);
  DECLARE v_lowinc CHAR(1);
  DECLARE v_high VARCHAR(512);
  DECLARE v_highinc CHAR(1);
  DECLARE v_where VARCHAR(4000);
  DECLARE v_sql VARCHAR(8000);
  DECLARE v_rows BIGINT DEFAULT 0;
  DECLARE v_other BIGINT DEFAULT 0;
  DECLARE s1 STATEMENT;
  DECLARE c1 CURSOR FOR s1;
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    SELECT VARCHAR(DATAPARTITIONEXPRESSION, 1000), NULLSFIRST INTO v_key, v_nulls FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONKEYSEQ = 1;
    SELECT LOWVALUE, LOWINCLUSIVE, HIGHVALUE, HIGHINCLUSIVE INTO v_low, v_lowinc, v_high, v_highinc FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS = '';
    SET v_where = CASE WHEN v_low = 'MINVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_lowinc = 'Y' THEN ' >= ' ELSE ' > ' END || v_low END || ' AND ' || CASE WHEN v_high = 'MAXVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_highinc = 'Y' THEN ' <= ' ELSE ' < ' END || v_high END;
    IF (v_high = 'MAXVALUE' AND v_nulls = 'N') OR (v_low = 'MINVALUE' AND v_nulls = 'Y') THEN
      SET v_where = '(' || v_where || ') OR ' || v_key || ' IS NULL';
    END IF;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."ORDERS" WHERE ' || v_where;
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_rows;
    CLOSE c1;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_1287ED701E8C_DETACHED"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_other;
    CLOSE c1;
    IF v_rows <> v_other THEN
      SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 25 failed: row counts differ: detached table kept';
    END IF;
  END IF;
END@
-- step 12: drop the detached table TW_1287ED701E8C_DETACHED (its rows are in the attached partition now)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 12: dropping "TW_1287ED701E8C_DETACHED"');
    EXECUTE IMMEDIATE 'DROP TABLE "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 12: already done: no detached table left');
  END IF;
END@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'finished: partition "P2024Q1" of "SALES"."ORDERS" is in "TS_ORDERS_2024"');
END@
CONNECT RESET@
