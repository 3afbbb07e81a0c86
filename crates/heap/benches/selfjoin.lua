-- Seed 002's range self-join as a sysbench script (the "Fast reads or fast scans?"
-- experiment): every event selects `range` rows of sbtest1 by primary-key range and
-- joins each to the row at `rows + 1 - id`, so one query does `range` key-cache
-- descents of the primary index plus 2 x `range` data-file reads.
--
--   sysbench selfjoin.lua --mysql-host=127.0.0.1 --mysql-port=3399 --mysql-user=root \
--     --mysql-db=sbtest --rows=200000 prepare
--   sysbench selfjoin.lua ... --rows=200000 --range=100 --threads=64 --time=15 run
--
-- selfjoin.sh runs the whole table (client counts x key_cache_segments).

sysbench.cmdline.options = {
  rows = {"Rows in sbtest1", 200000},
  range = {"Rows the BETWEEN predicate selects", 100},
  engine = {"Storage engine of sbtest1", "MyISAM"},
}

local c_template = "###########-###########-###########-###########-" ..
  "###########-###########-###########-###########-###########-###########"
local pad_template = "###########-###########-###########-###########-###########"

function prepare()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("DROP TABLE IF EXISTS sbtest1")
  con:query(string.format([[
    CREATE TABLE sbtest1 (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      k INT UNSIGNED NOT NULL DEFAULT '0',
      c CHAR(120) NOT NULL DEFAULT '',
      pad CHAR(60) NOT NULL DEFAULT '',
      PRIMARY KEY (id),
      KEY k (k)
    ) ENGINE=%s]], sysbench.opt.engine))
  local batch = 1000
  for first = 1, sysbench.opt.rows, batch do
    local values = {}
    for id = first, math.min(first + batch - 1, sysbench.opt.rows) do
      values[#values + 1] = string.format("(%d, %d, '%s', '%s')", id,
        sysbench.rand.uniform(1, sysbench.opt.rows),
        sysbench.rand.string(c_template), sysbench.rand.string(pad_template))
    end
    con:query("INSERT INTO sbtest1 (id, k, c, pad) VALUES " .. table.concat(values, ","))
  end
end

function cleanup()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("DROP TABLE IF EXISTS sbtest1")
end

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function thread_done()
  con:disconnect()
end

function event()
  local r = sysbench.opt.range
  local a = sysbench.rand.uniform(1, sysbench.opt.rows - r + 1)
  con:query(string.format(
    "SELECT t1.c, t2.c FROM sbtest1 t1, sbtest1 t2 WHERE t1.id BETWEEN %d AND %d " ..
    "AND t2.id = %d - t1.id", a, a + r - 1, sysbench.opt.rows + 1))
end
