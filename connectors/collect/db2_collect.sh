#!/bin/sh
# tierwise collection script for Db2 LUW: table space, table partition, transaction log, buffer
# pool and table space container I/O.
#
# WHAT IT READS
#   Runs db2_collect.sql (next to this file) SAMPLES times, INTERVAL_SECONDS apart, through the
#   db2 command line processor: MON_GET_TABLESPACE, MON_GET_TABLE, MON_GET_TRANSACTION_LOG,
#   MON_GET_BUFFERPOOL, MON_GET_CONTAINER and MON_GET_DATABASE (all members, summed),
#   SYSCAT.TABLESPACES, SYSCAT.DATAPARTITIONS, SYSCAT.DATAPARTITIONEXPRESSION, SYSCAT.BUFFERPOOLS,
#   SYSIBMADM.DBPATHS, ENV_GET_SYSTEM_RESOURCES and SYSIBMADM.ENV_INST_INFO. Read only.
#
# LEAST PRIVILEGES
#   CONNECT on the database; EXECUTE on SYSPROC.MON_GET_TABLESPACE, MON_GET_TABLE,
#   MON_GET_TRANSACTION_LOG, MON_GET_BUFFERPOOL, MON_GET_CONTAINER, MON_GET_DATABASE and
#   ENV_GET_SYSTEM_RESOURCES (or SQLADM); SELECT on the catalog and SYSIBMADM views above
#   (PUBLIC has it unless the database is RESTRICTIVE).
#   Details in db2_collect.sql.
#
# HOW TO RUN (as a user whose environment has the db2 CLP: . ~db2inst1/sqllib/db2profile)
#   sh db2_collect.sh DATABASE SAMPLES INTERVAL_SECONDS OUTPUT_DIR
#   e.g.  sh db2_collect.sh SALES 12 300 /tmp/tierwise      (12 samples, 5 minutes apart)
#   It connects with the current operating system user (implicit authentication). To use
#   another user id, set TIERWISE_DB2_USER; the CLP then prompts for the password.
#
# WHAT IT WRITES (in OUTPUT_DIR, replacing files of the same name)
#   tablespaces.csv, table_partitions.csv, transaction_log.csv, bufferpools.csv, containers.csv:
#   a header line naming the columns, then the rows of every sample. UTF-8 CSV: comma separated, text in double quotes
#   with any double quote doubled. Import them with `tierwise import OUTPUT_DIR/*.csv`.
#   Exit status 0 when all samples were written, 1 when the database reported an error (its
#   message is printed; the files then hold only the samples taken before it), 2 on bad usage.

set -eu

TABLESPACES_HEADER='sample_time,server_name,db_name,db_conn_time,tbsp_name,tbsp_id,tbsp_type,tbsp_content_type,storage_group_name,tbsp_page_size,tbsp_used_pages,tbsp_total_pages,pool_data_l_reads,pool_data_p_reads,pool_async_data_reads,pool_index_l_reads,pool_index_p_reads,pool_async_index_reads,pool_temp_data_l_reads,pool_temp_data_p_reads,pool_temp_index_l_reads,pool_temp_index_p_reads,pool_xda_l_reads,pool_xda_p_reads,pool_async_xda_reads,pool_col_l_reads,pool_col_p_reads,pool_async_col_reads,pool_read_time,pool_async_read_time,pool_data_writes,pool_index_writes,pool_xda_writes,pool_col_writes,pool_write_time,vectored_ios,pages_from_vectored_ios,block_ios,pages_from_block_ios,direct_reads,direct_read_reqs,direct_read_time,direct_writes,direct_write_reqs,direct_write_time'
TABLE_PARTITIONS_HEADER='sample_time,server_name,db_name,db_conn_time,tabschema,tabname,data_partition_id,datapartitionname,tbsp_name,storage_group_name,tbsp_page_size,lowvalue,lowinclusive,highvalue,highinclusive,card,data_object_l_pages,index_object_l_pages,table_scans,rows_read,rows_inserted,rows_updated,rows_deleted,object_data_l_reads,object_data_p_reads,object_data_gbp_l_reads,direct_read_reqs,direct_write_reqs'
TRANSACTION_LOG_HEADER='sample_time,server_name,db_name,db_conn_time,log_path,log_size_bytes,log_writes,log_write_time,num_log_write_io,log_reads,log_read_time,num_log_read_io'
BUFFERPOOLS_HEADER='sample_time,server_name,db_name,db_conn_time,bp_name,bp_page_size,bp_cur_buffsz,pool_data_l_reads,pool_data_p_reads,pool_async_data_reads,pool_index_l_reads,pool_index_p_reads,pool_async_index_reads,pool_temp_data_l_reads,pool_temp_data_p_reads,pool_temp_index_l_reads,pool_temp_index_p_reads,pool_data_lbp_pages_found,pool_async_data_lbp_pages_found,pool_read_time,pool_async_read_time,pool_data_writes,pool_index_writes,pool_write_time,unread_prefetch_pages'
CONTAINERS_HEADER='sample_time,server_name,db_name,db_conn_time,tbsp_name,container_name,container_id,db_storage_path_id,fs_id,fs_total_size,fs_used_size,tbsp_page_size,total_pages,usable_pages,pages_read,pages_written,direct_reads,direct_writes,pool_read_time,direct_read_time,direct_write_time'

usage() {
    echo "usage: sh db2_collect.sh DATABASE SAMPLES INTERVAL_SECONDS OUTPUT_DIR" >&2
    echo "       e.g. sh db2_collect.sh SALES 12 300 /tmp/tierwise" >&2
    exit 2
}

[ "$#" -eq 4 ] || usage
database=$1
samples=$2
interval=$3
out_dir=$4

case $database in
    '' | *[!A-Za-z0-9_@#\$]*) echo "db2_collect.sh: '$database' is not a database name or alias" >&2; usage ;;
esac
case $samples in
    '' | *[!0-9]*) echo "db2_collect.sh: SAMPLES must be a whole number" >&2; usage ;;
esac
case $interval in
    '' | *[!0-9]*) echo "db2_collect.sh: INTERVAL_SECONDS must be a whole number" >&2; usage ;;
esac
[ "$samples" -ge 1 ] || { echo "db2_collect.sh: SAMPLES must be 1 or more" >&2; usage; }
[ "$interval" -ge 1 ] || { echo "db2_collect.sh: INTERVAL_SECONDS must be 1 or more" >&2; usage; }

if ! command -v db2 >/dev/null 2>&1; then
    echo "db2_collect.sh: the db2 command is not on PATH; run . ~db2inst1/sqllib/db2profile first" >&2
    exit 2
fi

script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
sql_file=$script_dir/db2_collect.sql
[ -r "$sql_file" ] || { echo "db2_collect.sh: cannot read $sql_file" >&2; exit 2; }
mkdir -p -- "$out_dir"
out_dir=$(CDPATH='' cd -- "$out_dir" && pwd)

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/tierwise_db2.XXXXXX")
cleanup() {
    db2 connect reset >/dev/null 2>&1 || true
    db2 terminate >/dev/null 2>&1 || true
    rm -rf -- "$work_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '%s\n' "$TABLESPACES_HEADER" >"$out_dir/tablespaces.csv"
printf '%s\n' "$TABLE_PARTITIONS_HEADER" >"$out_dir/table_partitions.csv"
printf '%s\n' "$TRANSACTION_LOG_HEADER" >"$out_dir/transaction_log.csv"
printf '%s\n' "$BUFFERPOOLS_HEADER" >"$out_dir/bufferpools.csv"
printf '%s\n' "$CONTAINERS_HEADER" >"$out_dir/containers.csv"

# EXPORT writes its files relative to the directory the CLP back end started in, so change
# there before the first db2 command of this shell.
cd -- "$work_dir"

if [ -n "${TIERWISE_DB2_USER:-}" ]; then
    connect_rc=0
    db2 connect to "$database" user "$TIERWISE_DB2_USER" || connect_rc=$?
else
    connect_rc=0
    db2 connect to "$database" >connect.log 2>&1 || connect_rc=$?
fi
if [ "$connect_rc" -ge 4 ]; then
    [ -f connect.log ] && cat connect.log >&2
    echo "db2_collect.sh: cannot connect to $database (db2 return code $connect_rc)" >&2
    exit 1
fi

sample=1
while [ "$sample" -le "$samples" ]; do
    rm -f -- tablespaces.del table_partitions.del transaction_log.del bufferpools.del containers.del ./*.msg
    run_rc=0
    db2 -td@ -s -f "$sql_file" >run.log 2>&1 || run_rc=$?
    # CLP return codes: 0 ok, 1 no rows, 2 warning, 4 error, 8 CLP system error
    if [ "$run_rc" -ge 4 ]; then
        cat run.log >&2
        echo "db2_collect.sh: sample $sample of $samples failed (db2 return code $run_rc)" >&2
        exit 1
    fi
    for name in tablespaces table_partitions transaction_log bufferpools containers; do
        if [ -f "$name.del" ]; then
            cat -- "$name.del" >>"$out_dir/$name.csv"
        fi
    done
    echo "db2_collect.sh: sample $sample of $samples written" >&2
    if [ "$sample" -lt "$samples" ]; then
        sleep "$interval"
    fi
    sample=$((sample + 1))
done
