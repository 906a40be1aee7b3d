--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: ROLLBACK
-- ================================================================================================
-- Moves:      "SALES"."ORDERS": detach (kept as a table) the partition "P20240701" (2024-07-01 .. 2024-10-01)
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier flash: (new)
-- To:         tier (original): storage group "SG_HOT"
-- Undoes:     the forward move of SALESDB/partition/SALES.ORDERS/new/2024-07-01 (tier unknown -> flash)
-- Object:     partition SALES.ORDERS new partition from 2024-07-01 (key SALESDB/partition/SALES.ORDERS/new/2024-07-01)
-- Why:        ilm (leading edge)
--             - new partition created on flash ahead of time
-- Predicted:  I/O wait n/a now -> n/a on tier flash
-- Size:       unknown
-- Method:
--   ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P20240701" INTO "SALES"."TW_1D01B90A279B_REMOVED": the partition becomes a table, which is kept (drop it when it is empty).
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
--   A statement waits at most 60 s for a lock (SET CURRENT LOCK TIMEOUT); a lock timeout (SQL0911N reason 68) rolls back its unit of work and stops the script: run it again in a quieter moment.
--   If it stops between UPDATE COMMAND OPTIONS USING C OFF and the COMMIT after it, run `db2 rollback` in the same shell at once: it releases the table lock (`db2 terminate` alone would commit).
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
--   check 9: partition P20240701, if present, has the range '2024-07-01' .. '2024-10-01' tierwise added
--   check 10: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
--   check 11: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
--   check 12: partition P20240701 is empty (SELECT 1 FROM SALES.ORDERS WHERE the partitioning key is in its range, with its inclusive bounds, FETCH FIRST 1 ROW ONLY): once its period has started, the detach would take its rows out of the table and inserts into the range would fail (SQL0327N); move the rows first or keep the partition. Nothing was changed
--   check 13: post-check: SALES.ORDERS has no partition P20240701 (else it held rows when counted under the lock: see step 1's message; nothing was changed)
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
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a BACKUP is running: wait, run again') FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP') FETCH FIRST 1 ROW ONLY@
-- check 7: table SALES.ORDERS exists and is range-partitioned
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: table missing or not partitioned') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') FETCH FIRST 1 ROW ONLY@
-- check 8: no partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: a partition is attaching/detaching: finish it') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 9: partition P20240701, if present, has the range '2024-07-01' .. '2024-10-01' tierwise added
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: partition range differs from the plan') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND (LOWVALUE <> '''2024-07-01''' OR HIGHVALUE <> '''2024-10-01''') FETCH FIRST 1 ROW ONLY@
-- check 10: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed (see the script header)') FROM SYSCAT.REFERENCES WHERE REFTABSCHEMA = 'SALES' AND REFTABNAME = 'ORDERS' FETCH FIRST 1 ROW ONLY@
-- check 11: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed: partitioning key has 2+ columns: unsupported') FROM SYSIBM.SYSDUMMY1 WHERE (SELECT COUNT(*) FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') <> 1 FETCH FIRST 1 ROW ONLY@
-- check 12: partition P20240701 is empty (SELECT 1 FROM SALES.ORDERS WHERE the partitioning key is in its range, with its inclusive bounds, FETCH FIRST 1 ROW ONLY): once its period has started, the detach would take its rows out of the table and inserts into the range would fail (SQL0327N); move the rows first or keep the partition. Nothing was changed
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
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701') THEN
    SELECT VARCHAR(DATAPARTITIONEXPRESSION, 1000), NULLSFIRST INTO v_key, v_nulls FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONKEYSEQ = 1;
    SELECT LOWVALUE, LOWINCLUSIVE, HIGHVALUE, HIGHINCLUSIVE INTO v_low, v_lowinc, v_high, v_highinc FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701';
    SET v_where = CASE WHEN v_low = 'MINVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_lowinc = 'Y' THEN ' >= ' ELSE ' > ' END || v_low END || ' AND ' || CASE WHEN v_high = 'MAXVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_highinc = 'Y' THEN ' <= ' ELSE ' < ' END || v_high END;
    IF (v_high = 'MAXVALUE' AND v_nulls = 'N') OR (v_low = 'MINVALUE' AND v_nulls = 'Y') THEN
      SET v_where = '(' || v_where || ') OR ' || v_key || ' IS NULL';
    END IF;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM (SELECT 1 FROM "SALES"."ORDERS" WHERE ' || v_where || ' FETCH FIRST 1 ROW ONLY) AS X';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_rows;
    CLOSE c1;
  END IF;
  IF v_rows > 0 THEN
    SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 12 failed: partition holds rows: not detached';
  END IF;
END@
-- step 1: detach partition P20240701 into TW_1D01B90A279B_REMOVED (kept), in one unit of work: LOCK TABLE SALES.ORDERS IN EXCLUSIVE MODE, count its rows again, DETACH only when it holds none, COMMIT
-- one unit of work: autocommit off until the COMMIT below
UPDATE COMMAND OPTIONS USING C OFF@
LOCK TABLE "SALES"."ORDERS" IN EXCLUSIVE MODE@
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
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701') THEN
    SELECT VARCHAR(DATAPARTITIONEXPRESSION, 1000), NULLSFIRST INTO v_key, v_nulls FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONKEYSEQ = 1;
    SELECT LOWVALUE, LOWINCLUSIVE, HIGHVALUE, HIGHINCLUSIVE INTO v_low, v_lowinc, v_high, v_highinc FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701';
    SET v_where = CASE WHEN v_low = 'MINVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_lowinc = 'Y' THEN ' >= ' ELSE ' > ' END || v_low END || ' AND ' || CASE WHEN v_high = 'MAXVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_highinc = 'Y' THEN ' <= ' ELSE ' < ' END || v_high END;
    IF (v_high = 'MAXVALUE' AND v_nulls = 'N') OR (v_low = 'MINVALUE' AND v_nulls = 'Y') THEN
      SET v_where = '(' || v_where || ') OR ' || v_key || ' IS NULL';
    END IF;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM (SELECT 1 FROM "SALES"."ORDERS" WHERE ' || v_where || ' FETCH FIRST 1 ROW ONLY) AS X';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_rows;
    CLOSE c1;
    IF v_rows = 0 THEN
      CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: detaching partition "P20240701"; its rows stay in "TW_1D01B90A279B_REMOVED"');
      EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P20240701" INTO "SALES"."TW_1D01B90A279B_REMOVED"';
    ELSE
      CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: not detached: the partition holds rows (counted again under the table lock)');
    END IF;
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: already done: no partition "P20240701"');
  END IF;
END@
COMMIT@
UPDATE COMMAND OPTIONS USING C ON@
-- check 13: post-check: SALES.ORDERS has no partition P20240701 (else it held rows when counted under the lock: see step 1's message; nothing was changed)
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed: post-check: the partition is still there') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND STATUS = '' FETCH FIRST 1 ROW ONLY@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'finished: partition "P20240701" is detached into "TW_1D01B90A279B_REMOVED"');
END@
CONNECT RESET@
