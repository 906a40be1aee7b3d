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
--   - Not supported in pureScale.
--   - Needs DBADM (or SYSADM); Db2 10.5 or later (MON_GET_HADR).
--   - the ILM leading edge: the next period's partition, created empty on the hot tier
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 65036704fe3e34196992930290270b8e6e37a7184167bd3c0ebc76d0d9754ed0 (the forward plan; the rollback shows the same)
-- Run:
--   db2 -td@ -vsf <this file>   (as the instance owner; it connects to SALESDB itself)
--   Read docs/running-scripts.md first.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
-- Checks (a failing check stops the script with its number):
--   check 1: connected to database SALESDB
--   check 2: instance db2inst1
--   check 3: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
--   check 4: a full backup of SALESDB finished in the last 24 hours
--   check 5: table SALES.ORDERS exists and is range-partitioned
--   check 6: no partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
--   check 7: partition P20240701, if present, has the range '2024-07-01' .. '2024-10-01' tierwise added
--   check 8: post-check: SALES.ORDERS has no partition P20240701
UPDATE COMMAND OPTIONS USING S ON@
SET SERVEROUTPUT ON@
CONNECT TO SALESDB@
-- check 1: connected to database SALESDB
SELECT RAISE_ERROR('75001', 'tierwise check 1 failed: not connected to SALESDB') FROM SYSIBM.SYSDUMMY1 WHERE UPPER(CURRENT SERVER) <> UPPER('SALESDB') FETCH FIRST 1 ROW ONLY@
-- check 2: instance db2inst1
SELECT RAISE_ERROR('75001', 'tierwise check 2 failed: not instance db2inst1') FROM SYSIBMADM.ENV_INST_INFO WHERE UPPER(INST_NAME) <> UPPER('db2inst1') FETCH FIRST 1 ROW ONLY@
-- check 3: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
SELECT RAISE_ERROR('75001', 'tierwise check 3 failed: HADR database: unsupported here, review') FROM TABLE(MON_GET_HADR(NULL)) AS H WHERE H.HADR_ROLE <> 'STANDARD' FETCH FIRST 1 ROW ONLY@
-- check 4: a full backup of SALESDB finished in the last 24 hours
SELECT RAISE_ERROR('75001', 'tierwise check 4 failed: no full backup in the last 24 hours') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSIBMADM.DB_HISTORY WHERE OPERATION = 'B' AND OPERATIONTYPE IN ('F', 'N') AND COALESCE(SQLCODE, 0) >= 0 AND END_TIME >= VARCHAR_FORMAT(CURRENT TIMESTAMP - 24 HOURS, 'YYYYMMDDHH24MISS')) FETCH FIRST 1 ROW ONLY@
-- check 5: table SALES.ORDERS exists and is range-partitioned
SELECT RAISE_ERROR('75001', 'tierwise check 5 failed: table missing or not partitioned') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') FETCH FIRST 1 ROW ONLY@
-- check 6: no partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a partition is attaching/detaching: finish it') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 7: partition P20240701, if present, has the range '2024-07-01' .. '2024-10-01' tierwise added
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: partition range differs from the plan') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND (LOWVALUE <> '''2024-07-01''' OR HIGHVALUE <> '''2024-10-01''') FETCH FIRST 1 ROW ONLY@
-- step 1: detach partition P20240701 into TW_1D01B90A279B_REMOVED (kept)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 1: detaching partition "P20240701"; its rows stay in "TW_1D01B90A279B_REMOVED"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P20240701" INTO "SALES"."TW_1D01B90A279B_REMOVED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 1: already done: no partition "P20240701"');
  END IF;
END@
-- check 8: post-check: SALES.ORDERS has no partition P20240701
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: post-check: the partition is still there') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND STATUS = '' FETCH FIRST 1 ROW ONLY@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: finished: partition "P20240701" is detached into "TW_1D01B90A279B_REMOVED"');
END@
CONNECT RESET@
