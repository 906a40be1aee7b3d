--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: CHECK ONLY (changes nothing)
-- ================================================================================================
-- Moves:      data partition 3 (P2024Q3) of "SALES"."ORDERS", in table space "TS_ORDERS_2024Q3"
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier flash: storage group "SG_HOT"
-- To:         tier fc: storage group "SG_FC" (/db2/fc1, /db2/fc2)
-- Object:     partition SALES.ORDERS P2024Q3 (key SALESDB/partition/SALES.ORDERS/3)
-- Why:        sequential_read (TW601)
--             - hand-written: a partition alone in its table space (the table space route)
-- Predicted:  I/O wait n/a now -> 0.0 ms/s on tier fc
-- Size:       0.1 GB
-- Method:
--   the advice shows no other partition in table space TS_ORDERS_2024Q3: ALTER TABLESPACE ... USING
--   STOGROUP (online, asynchronous rebalance). The script first checks that the table space holds
--   only this partition; when something else is in it the script stops before changing anything:
--   unsupported here: review (partitions that the advice shows sharing a table space are scripted
--   with detach / copy / attach instead).
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs SYSCTRL or SYSADM (ALTER TABLESPACE; a storage group that must be created) and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS, MON_GET_REBALANCE_STATUS, MON_GET_TABLESPACE, MON_GET_CONTAINER (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
-- Operations:
--   Duration:    the script itself takes seconds; the rebalance then runs in the background after it ends: under a minute for 0.1 GB at ~100-200 MB/s (rebalance; speeds vary). Watch it with SELECT REBALANCER_STATUS, REBALANCER_EXTENTS_REMAINING, REBALANCER_EXTENTS_PROCESSED FROM TABLE(MON_GET_REBALANCE_STATUS('TS_ORDERS_2024Q3', -2)) AS R (no rows: finished)
--   Log volume:  small: the rebalance logs extent moves, not the rows; a DMS conversion logs its container changes
--   Blocking:    none for applications: TS_ORDERS_2024Q3 stays readable and writable; the rebalance competes with them for I/O on both storage groups. Dynamic SQL compiled with the old storage group's attributes (overhead, read rate) is soft-invalidated and recompiled; static packages keep the old costs until rebound
--   Backups:     the script stops while a BACKUP of the database runs (the rebalance would move the extents the backup reads); run it outside the backup window, and take a new full database backup after the rebalance ends: the table space's containers have changed
--   To abort:    ALTER TABLESPACE "TS_ORDERS_2024Q3" REBALANCE SUSPEND pauses the data movement (REBALANCE RESUME continues it); the storage group change itself is committed at once and is undone by the rollback script, not by cancelling
--   To recover:  run the script again: every step checks first; a suspended rebalance resumes with ALTER TABLESPACE "TS_ORDERS_2024Q3" REBALANCE RESUME (also at the next activation)
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 81ee850c3c26b75c8e99a0be201323e19d1b22bc7b79fe1a6819dcfdd3e9d01d (the forward plan; the rollback shows the same)
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
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): the rebalance this script starts moves every extent of the table space while the backup reads them, and ALTER TABLESPACE ... USING STOGROUP is not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: partition 3 of SALES.ORDERS is in table space TS_ORDERS_2024Q3
--   check 8: table space TS_ORDERS_2024Q3 holds only this partition (else: unsupported here, review - see the header)
--   check 9: table space TS_ORDERS_2024Q3 exists
--   check 10: table space TS_ORDERS_2024Q3 is in storage group SG_HOT or already in SG_FC
--   check 11: table space TS_ORDERS_2024Q3 is a regular or large table space that can use a storage group
--   check 12: no rebalance is running on TS_ORDERS_2024Q3
--   check 13: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
--   check 14: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 15: the paths of SG_FC have room for TS_ORDERS_2024Q3 (10 % headroom; storage is striped over the paths)
--   check 16: post-check: table space TS_ORDERS_2024Q3 uses storage group SG_FC [window run only]
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
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): the rebalance this script starts moves every extent of the table space while the backup reads them, and ALTER TABLESPACE ... USING STOGROUP is not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
-- check-only run: a warning, not a stop (it is about this moment)
BEGIN
  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'warning: check 6 failed: a BACKUP is running: wait, run again (now; the window run stops if it is still so)');
  END IF;
END@
-- check 7: partition 3 of SALES.ORDERS is in table space TS_ORDERS_2024Q3
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: partition not in its planned table space') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONID = 3 AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3')) FETCH FIRST 1 ROW ONLY@
-- check 8: table space TS_ORDERS_2024Q3 holds only this partition (else: unsupported here, review - see the header)
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: table space shared: unsupported here, review') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3') IN (TBSPACEID, COALESCE(INDEX_TBSPACEID, -1), COALESCE(LONG_TBSPACEID, -1)) AND NOT (TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS' AND DATAPARTITIONID = 3)) OR EXISTS (SELECT 1 FROM SYSCAT.TABLES AS T WHERE 'TS_ORDERS_2024Q3' IN (COALESCE(T.TBSPACE, ''), COALESCE(T.INDEX_TBSPACE, ''), COALESCE(T.LONG_TBSPACE, '')) AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS AS D WHERE D.TABSCHEMA = T.TABSCHEMA AND D.TABNAME = T.TABNAME)) OR EXISTS (SELECT 1 FROM SYSCAT.INDEXES AS I WHERE I.TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3') AND NOT EXISTS (SELECT 1 FROM SYSCAT.INDEXPARTITIONS AS P WHERE P.INDSCHEMA = I.INDSCHEMA AND P.INDNAME = I.INDNAME)) FETCH FIRST 1 ROW ONLY@
-- check 9: table space TS_ORDERS_2024Q3 exists
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: table space TS_ORDERS_2024Q3 not found') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3') FETCH FIRST 1 ROW ONLY@
-- check 10: table space TS_ORDERS_2024Q3 is in storage group SG_HOT or already in SG_FC
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed (see the script header)') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3' AND COALESCE(SGNAME, '') NOT IN ('SG_HOT', 'SG_FC') FETCH FIRST 1 ROW ONLY@
-- check 11: table space TS_ORDERS_2024Q3 is a regular or large table space that can use a storage group
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed (see the script header)') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3' AND COALESCE(SGNAME, '') <> 'SG_FC' AND (DATATYPE IN ('T', 'U') OR (TBSPACETYPE = 'S' AND SGNAME IS NULL)) FETCH FIRST 1 ROW ONLY@
-- check 12: no rebalance is running on TS_ORDERS_2024Q3
-- check-only run: a warning, not a stop (it is about this moment)
BEGIN
  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_REBALANCE_STATUS('TS_ORDERS_2024Q3', -2)) AS R WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3' AND COALESCE(SGNAME, '') <> 'SG_FC')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'warning: check 12 failed: a rebalance is running: wait for it (now; the window run stops if it is still so)');
  END IF;
END@
-- check 13: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed: SG_FC exists on other paths') FROM (VALUES ('/db2/fc1'), ('/db2/fc2')) AS W(PATH) WHERE EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC') AND NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH) FETCH FIRST 1 ROW ONLY@
-- check 14: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
BEGIN
  IF NOT (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check 14 not run now: storage group SG_FC does not exist yet (step 1 creates it on /db2/fc1, /db2/fc2)');
  END IF;
END@
SELECT RAISE_ERROR('75001', 'tierwise check 14 failed: no usable storage path in SG_FC') FROM SYSIBM.SYSDUMMY1 WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) AND (NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL)) FETCH FIRST 1 ROW ONLY@
-- check 15: the paths of SG_FC have room for TS_ORDERS_2024Q3 (10 % headroom; storage is striped over the paths)
BEGIN
  IF NOT (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check 15 not run now: storage group SG_FC does not exist yet (step 1 creates it on /db2/fc1, /db2/fc2)');
  END IF;
END@
SELECT RAISE_ERROR('75001', 'tierwise check 15 failed: not enough free space in SG_FC') FROM SYSIBM.SYSDUMMY1 WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) AND (EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024Q3' AND COALESCE(SGNAME, '') <> 'SG_FC') AND COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'), 0) < (SELECT SUM(T.TBSP_USED_PAGES * T.TBSP_PAGE_SIZE) FROM TABLE(MON_GET_TABLESPACE('TS_ORDERS_2024Q3', -1)) AS T) * 1.10) FETCH FIRST 1 ROW ONLY@
-- check 16: post-check: table space TS_ORDERS_2024Q3 uses storage group SG_FC [window run only]
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check only: every check above passed or warned; nothing was changed');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'the window run will (each step checks first and says ''already done'' when there is nothing to do):');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 1: storage group SG_FC, created only if missing');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 2: re-point TS_ORDERS_2024Q3 at SG_FC (online; the rebalance runs in the background after the commit)');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 3: after a DMS conversion, REBALANCE moves TS_ORDERS_2024Q3 off its old (non automatic storage) containers');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'estimated duration: the script itself takes seconds; the rebalance then runs in the background after it ends: under a minute for 0.1 GB at ~100-200 MB/s (rebalance; speeds vary). Watch it with SELECT REBALANCER_STATUS, REBALANCER_EXTENTS_REMAINING, REBALANCER_EXTENTS_PROCESSED FROM TABLE(MON_GET_REBALANCE_STATUS(''TS_ORDERS_2024Q3'', -2)) AS R (no rows: finished)');
END@
CONNECT RESET@
