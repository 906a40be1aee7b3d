--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: CHECK ONLY (changes nothing)
-- ================================================================================================
-- Moves:      "SALES"."ORDERS": add the partition "P20240701" (2024-07-01 .. 2024-10-01)
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier unknown: (new)
-- To:         tier flash: storage group "SG_HOT"
-- Object:     partition SALES.ORDERS new partition from 2024-07-01 (key SALESDB/partition/SALES.ORDERS/new/2024-07-01)
-- Why:        ilm (leading edge)
--             - new partition created on flash ahead of time
-- Predicted:  I/O wait n/a now -> n/a on tier flash
-- Size:       unknown
-- Method:
--   in table space "TS_ORDERS_2024" (the newest partition's, already on storage group "SG_HOT");
--   ALTER TABLE "SALES"."ORDERS" ADD PARTITION "P20240701" STARTING FROM ... ENDING AT ... IN "TS_ORDERS_2024"
--   (IBM Db2 docs, ALTER TABLE ADD PARTITION; "Scenarios: Rolling in and rolling out partitioned table data").
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs DBADM granted WITH DATAACCESS, the default (ALTER TABLE ... ADD / DETACH PARTITION, the emptiness check reads the table), plus SYSCTRL or SYSADM when the table space or storage group must be created (CREATE TABLESPACE; a new storage group), and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - the ILM leading edge: the next period's partition, created empty on the hot tier
-- Operations:
--   Duration:    seconds: catalog changes only (the partition is empty)
--   Log volume:  a few catalog log records
--   Blocking:    ADD / DETACH PARTITION wait for queries holding locks on the table and invalidate static packages on it; a busy table may make them wait until LOCKTIMEOUT
--   Backups:     the script stops before any change while a BACKUP of the database runs (run it again afterwards); otherwise no effect on backup jobs; a new table space is in the next backup
--   To abort:    interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again
--   To recover:  run the script again: every step checks first and says 'already done'
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 65036704fe3e34196992930290270b8e6e37a7184167bd3c0ebc76d0d9754ed0 (the forward plan; the rollback shows the same)
-- Run:
--   db2 -td@ -vsf <this file>   (as the instance owner; it connects to SALESDB itself)
--   CHECK ONLY: the same checks as the forward script, against the live server, and none of its steps;
--   it changes nothing. Run it days before the change window, in daylight; it prints the plan and the
--   estimated duration. A failing check stops it with its number, as it would stop the forward script.
--   Read docs/running-scripts.md first.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
-- Checks (a failing check stops the script with its number):
--   check 1: connected to database SALESDB
--   check 2: instance db2inst1
--   check 3: not a pureScale instance (SYSIBMADM.DB2_CF lists no cluster caching facility): unsupported here
--   check 4: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
--   check 5: a full database backup of SALESDB (not a table space backup, not to /dev/null or NUL) finished successfully in the last 24 hours
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): ADD / DETACH PARTITION (and CREATE TABLESPACE when one is created) are not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: table SALES.ORDERS exists and is range-partitioned
--   check 8: no partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
--   check 9: partition name P20240701, if taken, has exactly the range '2024-07-01' .. '2024-10-01' (an earlier run added it)
--   check 10: no other partition of SALES.ORDERS overlaps '2024-07-01' .. '2024-10-01' (SYSCAT.DATAPARTITIONS LOWVALUE / HIGHVALUE with their inclusive flags; numbers compared as numbers, other literals as text, which orders ISO dates and timestamps of one format correctly)
--   check 11: table space TS_ORDERS_2024 exists and uses storage group SG_HOT
--   check 12: storage group SG_HOT exists
--   check 13: storage group SG_HOT has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 14: post-check: partition P20240701 is in table space TS_ORDERS_2024 [window run only]
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
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): ADD / DETACH PARTITION (and CREATE TABLESPACE when one is created) are not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
-- check-only run: a warning, not a stop (it is about this moment)
BEGIN
  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'warning: check 6 failed: a BACKUP is running: wait, run again (now; the window run stops if it is still so)');
  END IF;
END@
-- check 7: table SALES.ORDERS exists and is range-partitioned
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: table missing or not partitioned') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') FETCH FIRST 1 ROW ONLY@
-- check 8: no partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: a partition is attaching/detaching: finish it') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 9: partition name P20240701, if taken, has exactly the range '2024-07-01' .. '2024-10-01' (an earlier run added it)
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: partition name taken by another range') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND (LOWVALUE <> '''2024-07-01''' OR HIGHVALUE <> '''2024-10-01''')) FETCH FIRST 1 ROW ONLY@
-- check 10: no other partition of SALES.ORDERS overlaps '2024-07-01' .. '2024-10-01' (SYSCAT.DATAPARTITIONS LOWVALUE / HIGHVALUE with their inclusive flags; numbers compared as numbers, other literals as text, which orders ISO dates and timestamps of one format correctly)
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: the new range overlaps another partition') FROM SYSCAT.DATAPARTITIONS AS D WHERE D.TABSCHEMA = 'SALES' AND D.TABNAME = 'ORDERS' AND NOT (D.DATAPARTITIONNAME = 'P20240701' AND D.LOWVALUE = '''2024-07-01''' AND D.HIGHVALUE = '''2024-10-01''') AND (D.HIGHVALUE = 'MAXVALUE' OR D.HIGHVALUE > '''2024-07-01''' OR (D.HIGHINCLUSIVE = 'Y' AND D.HIGHVALUE = '''2024-07-01''')) AND (D.LOWVALUE = 'MINVALUE' OR D.LOWVALUE < '''2024-10-01''') FETCH FIRST 1 ROW ONLY@
-- check 11: table space TS_ORDERS_2024 exists and uses storage group SG_HOT
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed: TS_ORDERS_2024 missing or elsewhere') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024' AND SGNAME = 'SG_HOT') FETCH FIRST 1 ROW ONLY@
-- check 12: storage group SG_HOT exists
SELECT RAISE_ERROR('75001', 'tierwise check 12 failed: storage group SG_HOT missing') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT') FETCH FIRST 1 ROW ONLY@
-- check 13: storage group SG_HOT has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
BEGIN
  IF NOT (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check 13 not run now: storage group SG_HOT does not exist yet (step 1 creates it on its paths)');
  END IF;
END@
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed: no usable storage path in SG_HOT') FROM SYSIBM.SYSDUMMY1 WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT')) AND (NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_HOT', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL)) FETCH FIRST 1 ROW ONLY@
-- check 14: post-check: partition P20240701 is in table space TS_ORDERS_2024 [window run only]
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check only: every check above passed or warned; nothing was changed');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'the window run will (each step checks first and says ''already done'' when there is nothing to do):');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 1: storage group SG_HOT, not created here (no storage paths given): it exists (checked)');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 2: add partition P20240701 in TS_ORDERS_2024');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'estimated duration: seconds: catalog changes only (the partition is empty)');
END@
CONNECT RESET@
