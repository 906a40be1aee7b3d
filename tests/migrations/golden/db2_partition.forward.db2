--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: FORWARD
-- ================================================================================================
-- Moves:      data partition P2024Q1 of "SALES"."ORDERS", from table space "TS_ORDERS_2024" to "TS_ORDERS_2024_FC"
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier flash: storage group "SG_HOT"
-- To:         tier fc: storage group "SG_FC" (/db2/fc1, /db2/fc2)
-- Object:     partition SALES.ORDERS P2024Q1 (key SALESDB/partition/SALES.ORDERS/1)
-- Why:        sequential_read (TW601)
--             - tablespace TS_ORDERS_2024: TW601 sequential reads (57 % of physical reads are prefetch): disks stream scans well; flash adds little
--             - 0.4 object physical reads per second, 3 % read-miss, heat 16,343.0 per GB-hour (0.86x the database average)
--             - moves with tablespace TS_ORDERS_2024 (recommended: fc)
-- Predicted:  I/O wait n/a now -> 0.0 ms/s on tier fc
-- Size:       0.1 GB
-- Method:
--   table space TS_ORDERS_2024 is shared with other partitions: detach / copy / attach (online for the
--   other partitions; this partition's rows are invisible in the table from the DETACH until the ATTACH
--   and SET INTEGRITY complete):
--     1. table space "TS_ORDERS_2024_FC" on the target storage group, created if missing like the source
--     2. ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_95F66C2B39BC_DETACHED",
--        then a wait of up to 10 minutes for the asynchronous partition detach task to finish
--     3. CREATE TABLE "SALES"."TW_95F66C2B39BC_COPY" LIKE the detached table IN the target; INSERT ... SELECT *
--     4. ALTER TABLE ... ATTACH PARTITION with the same bounds FROM the copy
--     5. SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED
--     6. post-check (partition in the target table space, STATUS empty), then DROP the detached table
--   If the script stops after step 2 and you want the partition back as it was, re-attach the
--   detached table (it still holds every row):
--     ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM ('2024-01-01') INCLUSIVE ENDING AT ('2024-04-01') EXCLUSIVE FROM "SALES"."TW_95F66C2B39BC_DETACHED"@
--     SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED@
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs DBADM granted WITH DATAACCESS, the default (DETACH / ATTACH, CREATE TABLE, INSERT, DROP TABLE, SET INTEGRITY, the row counts), plus SYSCTRL or SYSADM when the target table space or storage group must be created (CREATE TABLESPACE; a new storage group), EXECUTE on the SYSIBMADM.DBMS_PIPE module (the wait after the DETACH; DATAACCESS includes it), and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS, ADMIN_GET_TAB_INFO (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - The copy is one logged INSERT: the active log must hold the partition's size.
--   - Refused before anything changes: LOB, XML, LONG, identity or generated columns; dependent MQTs or staging tables; partitions being attached or detached. CREATE TABLE ... LIKE copies the columns, not compression or other table options: if ATTACH reports SQL20408N, re-attach as shown above.
-- Operations:
--   Duration:    the asynchronous detach usually ends within seconds to a few minutes once no query holds the partition (the script waits up to 10 min), then under a minute for 0.1 GB at ~50-150 MB/s (one logged INSERT ... SELECT; speeds vary), then SET INTEGRITY (index maintenance of the attached rows, about as long again with non-partitioned indexes)
--   Log volume:  about the partition's size (0.1 GB) in one transaction: the active log (LOGFILSIZ x (LOGPRIMARY + LOGSECOND)) must hold it, or the INSERT fails with SQL0964C and rolls back
--   Blocking:    DETACH waits for queries that hold locks on the partition (dynamic UR queries excepted) and invalidates static packages on the table; an asynchronous task then finishes the detach (the script waits for it). The partition's rows are invisible in the table from the DETACH until the ATTACH and SET INTEGRITY complete, that is for the whole Duration above (longer if the script stops and is run again later; meanwhile they are in the detached table); the other partitions stay readable and writable (SET INTEGRITY ... ALLOW WRITE ACCESS)
--   Backups:     the script stops before any change while a BACKUP of the database runs (run it again afterwards); keep it out of the backup window (the copy's log volume goes into the next online backup's log range); take a new full database backup afterwards, when a table space was created
--   To abort:    interrupt the CLP (Ctrl-C) or FORCE APPLICATION: the running statement rolls back; the script is safe to run again, every step checks first
--   To recover:  run the script again: it carries on from the step it stopped at; or put the partition back as it was with the re-attach commands in Method (the detached table keeps every row until step 7)
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 a8718f93eaf09bac18de5e02faf744cade3af1f36c5b5c40961a8a625cb55b93 (the forward plan; the rollback shows the same)
-- Run:
--   db2 -td@ -vsf <this file>   (as the instance owner; it connects to SALESDB itself)
--   Read docs/running-scripts.md first.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
-- Checks (a failing check stops the script with its number):
--   check 1: connected to database SALESDB
--   check 2: instance db2inst1
--   check 3: not a pureScale instance (SYSIBMADM.DB2_CF lists no cluster caching facility): unsupported here
--   check 4: not an HADR database (the storage paths would have to exist on the standby too: review by hand)
--   check 5: a full database backup of SALESDB (not a table space backup, not to /dev/null or NUL) finished successfully in the last 24 hours
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): an online backup pauses the rebalance and competes for the same containers and locks; wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024 or TS_ORDERS_2024_FC, or detached by an earlier run
--   check 8: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
--   check 9: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
--   check 10: no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') depends on SALES.ORDERS (they would become detached dependents)
--   check 11: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
--   check 12: table space TS_ORDERS_2024_FC, if it exists, uses storage group SG_FC and matches TS_ORDERS_2024 (page size, extent size, type)
--   check 13: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
--   check 14: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
--   check 15: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
--   check 16: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 17: the paths of SG_FC have room for the partition (10 % headroom; storage is striped over the paths; size from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects)
--   check 18: the detach of P2024Q1 has finished within 10 minutes: the detached table TW_95F66C2B39BC_DETACHED is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). Else: detach still in progress: run the script again; the rows stay in SALES.TW_95F66C2B39BC_DETACHED until it finishes
--   check 19: step 4 copied every row: COUNT(*) of TW_95F66C2B39BC_COPY equals COUNT(*) of TW_95F66C2B39BC_DETACHED (else the script stops before the ATTACH; TW_95F66C2B39BC_DETACHED keeps every row, and a rerun empties TW_95F66C2B39BC_COPY and copies again)
--   check 20: post-check: partition P2024Q1 is in table space TS_ORDERS_2024_FC (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS
--   check 21: before the drop: the attached partition P2024Q1 holds as many rows as the detached table TW_95F66C2B39BC_DETACHED (rows with the partitioning key in the partition's range; else TW_95F66C2B39BC_DETACHED is kept)
UPDATE COMMAND OPTIONS USING C ON S ON@
SET SERVEROUTPUT ON@
CONNECT TO SALESDB@
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
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): an online backup pauses the rebalance and competes for the same containers and locks; wait for it or pause the backup job, then run the script again. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a BACKUP is running: wait, run again') FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP') FETCH FIRST 1 ROW ONLY@
-- check 7: partition P2024Q1 of SALES.ORDERS is in table space TS_ORDERS_2024 or TS_ORDERS_2024_FC, or detached by an earlier run
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed (see the script header)') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID IN ((SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024'), (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC'))) AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_COPY') FETCH FIRST 1 ROW ONLY@
-- check 8: partition P2024Q1 has the range '2024-01-01' .. '2024-04-01' (the ATTACH recreates exactly this range)
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: partition range differs from the plan') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND (LOWVALUE <> '''2024-01-01''' OR HIGHVALUE <> '''2024-04-01''' OR LOWINCLUSIVE <> 'Y' OR HIGHINCLUSIVE <> 'N') FETCH FIRST 1 ROW ONLY@
-- check 9: no other partition of SALES.ORDERS is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: a partition is attaching/detaching: finish it') FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME <> 'P2024Q1' AND STATUS <> '' FETCH FIRST 1 ROW ONLY@
-- check 10: no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') depends on SALES.ORDERS (they would become detached dependents)
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed (see the script header)') FROM SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME WHERE D.BSCHEMA = 'SALES' AND D.BNAME = 'ORDERS' AND D.BTYPE = 'T' AND (T.TYPE = 'S' OR SUBSTR(T.PROPERTY, 2, 1) = 'Y') FETCH FIRST 1 ROW ONLY@
-- check 11: SALES.ORDERS has no LOB, XML, LONG, identity or generated columns
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed (see the script header)') FROM SYSCAT.COLUMNS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND (TYPENAME IN ('BLOB', 'CLOB', 'DBCLOB', 'XML', 'LONG VARCHAR', 'LONG VARGRAPHIC') OR IDENTITY = 'Y' OR GENERATED <> ' ') FETCH FIRST 1 ROW ONLY@
-- check 12: table space TS_ORDERS_2024_FC, if it exists, uses storage group SG_FC and matches TS_ORDERS_2024 (page size, extent size, type)
SELECT RAISE_ERROR('75001', 'tierwise check 12 failed: TS_ORDERS_2024_FC does not match') FROM SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = 'TS_ORDERS_2024' WHERE N.TBSPACE = 'TS_ORDERS_2024_FC' AND (COALESCE(N.SGNAME, '') <> 'SG_FC' OR N.PAGESIZE <> O.PAGESIZE OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE) FETCH FIRST 1 ROW ONLY@
-- check 13: no foreign key references SALES.ORDERS (SYSCAT.REFERENCES): detaching a partition of a parent table is unsupported here; review the constraints by hand. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed (see the script header)') FROM SYSCAT.REFERENCES WHERE REFTABSCHEMA = 'SALES' AND REFTABNAME = 'ORDERS' FETCH FIRST 1 ROW ONLY@
-- check 14: SALES.ORDERS is partitioned on one key (the row checks read the range of one key column)
SELECT RAISE_ERROR('75001', 'tierwise check 14 failed: partitioning key has 2+ columns: unsupported') FROM SYSIBM.SYSDUMMY1 WHERE (SELECT COUNT(*) FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS') <> 1 FETCH FIRST 1 ROW ONLY@
-- check 15: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
-- step 1: storage group SG_FC, created only if missing
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC') THEN
    IF EXISTS (SELECT 1 FROM (VALUES ('/db2/fc1'), ('/db2/fc2')) AS W(PATH) WHERE NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH)) THEN
      SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 15 failed: SG_FC exists on other paths';
    END IF;
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: already done: storage group "SG_FC" exists');
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: creating storage group "SG_FC" (/db2/fc1, /db2/fc2)');
    EXECUTE IMMEDIATE 'CREATE STOGROUP "SG_FC" ON ''/db2/fc1'', ''/db2/fc2'' OVERHEAD 6.725 DEVICE READ RATE 100';
  END IF;
END@
-- check 16: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
SELECT RAISE_ERROR('75001', 'tierwise check 16 failed: no usable storage path in SG_FC') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL) FETCH FIRST 1 ROW ONLY@
-- check 17: the paths of SG_FC have room for the partition (10 % headroom; storage is striped over the paths; size from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects)
SELECT RAISE_ERROR('75001', 'tierwise check 17 failed: not enough free space in SG_FC') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') AND COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'), 0) < ((SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE + I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')) AS I WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')) + (SELECT COALESCE(SUM(I.DATA_OBJECT_P_SIZE + I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'TW_95F66C2B39BC_DETACHED')) AS I)) * 1024 * 1.10 FETCH FIRST 1 ROW ONLY@
-- step 2: table space TS_ORDERS_2024_FC in SG_FC, created only if missing, like TS_ORDERS_2024
BEGIN
  DECLARE v_page INTEGER;
  DECLARE v_extent INTEGER;
  DECLARE v_type CHAR(1);
  DECLARE v_bp VARCHAR(128);
  DECLARE v_sql VARCHAR(1000);
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: already done: table space "TS_ORDERS_2024_FC" exists');
  ELSE
    SELECT T.PAGESIZE, T.EXTENTSIZE, T.DATATYPE, B.BPNAME INTO v_page, v_extent, v_type, v_bp FROM SYSCAT.TABLESPACES AS T JOIN SYSCAT.BUFFERPOOLS AS B ON B.BUFFERPOOLID = T.BUFFERPOOLID WHERE T.TBSPACE = 'TS_ORDERS_2024';
    SET v_sql = 'CREATE ' || CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END || ' TABLESPACE "TS_ORDERS_2024_FC" PAGESIZE ' || VARCHAR(v_page) || ' MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG_FC" EXTENTSIZE ' || VARCHAR(v_extent) || ' BUFFERPOOL "' || REPLACE(v_bp, '"', '""') || '"';
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: creating table space "TS_ORDERS_2024_FC" in storage group "SG_FC"');
    EXECUTE IMMEDIATE v_sql;
  END IF;
END@
-- step 3: detach partition P2024Q1 into TW_95F66C2B39BC_DETACHED (skipped when already moved or detached)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'already done: partition "P2024Q1" is in "TS_ORDERS_2024_FC"; nothing to do');
  ELSEIF EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: detaching partition "P2024Q1"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION "P2024Q1" INTO "SALES"."TW_95F66C2B39BC_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: already done: the partition is detached or attached from the copy');
  END IF;
END@
-- step 3: wait up to 10 minutes for the asynchronous partition detach task (checked every 10 seconds; DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to is the sleep)
-- check 18: the detach of P2024Q1 has finished within 10 minutes: the detached table TW_95F66C2B39BC_DETACHED is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). Else: detach still in progress: run the script again; the rows stay in SALES.TW_95F66C2B39BC_DETACHED until it finishes
BEGIN
  DECLARE v_waited INTEGER DEFAULT 0;
  DECLARE v_status INTEGER;
  WHILE v_waited < 600 AND (EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED' AND TYPE <> 'T') OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS IN ('D', 'L'))) DO
    SET v_status = DBMS_PIPE.RECEIVE_MESSAGE('TIERWISE_WAIT_TW_95F66C2B39BC_DETACHED', 10);
    SET v_waited = v_waited + 10;
  END WHILE;
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED' AND TYPE <> 'T') OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS IN ('D', 'L')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'detach still in progress: run the script again; the rows stay in "SALES"."TW_95F66C2B39BC_DETACHED" until it finishes');
    SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 18 failed: detach still in progress: run again';
  END IF;
END@
-- step 4: copy the detached rows into TW_95F66C2B39BC_COPY in TS_ORDERS_2024_FC (again from the start after a stop)
BEGIN
  DECLARE v_sql VARCHAR(8000);
  DECLARE v_rows BIGINT DEFAULT 0;
  DECLARE v_other BIGINT DEFAULT 0;
  DECLARE s1 STATEMENT;
  DECLARE c1 CURSOR FOR s1;
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    IF NOT EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_COPY') THEN
      EXECUTE IMMEDIATE 'CREATE TABLE "SALES"."TW_95F66C2B39BC_COPY" LIKE "SALES"."TW_95F66C2B39BC_DETACHED" IN "TS_ORDERS_2024_FC"';
    END IF;
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 4: copying the rows into "TW_95F66C2B39BC_COPY"');
    EXECUTE IMMEDIATE 'DELETE FROM "SALES"."TW_95F66C2B39BC_COPY"';
    EXECUTE IMMEDIATE 'INSERT INTO "SALES"."TW_95F66C2B39BC_COPY" SELECT * FROM "SALES"."TW_95F66C2B39BC_DETACHED"';
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_95F66C2B39BC_COPY"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_rows;
    CLOSE c1;
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_95F66C2B39BC_DETACHED"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_other;
    CLOSE c1;
    IF v_rows <> v_other THEN
      SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 19 failed: copy row count differs: run again';
    END IF;
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 4: nothing to copy');
  END IF;
END@
-- step 5: attach TW_95F66C2B39BC_COPY as partition P2024Q1 with its original range
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_COPY') AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 5: attaching partition "P2024Q1" from "TW_95F66C2B39BC_COPY"');
    EXECUTE IMMEDIATE 'ALTER TABLE "SALES"."ORDERS" ATTACH PARTITION "P2024Q1" STARTING FROM (''2024-01-01'') INCLUSIVE ENDING AT (''2024-04-01'') EXCLUSIVE FROM "SALES"."TW_95F66C2B39BC_COPY"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 5: nothing to attach');
  END IF;
END@
-- step 6: SET INTEGRITY for SALES.ORDERS (validates the attached range, maintains indexes)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND STATUS = 'C') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 6: SET INTEGRITY for "SALES"."ORDERS"');
    EXECUTE IMMEDIATE 'SET INTEGRITY FOR "SALES"."ORDERS" ALLOW WRITE ACCESS IMMEDIATE CHECKED';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 6: already done: the table is not in set integrity pending state');
  END IF;
END@
-- check 20: post-check: partition P2024Q1 is in table space TS_ORDERS_2024_FC (SYSCAT.DATAPARTITIONS.TBSPACEID) with an empty STATUS
SELECT RAISE_ERROR('75001', 'tierwise check 20 failed (see the script header)') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') FETCH FIRST 1 ROW ONLY@
-- check 21: before the drop: the attached partition P2024Q1 holds as many rows as the detached table TW_95F66C2B39BC_DETACHED (rows with the partitioning key in the partition's range; else TW_95F66C2B39BC_DETACHED is kept)
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
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') THEN
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
    SET v_sql = 'SELECT COUNT_BIG(*) FROM "SALES"."TW_95F66C2B39BC_DETACHED"';
    PREPARE s1 FROM v_sql;
    OPEN c1;
    FETCH c1 INTO v_other;
    CLOSE c1;
    IF v_rows <> v_other THEN
      SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'tierwise check 21 failed: row counts differ: detached table kept';
    END IF;
  END IF;
END@
-- step 7: drop the detached table TW_95F66C2B39BC_DETACHED (its rows are in the attached partition now)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = 'SALES' AND TABNAME = 'TW_95F66C2B39BC_DETACHED') AND EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONNAME = 'P2024Q1' AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024_FC') AND STATUS = '') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 7: dropping "TW_95F66C2B39BC_DETACHED"');
    EXECUTE IMMEDIATE 'DROP TABLE "SALES"."TW_95F66C2B39BC_DETACHED"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 7: already done: no detached table left');
  END IF;
END@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'finished: partition "P2024Q1" of "SALES"."ORDERS" is in "TS_ORDERS_2024_FC"');
END@
CONNECT RESET@
