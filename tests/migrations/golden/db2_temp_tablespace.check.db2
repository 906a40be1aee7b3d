--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: CHECK ONLY (changes nothing)
-- ================================================================================================
-- Moves:      temporary table space "TEMPSPACE1" of database SALESDB
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier unknown: no storage group (DMS containers)
-- To:         tier fc: storage group "SG_FC" (/db2/fc1, /db2/fc2)
-- Object:     tempdb TEMPSPACE1 (key SALESDB/tablespace/TEMPSPACE1)
-- Why:        tempdb (TW302)
--             - TW302 tempdb: no evidence for flash (3 I/O per second, worst 2.7 ms; needs 1,000/s and 10.0 ms)
--             - 6.9 KB average read, 2 reads/s, 2.7 ms average read latency, 1 writes/s, 45 % prefetch, 2 % read-miss, heat 11,808,768.0 I/O per GB-hour (617.83x the database average)
-- Predicted:  I/O wait 7.7 ms/s now -> 7.7 ms/s on tier fc
-- Size:       0.0 GB
-- Method:
--   CREATE SYSTEM (or USER, like the old one: read from SYSCAT.TABLESPACES at run time) TEMPORARY TABLESPACE
--   "TEMPSPACE1_FC" on the target storage group, like "TEMPSPACE1" (page size, extent size,
--   buffer pool), then DROP TABLESPACE "TEMPSPACE1": automatic storage temporary table spaces cannot
--   change their storage group (IBM Db2 docs, "Temporary table spaces": a rebalance returns SQL0109N). The new
--   name replaces the old one. A user temporary table space: the USE privileges of the old one are granted on
--   the new one, and the DROP waits until no declared or created temporary table is in it (IBM Db2 docs,
--   "Dropping table spaces"; SYSIBMADM.ADMINTEMPTABLES shows them).
-- Limits and notes:
--   - Not supported in pureScale (checked).
--   - Needs SYSCTRL or SYSADM (CREATE / DROP TABLESPACE, a new storage group, GRANT USE OF TABLESPACE), SELECT on SYSIBMADM.ADMINTEMPTABLES and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - No restart needed: new work uses the new table space at once; DROP fails while a running query uses the old one (run the script again later).
--   - User temporary: applications that name the table space (DECLARE GLOBAL TEMPORARY TABLE ... IN "TEMPSPACE1") must use "TEMPSPACE1_FC"; without IN, Db2 picks one they have USE of. A created temporary table defined in it stops the script before anything changes (move it by hand).
--   - the current tier is unknown: the policy matches no tier to its location
-- Operations:
--   Duration:    seconds: catalog changes only (DROP TABLESPACE fails, and the script stops, while the old one is in use)
--   Log volume:  a few catalog log records
--   Blocking:    none for applications: new work uses the new table space at once; nothing waits on the DROP
--   Backups:     the script stops before any change while a BACKUP of the database runs (run it again afterwards); otherwise no effect on backup jobs (temporary table spaces are not backed up)
--   To abort:    interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again
--   To recover:  run the script again later: it carries on (the new table space is kept, the old one dropped once free)
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 6aa7b31f807dd6bc2f2121464e987766ea341bbce8ac9ec6509eaa3be2fd94e9 (the forward plan; the rollback shows the same)
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
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): CREATE / DROP TABLESPACE are not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: table space TEMPSPACE1 is a system or user temporary table space, or already replaced by TEMPSPACE1_FC
--   check 8: table space TEMPSPACE1_FC, if it exists, is temporary of the same kind as TEMPSPACE1 in storage group SG_FC
--   check 9: no created temporary table is defined in TEMPSPACE1 (its definition would block the DROP: move it by hand)
--   check 10: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
--   check 11: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
--   check 12: no declared or created temporary table is in TEMPSPACE1 right now (SYSIBMADM.ADMINTEMPTABLES; they block the DROP: run the script again when the applications using them have ended)
--   check 13: post-check: TEMPSPACE1_FC is a temporary table space in SG_FC and TEMPSPACE1 is gone [window run only]
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
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): CREATE / DROP TABLESPACE are not among the operations IBM lists as able to run beside an online backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
-- check-only run: a warning, not a stop (it is about this moment)
BEGIN
  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'warning: check 6 failed: a BACKUP is running: wait, run again (now; the window run stops if it is still so)');
  END IF;
END@
-- check 7: table space TEMPSPACE1 is a system or user temporary table space, or already replaced by TEMPSPACE1_FC
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: TEMPSPACE1 not temporary') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TEMPSPACE1' AND DATATYPE IN ('T', 'U')) AND NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TEMPSPACE1_FC') FETCH FIRST 1 ROW ONLY@
-- check 8: table space TEMPSPACE1_FC, if it exists, is temporary of the same kind as TEMPSPACE1 in storage group SG_FC
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: TEMPSPACE1_FC exists elsewhere') FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TEMPSPACE1_FC' AND (DATATYPE NOT IN ('T', 'U') OR COALESCE(SGNAME, '') <> 'SG_FC' OR DATATYPE <> COALESCE((SELECT DATATYPE FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TEMPSPACE1'), DATATYPE)) FETCH FIRST 1 ROW ONLY@
-- check 9: no created temporary table is defined in TEMPSPACE1 (its definition would block the DROP: move it by hand)
SELECT RAISE_ERROR('75001', 'tierwise check 9 failed: a created temp table is defined in it') FROM SYSCAT.TABLES WHERE TYPE = 'G' AND TBSPACE = 'TEMPSPACE1' FETCH FIRST 1 ROW ONLY@
-- check 10: storage group SG_FC, if it exists already, has every planned path (/db2/fc1, /db2/fc2; ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be another tier. Nothing was changed: review the group or the policy's locations
SELECT RAISE_ERROR('75001', 'tierwise check 10 failed: SG_FC exists on other paths') FROM (VALUES ('/db2/fc1'), ('/db2/fc2')) AS W(PATH) WHERE EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC') AND NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH) FETCH FIRST 1 ROW ONLY@
-- check 11: storage group SG_FC has a storage path that is not DROP_PENDING and whose free space is known (SYSPROC.ADMIN_GET_STORAGE_PATHS)
BEGIN
  IF NOT (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check 11 not run now: storage group SG_FC does not exist yet (step 1 creates it on /db2/fc1, /db2/fc2)');
  END IF;
END@
SELECT RAISE_ERROR('75001', 'tierwise check 11 failed: no usable storage path in SG_FC') FROM SYSIBM.SYSDUMMY1 WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC')) AND (NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_FC', -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL)) FETCH FIRST 1 ROW ONLY@
-- check 12: no declared or created temporary table is in TEMPSPACE1 right now (SYSIBMADM.ADMINTEMPTABLES; they block the DROP: run the script again when the applications using them have ended)
-- check-only run: a warning, not a stop (it is about this moment)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSIBMADM.ADMINTEMPTABLES AS T WHERE T.TBSP_ID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TEMPSPACE1')) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'warning: check 12 failed: temp tables in use in it: run again later (now; the window run stops if it is still so)');
  END IF;
END@
-- check 13: post-check: TEMPSPACE1_FC is a temporary table space in SG_FC and TEMPSPACE1 is gone [window run only]
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'check only: every check above passed or warned; nothing was changed');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'the window run will (each step checks first and says ''already done'' when there is nothing to do):');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 1: storage group SG_FC, created only if missing');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 2: table space TEMPSPACE1_FC in SG_FC, created only if missing, like TEMPSPACE1');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 3: a user temporary table space: the users, groups and roles with USE of TEMPSPACE1 get USE of TEMPSPACE1_FC (nothing to do for a system temporary one)');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || '  step 4: drop TEMPSPACE1 (fails while a query uses it: run again in a quieter moment)');
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'estimated duration: seconds: catalog changes only (DROP TABLESPACE fails, and the script stops, while the old one is in use)');
END@
CONNECT RESET@
