--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: FORWARD
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
--   table space "TS_ORDERS_2024" on storage group "SG_HOT", created if missing like "TS_ORDERS_2024";
--   ALTER TABLE "SALES"."ORDERS" ADD PARTITION "P20240701" STARTING FROM ... ENDING AT ... IN "TS_ORDERS_2024"
--   (IBM Db2 docs, ALTER TABLE ADD PARTITION; "Scenarios: Rolling in and rolling out partitioned table data").
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
--   check 7: no other partition of SALES.ORDERS covers '2024-07-01' .. '2024-10-01' (this is the leading edge)
--   check 8: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024
--   check 9: storage group SG_HOT exists
--   check 10: post-check: partition P20240701 is in table space TS_ORDERS_2024
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
-- check 7: no other partition of SALES.ORDERS covers '2024-07-01' .. '2024-10-01' (this is the leading edge)
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: partition name taken by another range') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND (LOWVALUE <> '''2024-07-01''' OR HIGHVALUE <> '''2024-10-01''')) FETCH FIRST 1 ROW ONLY@
-- check 8: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: TS_ORDERS_2024 does not match') FROM SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = 'TS_ORDERS_2024' WHERE N.TBSPACE = 'TS_ORDERS_2024' AND (COALESCE(N.SGNAME, '') <> 'SG_HOT' OR N.PAGESIZE <> O.PAGESIZE OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE) FETCH FIRST 1 ROW ONLY@
-- check 9: storage group SG_HOT exists
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: storage group SG_HOT missing') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT') FETCH FIRST 1 ROW ONLY@
-- step 2: table space TS_ORDERS_2024 in SG_HOT, created only if missing, like TS_ORDERS_2024
BEGIN
  DECLARE v_page INTEGER;
  DECLARE v_extent INTEGER;
  DECLARE v_type CHAR(1);
  DECLARE v_bp VARCHAR(128);
  DECLARE v_sql VARCHAR(1000);
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 2: already done: table space "TS_ORDERS_2024" exists');
  ELSE
    SELECT T.PAGESIZE, T.EXTENTSIZE, T.DATATYPE, B.BPNAME INTO v_page, v_extent, v_type, v_bp FROM SYSCAT.TABLESPACES AS T JOIN SYSCAT.BUFFERPOOLS AS B ON B.BUFFERPOOLID = T.BUFFERPOOLID WHERE T.TBSPACE = 'TS_ORDERS_2024';
    SET v_sql = 'CREATE ' || CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END || ' TABLESPACE "TS_ORDERS_2024" PAGESIZE ' || VARCHAR(v_page) || ' MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG_HOT" EXTENTSIZE ' || VARCHAR(v_extent) || ' BUFFERPOOL "' || REPLACE(v_bp, '"', '""') || '"';
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 2: creating table space "TS_ORDERS_2024" in storage group "SG_HOT"');
    EXECUTE IMMEDIATE v_sql;
  END IF;
END@
-- step 3: add partition P20240701 in TS_ORDERS_2024
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 3: already done: partition "P20240701" exists');
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 3: adding partition "P20240701" in "TS_ORDERS_2024"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ADD PARTITION "P20240701" STARTING FROM (''2024-07-01'') INCLUSIVE ENDING AT (''2024-10-01'') EXCLUSIVE IN "TS_ORDERS_2024"';
  END IF;
END@
-- check 10: post-check: partition P20240701 is in table space TS_ORDERS_2024
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: post-check: partition not in TS_ORDERS_2024') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P20240701' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')) FETCH FIRST 1 ROW ONLY@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: finished: "SALES"."ORDERS" has partition "P20240701" in "TS_ORDERS_2024"');
END@
CONNECT RESET@
