#!/usr/bin/env bash
# Runs the standard sysbench OLTP tests against a MySQL-protocol server on 127.0.0.1:PORT
# (user root, empty password): for each test and each --db-ps-mode (auto, disable):
# prepare, run (SB_TIME seconds, SB_THREADS threads), cleanup.
#
# usage: tests/sysbench/run.sh PORT
# env:   SB_TIME (3) seconds per run, SB_THREADS (4), SB_TABLE_SIZE (10000), SB_TABLES (2),
#        SB_ENGINE (myisam) for --mysql-storage-engine, SB_TESTS to run a subset,
#        SB_PS_MODES ("auto disable"), SB_LOGDIR (a fresh temp dir) where the logs go,
#        SB_DB (sbtest) database that is (re)created for the run.
# Exit status: 0 when every step succeeded; non-zero (with the offending log tail printed) on any
# sysbench error, any reconnect, or a run that completed zero transactions or queries.
set -euo pipefail

PORT=${1:?usage: $0 PORT}
SB_TIME=${SB_TIME:-3}
SB_THREADS=${SB_THREADS:-4}
SB_TABLE_SIZE=${SB_TABLE_SIZE:-10000}
SB_TABLES=${SB_TABLES:-2}
SB_ENGINE=${SB_ENGINE:-myisam}
SB_DB=${SB_DB:-sbtest}
SB_PS_MODES=${SB_PS_MODES:-"auto disable"}
SB_TESTS=${SB_TESTS:-"oltp_point_select oltp_read_only oltp_read_write oltp_write_only oltp_update_index oltp_update_non_index oltp_delete oltp_insert select_random_points select_random_ranges bulk_insert"}
LOGDIR=${SB_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/strata-sysbench.XXXXXX")}
mkdir -p "$LOGDIR"

command -v sysbench >/dev/null || { echo "sysbench is not installed"; exit 2; }

# Creates the database through sysbench itself (no mysql client needed): a tiny Lua script.
SETUP_LUA="$LOGDIR/setup.lua"
cat >"$SETUP_LUA" <<LUA
function event() end
function prepare()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("DROP DATABASE IF EXISTS $SB_DB")
  con:query("CREATE DATABASE $SB_DB")
  con:disconnect()
end
function cleanup()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("DROP DATABASE IF EXISTS $SB_DB")
  con:disconnect()
end
LUA

conn=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root --mysql-password=)

fail() { # fail LOGFILE MESSAGE
  echo "FAILED: $2"
  echo "---- last lines of $1 ----"
  tail -n 30 "$1" | cut -c1-400 || true
  exit 1
}

check_log() { # check_log LOGFILE STEP
  # sysbench prints "FATAL: ..." / "ALERT: ..." / "error 1146: ..." for errors, and a
  # non-zero "reconnects:" count (or a "reconnect" message) when a connection was lost
  if grep -qE 'FATAL|ALERT|[Ee]rror [0-9]+' "$1"; then
    fail "$1" "$2 reported an error"
  fi
  if grep -iE 'reconnect' "$1" | grep -vqE '^ *reconnects: *0 '; then
    fail "$1" "$2 reported a reconnect"
  fi
}

# bring up the database (connect without a default database)
if ! sysbench "${conn[@]}" --mysql-db= "$SETUP_LUA" prepare >"$LOGDIR/setup.log" 2>&1; then
  fail "$LOGDIR/setup.log" "cannot create database $SB_DB on port $PORT"
fi

total_start=$SECONDS
steps=0
for mode in $SB_PS_MODES; do
  for t in $SB_TESTS; do
    opts=("${conn[@]}" --mysql-db="$SB_DB" --db-ps-mode="$mode" --mysql-storage-engine="$SB_ENGINE"
          --tables="$SB_TABLES" --threads="$SB_THREADS" --time="$SB_TIME" --report-interval=0 --rand-seed=1)
    if [ "$t" != bulk_insert ]; then
      opts+=(--table-size="$SB_TABLE_SIZE")
    fi
    case "$t" in
      # MyISAM: concurrent delete/insert of the same id can collide (1062), exactly as on
      # MariaDB; InnoDB: deadlocks and lock waits (1213, 1205) restart the transaction, which is
      # sysbench's own default list, kept here because this option replaces it
      oltp_read_write|oltp_write_only) opts+=(--mysql-ignore-errors=1062,1213,1205,1020) ;;
      # these two refuse --tables > 1
      select_random_points|select_random_ranges) opts+=(--tables=1) ;;
    esac
    start=$SECONDS
    for step in prepare run cleanup; do
      log="$LOGDIR/$t.$mode.$step.log"
      # (bulk_insert creates and fills one table per thread, so it ignores --tables)
      if ! sysbench "$t" "${opts[@]}" "$step" >"$log" 2>&1; then
        fail "$log" "sysbench $t $step (ps-mode=$mode) exited non-zero"
      fi
      check_log "$log" "sysbench $t $step (ps-mode=$mode)"
      if [ "$step" = run ]; then
        tx=$(sed -n 's/^ *transactions: *\([0-9]*\).*/\1/p' "$log" | head -1)
        q=$(sed -n 's/^ *queries: *\([0-9]*\).*/\1/p' "$log" | head -1)
        qps=$(sed -n 's/^ *queries: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "$log" | head -1)
        if [ -z "$tx" ] || [ -z "$q" ] || [ "$tx" -eq 0 ] || [ "$q" -eq 0 ]; then
          fail "$log" "sysbench $t run (ps-mode=$mode) completed no transactions/queries"
        fi
        result="tx=$tx queries=$q qps=$qps"
      fi
    done
    steps=$((steps + 1))
    printf '%-24s ps-mode=%-8s ok  %-44s (%ds)\n' "$t" "$mode" "$result" $((SECONDS - start))
  done
done

sysbench "${conn[@]}" --mysql-db= "$SETUP_LUA" cleanup >"$LOGDIR/teardown.log" 2>&1 || fail "$LOGDIR/teardown.log" "cannot drop database $SB_DB"
echo "sysbench: $steps passed, 0 failed ($((SECONDS - total_start))s, logs in $LOGDIR)"
