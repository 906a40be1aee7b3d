--#SET TERMINATOR @
-- ================================================================================================
-- tierwise DB2 CLP migration script: FORWARD
-- ================================================================================================
-- Moves:      the active log of database SALESDB
-- Server:     db2host01/db2inst1
-- Database:   SALESDB
-- From:       tier unknown: log path /db2/log/SALESDB/
-- To:         tier fc: log path /db2/fc1/log/
-- Object:     log_file SALESDB transaction log (key SALESDB/log)
-- Why:        log_write (TW202)
--             - TW202 transaction log: sequential writes that array cache absorbs (1.5 ms per write); flash only above 3,000 writes/s and 5.0 ms
--             - n/a average read, 0 reads/s, n/a average read latency, 15 writes/s, heat 55,200.0 I/O per GB-hour (2.89x the database average)
-- Predicted:  I/O wait 22.9 ms/s now -> 22.9 ms/s on tier fc
-- Size:       1.0 GB
-- Method:
--   CALL SYSPROC.ADMIN_CMD('UPDATE DB CFG USING NEWLOGPATH "/db2/fc1/log/"') (IBM Db2 docs: UPDATE DATABASE
--   CONFIGURATION command using the ADMIN_CMD procedure). It only records the new path: DB2 creates the
--   log files there (under NODE0000/LOGSTREAM0000/) when the database is next activated.
-- Limits and notes:
--   - RESTART NEEDED: takes effect at the next activation of the database (all applications disconnected, then ACTIVATE DATABASE or the first connection); until then the log stays where it is.
--   - Needs SYSADM, SYSCTRL or SYSMAINT (UPDATE DB CFG through SYSPROC.ADMIN_CMD, EXECUTE on ADMIN_CMD), SELECT on SYSIBMADM.DBCFG and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS (or DBADM, SQLADM or DATAACCESS, which include it; none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a non-restrictive database). Db2 10.5 or later (MON_GET_HADR).
--   - The directory must exist and belong to the instance owner.
--   - the current tier is unknown: the policy matches no tier to its location
-- Operations:
--   Duration:    seconds now; the log moves at the next activation of the database
--   Log volume:  next to none: one configuration update
--   Blocking:    none now; the reactivation needs every application disconnected
--   Backups:     the script stops before any change while a BACKUP of the database runs (run it again afterwards); take a full database backup after the reactivation (the log path changed)
--   To abort:    nothing to abort: one configuration update
--   To recover:  run the rollback script to record the old path again before the reactivation
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 493097d87d40de9e9dfca7e59b5ce71adbb8716f551fe29ff36f24fbbcefc15d (the forward plan; the rollback shows the same)
-- Run:
--   db2 -td@ -vsf <this file>   (as the instance owner; it connects to SALESDB itself)
--   Then, in a change window: db2 deactivate db <db> (all applications disconnected), db2 activate db <db>.
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
--   check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): UPDATE DB CFG ... NEWLOGPATH is not among the operations IBM lists as able to run beside an online backup, and the reactivation that applies it would end the backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
--   check 7: the log is under /db2/log/SALESDB/ today, or already set to move to / moved to /db2/fc1/log/
--   check 8: post-check: SYSIBMADM.DBCFG shows newlogpath (pending) under /db2/fc1/log/, or logpath under it with nothing else pending
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
-- check 6: no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2), every member): UPDATE DB CFG ... NEWLOGPATH is not among the operations IBM lists as able to run beside an online backup, and the reactivation that applies it would end the backup (IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run the script again. Nothing was changed
SELECT RAISE_ERROR('75001', 'tierwise check 6 failed: a BACKUP is running: wait, run again') FROM TABLE(MON_GET_UTILITY(-2)) AS U WHERE U.UTILITY_TYPE IN ('BACKUP') FETCH FIRST 1 ROW ONLY@
-- check 7: the log is under /db2/log/SALESDB/ today, or already set to move to / moved to /db2/fc1/log/
SELECT RAISE_ERROR('75001', 'tierwise check 7 failed: log path not as planned: advice out of date') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'logpath' AND ((RTRIM(VALUE) = '/db2/log/SALESDB' OR LEFT(VALUE, 17) IN ('/db2/log/SALESDB/', '/db2/log/SALESDB' || CHR(92))) OR (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92))))) AND NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) FETCH FIRST 1 ROW ONLY@
-- step 1: record the new log path /db2/fc1/log/, unless the log is there already (SYSIBMADM.DBCFG logpath) or the move there is pending (newlogpath)
BEGIN
  IF EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'logpath' AND (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) AND NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND COALESCE(VALUE, '') <> '' AND NOT (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: already done: the active log is under /db2/fc1/log/ (logpath); NEWLOGPATH not set again');
  ELSEIF EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) THEN
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: already done: NEWLOGPATH is /db2/fc1/log/, pending until the next activation');
  ELSE
    CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'step 1: recording NEWLOGPATH /db2/fc1/log/');
    CALL SYSPROC.ADMIN_CMD('UPDATE DB CFG USING NEWLOGPATH "/db2/fc1/log/"');
  END IF;
END@
-- check 8: post-check: SYSIBMADM.DBCFG shows newlogpath (pending) under /db2/fc1/log/, or logpath under it with nothing else pending
SELECT RAISE_ERROR('75001', 'tierwise check 8 failed: post-check: new log path not recorded') FROM SYSIBM.SYSDUMMY1 WHERE NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) AND NOT (EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'logpath' AND (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92)))) AND NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND COALESCE(VALUE, '') <> '' AND NOT (RTRIM(VALUE) = '/db2/fc1/log' OR LEFT(VALUE, 13) IN ('/db2/fc1/log/', '/db2/fc1/log' || CHR(92))))) FETCH FIRST 1 ROW ONLY@
BEGIN
  CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, 'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || 'finished: the log is (or moves at the next activation of the database) under /db2/fc1/log/');
END@
CONNECT RESET@
