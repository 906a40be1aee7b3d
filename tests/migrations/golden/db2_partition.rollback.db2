--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: ROLLBACK
-- ================================================================================================
-- Moves:      data partition P2024Q1 of "SALES"."ORDERS", from table space "TS_ORDERS_2024_fc" to "TS_ORDERS_2024"
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
--   table space TS_ORDERS_2024_fc is shared with other partitions: detach / copy / attach (online for the
--   other partitions; this partition's rows are invisible from the detach until SET INTEGRITY ends):
--     1. table space "TS_ORDERS_2024" on the target storage group, created if missing like the source
--     2. ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_1287ED701E8C_DETACHED"
--     3. CREATE TABLE "SALES"."TW_1287ED701E8C_COPY" LIKE the detached table IN the target; INSERT ... SELECT *
--     4. ALTER TABLE ... ATTACH PARTITION with the same bounds FROM the copy
--     5. SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED
--     6. post-check (partition in the target table space, STATUS empty), then DROP the detached table
--   If the script stops after step 2 and you want the partition back as it was, re-attach the
--   detached table (it still holds every row):
--     ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM ('2024-01-01') INCLUSIVE ENDING AT ('2024-04-01') EXCLUSIVE FROM "SALES"."TW_1287ED701E8C_DETACHED"@
--     SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED@
-- Limits and notes:
--   - Not supported in pureScale.
--   - Needs DBADM (or SYSADM); Db2 10.5 or later (MON_GET_HADR).
--   - The copy is one logged INSERT: the active log must hold the partition's size.
--   - Refused before anything changes: LOB, XML, LONG, identity or generated columns; dependent MQTs or staging tables; partitions being attached or detached. CREATE TABLE ... LIKE copies the columns, not compression or other table options: if ATTACH reports SQL20408N, re-attach as shown above.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 82465df80b602da0901bcaaca644c656136931abff97060c5fa35a4fd420f83f (the forward plan; the rollback shows the same)
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
--   check 5: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024_fc or TS_ORDERS_2024, or detached by an earlier run
--   check 6: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
--   check 7: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
--   check 8: no materialized query table or staging table depends on SALES.ORDERS (detached dependents)
--   check 9: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
--   check 10: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024_fc (page size, extent size, type)
--   check 11: storage group SG_HOT exists
--   check 12: the paths of SG_HOT have room for the partition (10 % headroom; size from the last RUNSTATS, FPAGES)
--   check 13: the detach of P2024Q1 has finished: the detached table TW_1287ED701E8C_DETACHED is a regular table and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS D, L or I)
--   check 14: post-check: partition P2024Q1 is in table space TS_ORDERS_2024 (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS
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
-- check 5: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024_fc or TS_ORDERS_2024, or detached by an earlier run
SELECT RAISE_ERROR('75001', 'tierwise check 5 failed (see the script header)') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID IN ((SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_fc'), (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024'))) AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') FETCH FIRST 1 ROW ONLY@
-- check 6: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: partition range differs from the plan') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND (LOWVALUE <> '''2024-01-01''' OR HIGHVALUE <> '''2024-04-01''' OR LOWINCLUSIVE <> 'Y' OR HIGHINCLUSIVE <> 'N') FETCH FIRST 1 ROW ONLY@
-- check 7: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: a partition is attaching/detaching: finish it') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME <> 'P2024Q1' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 8: no materialized query table or staging table depends on SALES.ORDERS (detached dependents)
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed (see the script header)') FROM SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME WHERE D.BSCHEMA = 'SALES' AND D.BNAME = 'ORDERS' AND D.BTYPE = 'T' AND T.TYPE IN ('S', 'U') FETCH FIRST 1 ROW ONLY@
-- check 9: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed (see the script header)') FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND (TYPENAME IN ('BLOB', 'CLOB', 'DBCLOB', 'XML', 'LONG VARCHAR', 'LONG VARGRAPHIC') OR IDENTITY = 'Y' OR GENERATED <> ' ') FETCH FIRST 1 ROW ONLY@
-- check 10: table space TS_ORDERS_2024, if it exists, uses storage group SG_HOT and matches TS_ORDERS_2024_fc (page size, extent size, type)
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: TS_ORDERS_2024 does not match') FROM SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = 'TS_ORDERS_2024_fc' WHERE N.TBSPACE = 'TS_ORDERS_2024' AND (COALESCE(N.SGNAME, '') <> 'SG_HOT' OR N.PAGESIZE <> O.PAGESIZE OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE) FETCH FIRST 1 ROW ONLY@
-- check 11: storage group SG_HOT exists
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed: storage group SG_HOT missing') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_HOT') FETCH FIRST 1 ROW ONLY@
-- check 12: the paths of SG_HOT have room for the partition (10 % headroom; size from the last RUNSTATS, FPAGES)
SELECT RAISE_ERROR('75001', 'tierwise check 12 failed: not enough free space in SG_HOT') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') AND (SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_HOT', -1)) AS P) < (SELECT COALESCE(SUM(GREATEST(D.FPAGES, 0) * T.PAGESIZE), 0) FROM SYSCAT.DATAPARTITIONS AS D JOIN SYSCAT.TABLESPACES AS T ON T.TBSPACEID = D.TBSPACEID WHERE D.TABSCHEMA = 'SALES' AND D.TABNAME = 'ORDERS' AND D.DATAPARTITIONNAME = 'P2024Q1') * 1.10 FETCH FIRST 1 ROW ONLY@
-- step 2: table space TS_ORDERS_2024 in SG_HOT, created only if missing, like TS_ORDERS_2024_fc
BEGIN
  DECLARE v_page INTEGER;
  DECLARE v_extent INTEGER;
  DECLARE v_type CHAR(1);
  DECLARE v_bp VARCHAR(128);
  DECLARE v_sql VARCHAR(1000);
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 2: already done: table space "TS_ORDERS_2024" exists');
  ELSE
    SELECT T.PAGESIZE, T.EXTENTSIZE, T.DATATYPE, B.BPNAME INTO v_page, v_extent, v_type, v_bp FROM SYSCAT.TABLESPACES AS T JOIN SYSCAT.BUFFERPOOLS AS B ON B.BUFFERPOOLID = T.BUFFERPOOLID WHERE T.TBSPACE = 'TS_ORDERS_2024_fc';
    SET v_sql = 'CREATE ' || CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END || ' TABLESPACE "TS_ORDERS_2024" PAGESIZE ' || VARCHAR(v_page) || ' MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG_HOT" EXTENTSIZE ' || VARCHAR(v_extent) || ' BUFFERPOOL "' || REPLACE(v_bp, '"', '""') || '"';
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 2: creating table space "TS_ORDERS_2024" in storage group "SG_HOT"');
    EXECUTE IMMEDIATE v_sql;
  END IF;
END@
-- step 3: detach partition P2024Q1 into TW_1287ED701E8C_DETACHED (skipped when already moved or detached)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: already done: partition "P2024Q1" is in "TS_ORDERS_2024"; nothing to do');
  ELSEIF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_fc')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 3: detaching partition "P2024Q1"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 3: already done: the partition is detached or attached from the copy');
  END IF;
END@
-- check 13: the detach of P2024Q1 has finished: the detached table TW_1287ED701E8C_DETACHED is a regular table and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS D, L or I)
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed: detach still in progress: wait, run again') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED' AND TYPE <> 'T') OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS IN ('D', 'L', 'I')) FETCH FIRST 1 ROW ONLY@
-- step 4: copy the detached rows into TW_1287ED701E8C_COPY in TS_ORDERS_2024 (again from the start after a stop)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1') THEN
    IF NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') THEN
      EXECUTE IMMEDIATE 'CREATE TABLE "SALES"."TW_1287ED701E8C_COPY" LIKE "SALES"."TW_1287ED701E8C_DETACHED" IN "TS_ORDERS_2024"';
    END IF;
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 4: copying the rows into "TW_1287ED701E8C_COPY"');
    EXECUTE IMMEDIATE 'DELETE FROM "SALES"."TW_1287ED701E8C_COPY"';
    EXECUTE IMMEDIATE 'INSERT INTO "SALES"."TW_1287ED701E8C_COPY" SELECT * FROM "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 4: nothing to copy');
  END IF;
END@
-- step 5: attach TW_1287ED701E8C_COPY as partition P2024Q1 with its original range
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_COPY') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 5: attaching partition "P2024Q1" from "TW_1287ED701E8C_COPY"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM (''2024-01-01'') INCLUSIVE ENDING AT (''2024-04-01'') EXCLUSIVE FROM "SALES"."TW_1287ED701E8C_COPY"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 5: nothing to attach');
  END IF;
END@
-- step 6: SET INTEGRITY for SALES.ORDERS (validates the attached range, maintains indexes)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS = 'C') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 6: SET INTEGRITY for "SALES"."ORDERS"');
    EXECUTE IMMEDIATE 'SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 6: already done: the table is not in set integrity pending state');
  END IF;
END@
-- check 14: post-check: partition P2024Q1 is in table space TS_ORDERS_2024 (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS
SELECT RAISE_ERROR('75001', 'tierwise check 14 failed: post-check: partition not in TS_ORDERS_2024') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') FETCH FIRST 1 ROW ONLY@
-- step 7: drop the detached table TW_1287ED701E8C_DETACHED (its rows are in the attached partition now)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_1287ED701E8C_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 7: dropping "TW_1287ED701E8C_DETACHED"');
    EXECUTE IMMEDIATE 'DROP TABLE "SALES"."TW_1287ED701E8C_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: step 7: already done: no detached table left');
  END IF;
END@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: finished: partition "P2024Q1" of "SALES"."ORDERS" is in "TS_ORDERS_2024"');
END@
CONNECT RESET@
