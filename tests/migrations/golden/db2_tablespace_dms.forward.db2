--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: FORWARD
-- ================================================================================================
-- Moves:      table space "TS_LEGACY" of database SALESDB
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier unknown: no storage group (DMS containers)
-- To:         tier sata: storage group "SG_SATA" (/db2/sata1)
-- Object:     tablespace TS_LEGACY (key SALESDB/tablespace/TS_LEGACY)
-- Why:        cold (TW401)
--             - TW401 cold: 0.4 I/O per second; the cheapest tier serves it
--             - (test fixture: a DMS table space with its own containers, in no storage group)
-- Predicted:  I/O wait 3.2 ms/s now -> 9.8 ms/s on tier sata
-- Size:       2.0 GB
-- Method:
--   ALTER TABLESPACE ... USING STOGROUP: online; new containers on the target paths, the old ones are
--   dropped after an asynchronous rebalance that starts at the commit. A DMS table space is converted
--   to automatic storage first (one-way) and then rebalanced.
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs SYSCTRL or SYSADM (ALTER TABLESPACE; a storage group that must be created) and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS, MON_GET_REBALANCE_STATUS, MON_GET_TABLESPACE, MON_GET_CONTAINER (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - The table space is DMS today: the move converts it to automatic storage, which cannot be undone; the rollback puts it in IBMSTOGROUP.
--   - the current tier is unknown: the policy matches no tier to its location
-- Operations:
--   Duration:    the script itself takes seconds; the rebalance then runs in the background after it ends: under a minute for 2.0 GB at ~100-200 MB/s (rebalance; speeds vary). Watch it with SELECT REBALANCER_STATUS, REBALANCER_EXTENTS_REMAINING, REBALANCER_EXTENTS_PROCESSED FROM TABLE(MON_GET_REBALANCE_STATUS('TS_LEGACY', -2)) AS R (no rows: finished)
--   Log volume:  small: the rebalance logs extent moves, not the rows; a DMS conversion logs its container changes
--   Blocking:    none for applications: TS_LEGACY stays readable and writable; the rebalance competes with them for I/O on both storage groups. Dynamic SQL compiled with the old storage group's attributes (overhead, read rate) is soft-invalidated and recompiled; static packages keep the old costs until rebound
--   Backups:     the script stops while a BACKUP of the database runs (the rebalance would move the extents the backup reads); run it outside the backup window, and take a new full database backup after the rebalance ends: the table space's containers have changed
--   To abort:    ALTER TABLESPACE "TS_LEGACY" REBALANCE SUSPEND pauses the data movement (REBALANCE RESUME continues it); the storage group change itself is committed at once and is undone by the rollback script, not by cancelling
--   To recover:  run the script again: every step checks first; a suspended rebalance resumes with ALTER TABLESPACE "TS_LEGACY" REBALANCE RESUME (also at the next activation)
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 0dd54d4fadf397b1b0dd766d5306ce68340e22bef55fb2e870e292df1548d989 (the forward plan; the rollback shows the same)
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
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): the rebalance this script starts moves every extent of the table space while the backup reads them, and ALTER TABLESPACE ... USING STOGROUP is not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: table space TS_LEGACY exists
--   check 8: table space TS_LEGACY is in storage group (none: DMS) or already in SG_SATA
--   check 9: table space TS_LEGACY is a regular or large table space that can use a storage group
--   check 10: no rebalance is running on TS_LEGACY
--   check 11: storage group SG_SATA, if it exists already, has every planned path (/db2/sata1; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
--   check 12: storage group SG_SATA has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 13: the paths of SG_SATA have room for TS_LEGACY (10 % headroom; storage is striped over the paths)
--   check 14: post-check: table space TS_LEGACY uses storage group SG_SATA
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
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a BACKUP is running: wait, run again') FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP') FETCH FIRST 1 ROW ONLY@
-- check 7: table space TS_LEGACY exists
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: table space TS_LEGACY not found') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY') FETCH FIRST 1 ROW ONLY@
-- check 8: table space TS_LEGACY is in storage group (none: DMS) or already in SG_SATA
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: TS_LEGACY is elsewhere: advice out of date') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY' AND COALESCE(SGNAME, '') NOT IN ('', 'SG_SATA') FETCH FIRST 1 ROW ONLY@
-- check 9: table space TS_LEGACY is a regular or large table space that can use a storage group
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: TS_LEGACY: temporary or SMS, unsupported') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY' AND COALESCE(SGNAME, '') <> 'SG_SATA' AND (DATATYPE IN ('T', 'U') OR (TBSPACETYPE = 'S' AND SGNAME IS NULL)) FETCH FIRST 1 ROW ONLY@
-- check 10: no rebalance is running on TS_LEGACY
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: a rebalance is running: wait for it') FROM TABLE(MON_GET_REBALANCE_STATUS('TS_LEGACY', -2)) AS R WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY' AND COALESCE(SGNAME, '') <> 'SG_SATA') FETCH FIRST 1 ROW ONLY@
-- check 11: storage group SG_SATA, if it exists already, has every planned path (/db2/sata1; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed: SG_SATA exists on other paths') FROM (VALUES ('/db2/sata1')) AS W(PATH) WHERE EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_SATA') AND NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_SATA', -1)) AS P WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH) FETCH FIRST 1 ROW ONLY@
-- step 1: storage group SG_SATA, created only if missing
BEGIN
  IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_SATA') THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: already done: storage group "SG_SATA" exists');
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: creating storage group "SG_SATA" (/db2/sata1)');
    EXECUTE IMMEDIATE 'CREATE STOGROUP "SG_SATA" ON ''/db2/sata1'' OVERHEAD 12 DEVICE READ RATE 70 DATA TAG 9';
  END IF;
END@
-- check 12: storage group SG_SATA has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
SELECT RAISE_ERROR('75001', 'tierwise check 12 failed: no usable storage path in SG_SATA') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_SATA', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL) FETCH FIRST 1 ROW ONLY@
-- check 13: the paths of SG_SATA have room for TS_LEGACY (10 % headroom; storage is striped over the paths)
SELECT RAISE_ERROR('75001', 'tierwise check 13 failed: not enough free space in SG_SATA') FROM SYSIBM.SYSDUMMY1 WHERE EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY' AND COALESCE(SGNAME, '') <> 'SG_SATA') AND COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_SATA', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'), 0) < (SELECT SUM(T.TBSP_USED_PAGES * T.TBSP_PAGE_SIZE) FROM TABLE(MON_GET_TABLESPACE('TS_LEGACY', -1)) AS T) * 1.10 FETCH FIRST 1 ROW ONLY@
-- step 2: re-point TS_LEGACY at SG_SATA (online; the rebalance runs in the background after the commit)
BEGIN
  DECLARE v_sg VARCHAR(128);
  SELECT SGNAME INTO v_sg FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY';
  IF v_sg = 'SG_SATA' THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: already done: "TS_LEGACY" uses storage group "SG_SATA"');
  ELSEIF v_sg IS NULL THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: converting "TS_LEGACY" to automatic storage in "SG_SATA"');
    EXECUTE IMMEDIATE 'ALTER TABLESPACE "TS_LEGACY" MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG_SATA"';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 2: moving "TS_LEGACY" to storage group "SG_SATA"');
    EXECUTE IMMEDIATE 'ALTER TABLESPACE "TS_LEGACY" USING STOGROUP "SG_SATA"';
  END IF;
END@
-- step 3: after a DMS conversion, REBALANCE moves TS_LEGACY off its old (non automatic storage) containers
BEGIN
  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_CONTAINER('TS_LEGACY', -1)) AS C WHERE COALESCE(C.DB_STORAGE_PATH_ID, -1) < 0)
     AND NOT EXISTS (SELECT 1 FROM TABLE(MON_GET_REBALANCE_STATUS('TS_LEGACY', -2)) AS R) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: rebalancing "TS_LEGACY" off its old containers');
    EXECUTE IMMEDIATE 'ALTER TABLESPACE "TS_LEGACY" REBALANCE';
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 3: nothing to do: no containers outside the storage paths');
  END IF;
END@
-- check 14: post-check: table space TS_LEGACY uses storage group SG_SATA
SELECT RAISE_ERROR('75001', 'tierwise check 14 failed: post-check: TS_LEGACY is not in SG_SATA') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_LEGACY' AND COALESCE(SGNAME, '') <> 'SG_SATA' FETCH FIRST 1 ROW ONLY@
-- the rebalance progress (no rows: finished; the old containers are dropped when it is done); run it again to watch
SELECT VARCHAR(R.TBSP_NAME, 30) AS TBSP_NAME, R.REBALANCER_MODE, R.REBALANCER_STATUS, R.REBALANCER_EXTENTS_REMAINING, R.REBALANCER_EXTENTS_PROCESSED, R.REBALANCER_START_TIME FROM TABLE(MON_GET_REBALANCE_STATUS('TS_LEGACY', -2)) AS R@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'finished: "TS_LEGACY" uses "SG_SATA"; data moves in the background until the rebalance ends');
END@
CONNECT RESET@
