#!/bin/sh
# Seed 002's self-join through the real server: throughput at each client count with
# key_cache_segments=1 (MyISAM's single key-cache mutex) and the default, set with
# SET GLOBAL between passes (which rebuilds the key cache). Start the server first:
#   target/release/strata server --port 3399 --datadir /tmp/heapbench/data
# Environment: PORT (3399), ROWS (200000), RANGE (100), TIME (15 s per point),
# THREADS ("1 4 16 64 256"), SEGMENTS ("16 1"), REPEAT (1), PREPARE (1: create and
# load sbtest1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PORT=${PORT:-3399} ROWS=${ROWS:-200000} RANGE=${RANGE:-100} TIME=${TIME:-15}
THREADS=${THREADS:-"1 4 16 64 256"} SEGMENTS=${SEGMENTS:-"16 1"} PREPARE=${PREPARE:-1}
sql() { mariadb --protocol=TCP -h127.0.0.1 -P"$PORT" -uroot -N -e "$1"; }
sb() {
  sysbench "$here/selfjoin.lua" --db-driver=mysql --mysql-host=127.0.0.1 \
    --mysql-port="$PORT" --mysql-user=root --mysql-db=sbtest --rows="$ROWS" \
    --range="$RANGE" "$@"
}
if [ "$PREPARE" = 1 ]; then
  sql "CREATE DATABASE IF NOT EXISTS sbtest"
  sb prepare >/dev/null
fi
# Interleaved: at each client count, every segment setting in turn (REPEAT times), so
# the machine's background load drifts over both alike.
REPEAT=${REPEAT:-1}
echo "threads segments qps"
for t in $THREADS; do
  r=0
  while [ "$r" -lt "$REPEAT" ]; do
    for seg in $SEGMENTS; do
      sql "SET GLOBAL key_cache_segments = $seg" # rebuilds the key cache
      sb --threads=4 --time=2 run >/dev/null     # warm it again
      qps=$(sb --threads="$t" --time="$TIME" run |
        awk '/queries:/ { gsub(/[(]/, "", $3); print $3 }')
      echo "$t $seg $qps"
    done
    r=$((r + 1))
  done
done
