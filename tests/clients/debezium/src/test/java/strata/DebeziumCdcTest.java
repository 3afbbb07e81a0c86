// Debezium's MySQL connector (embedded engine, no Kafka) as a CDC client of Strata's binary
// log. The server runs with log-bin (crates/server/tests/drivers.rs starts it and passes the
// port as -Dstrata.port). The connector takes its initial snapshot of a table (its locking,
// consistent-snapshot transaction, SHOW CREATE TABLE, binary log position and SELECT), then
// streams the row events of transactions run afterwards. What must hold: every committed
// change arrives exactly once, in commit order (not statement order), with the right before
// and after images for INT, BIGINT UNSIGNED, utf8mb4 VARCHAR, DECIMAL, DATETIME(6), JSON and
// NULL; a rolled-back transaction and a rolled-back savepoint leave nothing; the statements
// of one transaction carry one transaction id, as Debezium's transaction metadata reports.
// Then the connector stops, more transactions commit while it is down, and it starts again
// from the offsets and schema history it stored in files: it must resume from its GTID set
// (checking it against the server's with GTID_SUBTRACT, as it does on every restart) and
// deliver exactly the changes committed while it was down, once each, in commit order,
// with no second snapshot.
package strata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class DebeziumCdcTest {
    static final String DB = "dbz_cdc";
    static final String PREFIX = "strata";
    static final String TOPIC = PREFIX + "." + DB + ".items";
    static final ObjectMapper JSON = new ObjectMapper();

    static String port() {
        return System.getProperty("strata.port", "3306");
    }

    static Connection connect(String db) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port() + "/" + db
                + "?user=root&password=&sslMode=DISABLED&connectionTimeZone=UTC"
                + "&forceConnectionTimeZoneToSession=false&characterEncoding=UTF-8");
    }

    /** One data change as Debezium reported it, values in Debezium's own representation. */
    record Change(String op, Map<String, Object> before, Map<String, Object> after) {
        @Override
        public String toString() {
            return op + " before=" + before + " after=" + after;
        }
    }

    /** A column map in table order: id, qty, big, name, price, at, doc. */
    static Map<String, Object> row(int id, Integer qty, String big, String name, String price,
            String at, String doc) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("qty", qty);
        // bigint.unsigned.handling.mode=precise: a BigDecimal of scale 0.
        m.put("big", big == null ? null : new BigDecimal(big));
        m.put("name", name);
        // decimal.handling.mode=precise (the default): a BigDecimal of the column's scale.
        m.put("price", price == null ? null : new BigDecimal(price));
        // DATETIME(6) under time.precision.mode=adaptive_time_microseconds (the default):
        // io.debezium.time.MicroTimestamp, microseconds since the epoch read as UTC.
        m.put("at", at == null ? null : micros(LocalDateTime.parse(at.replace(' ', 'T'))));
        m.put("doc", doc == null ? null : parseJson(doc));
        return m;
    }

    static long micros(LocalDateTime t) {
        return t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1_000;
    }

    static JsonNode parseJson(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError("Debezium gave JSON that does not parse: " + text, e);
        }
    }

    /** The struct's fields as a map; JSON text becomes a tree (spacing is not compared). */
    static Map<String, Object> values(Struct s) {
        if (s == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (Field f : s.schema().fields()) {
            Object v = s.get(f);
            if (v != null && "io.debezium.data.Json".equals(f.schema().name())) {
                v = parseJson((String) v);
            }
            m.put(f.name(), v);
        }
        return m;
    }

    static void exec(Connection c, String... sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    @Test
    void streamsEveryCommittedChangeOnceInCommitOrder() throws Exception {
        try (Connection c = connect("")) {
            exec(c, "DROP DATABASE IF EXISTS " + DB,
                    "CREATE DATABASE " + DB + " CHARACTER SET utf8mb4");
        }
        try (Connection c = connect(DB)) {
            exec(c, "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, qty INT,"
                    + " big BIGINT UNSIGNED, name VARCHAR(40) CHARACTER SET utf8mb4,"
                    + " price DECIMAL(12,4), at DATETIME(6), doc JSON)",
                    // Snapshot rows: extreme values, and a row of NULLs.
                    "INSERT INTO items VALUES (1, -7, 18446744073709551615, 'naïve ☃ 😀',"
                            + " 12.5, '2026-11-30 12:34:56.789012',"
                            + " '{\"a\": [1, 2.5, \"x\"], \"b\": null}'),"
                            + " (2, NULL, NULL, NULL, NULL, NULL, NULL)");
        }

        // Offsets and schema history in files, so a second engine resumes from them.
        Path state = Files.createTempDirectory("strata-debezium");
        Properties p = properties(state);
        LinkedBlockingQueue<SourceRecord> records = new LinkedBlockingQueue<>();
        AtomicReference<String> engineEnd = new AtomicReference<>();
        Engine engine = new Engine(p, records, engineEnd);
        try {
            List<SourceRecord> seen = new ArrayList<>();
            // The snapshot: both rows read ('r'), before any change below is made.
            List<Change> snapshot = collect(records, seen, engineEnd, 2, 60);
            assertEquals(List.of(
                    new Change("r", null, row(1, -7, "18446744073709551615", "naïve ☃ 😀",
                            "12.5000", "2026-11-30 12:34:56.789012",
                            "{\"a\": [1, 2.5, \"x\"], \"b\": null}")),
                    new Change("r", null, row(2, null, null, null, null, null, null))),
                    snapshot);

            try (Connection a = connect(DB); Connection b = connect(DB)) {
                // T1: one INSERT.
                exec(a, "INSERT INTO items VALUES (3, 2147483647, 9223372036854775808, 'Grüße',"
                        + " -0.0001, '1999-12-31 23:59:59.999999', '[true, false, {\"k\": \"v\"}]')");
                // T2: several statements, a savepoint rolled back in the middle.
                exec(a, "BEGIN",
                        "INSERT INTO items VALUES (4, 0, 0, '', 0, '2000-01-01 00:00:00', '{}')",
                        "SAVEPOINT s1",
                        "INSERT INTO items VALUES (98, 1, 1, 'savepoint ghost', 1, NULL, NULL)",
                        "UPDATE items SET qty = 1000 WHERE id = 3",
                        "ROLLBACK TO SAVEPOINT s1",
                        "UPDATE items SET qty = NULL, name = 'changed 😀', doc = '{\"n\": 1}'"
                                + " WHERE id = 1",
                        "DELETE FROM items WHERE id = 2",
                        "COMMIT");
                // T3: rolled back, never seen.
                exec(a, "BEGIN",
                        "INSERT INTO items VALUES (99, 1, 1, 'ghost', 1, NULL, NULL)",
                        "UPDATE items SET qty = 1 WHERE id = 3",
                        "DELETE FROM items WHERE id = 4",
                        "ROLLBACK");
                // T4 starts first but commits after T5.
                exec(a, "BEGIN", "UPDATE items SET price = 99999999.9999 WHERE id = 3");
                exec(b, "INSERT INTO items VALUES (5, 5, 5, 'five', 5.5,"
                        + " '2026-01-02 03:04:05.000006', '\"five\"')");
                exec(a, "COMMIT");
                // T6: one statement changing two rows.
                exec(a, "UPDATE items SET qty = qty + 1 WHERE id IN (4, 5)");
                // T7, T8.
                exec(a, "DELETE FROM items WHERE id = 4");
                exec(a, "INSERT INTO items (id, name) VALUES (100, 'last')");
            }

            Map<String, Object> r1 = row(1, -7, "18446744073709551615", "naïve ☃ 😀", "12.5000",
                    "2026-11-30 12:34:56.789012", "{\"a\": [1, 2.5, \"x\"], \"b\": null}");
            Map<String, Object> r1b = row(1, null, "18446744073709551615", "changed 😀",
                    "12.5000", "2026-11-30 12:34:56.789012", "{\"n\": 1}");
            Map<String, Object> r2 = row(2, null, null, null, null, null, null);
            Map<String, Object> r3 = row(3, 2147483647, "9223372036854775808", "Grüße",
                    "-0.0001", "1999-12-31 23:59:59.999999", "[true, false, {\"k\": \"v\"}]");
            Map<String, Object> r3b = new LinkedHashMap<>(r3);
            r3b.put("price", new BigDecimal("99999999.9999"));
            Map<String, Object> r4 = row(4, 0, "0", "", "0.0000", "2000-01-01 00:00:00", "{}");
            Map<String, Object> r4b = new LinkedHashMap<>(r4);
            r4b.put("qty", 1);
            Map<String, Object> r5 = row(5, 5, "5", "five", "5.5000",
                    "2026-01-02 03:04:05.000006", "\"five\"");
            Map<String, Object> r5b = new LinkedHashMap<>(r5);
            r5b.put("qty", 6);
            Map<String, Object> r100 = row(100, null, null, "last", null, null, null);
            List<Change> want = List.of(
                    new Change("c", null, r3),
                    new Change("c", null, r4), new Change("u", r1, r1b), new Change("d", r2, null),
                    new Change("c", null, r5),
                    new Change("u", r3, r3b),
                    new Change("u", r4, r4b), new Change("u", r5, r5b),
                    new Change("d", r4b, null),
                    new Change("c", null, r100));
            int before = seen.size();
            List<Change> got = collect(records, seen, engineEnd, want.size(), 60);
            // Nothing more may follow: wait a moment for a stray duplicate.
            got.addAll(drain(records, seen, 2));
            assertEquals(want.size(), got.size(), "changes:\n" + lines(got));
            for (int i = 0; i < want.size(); i++) {
                assertEquals(want.get(i), got.get(i), "change " + i + " of:\n" + lines(got));
            }

            // Transactions: the streamed changes carry Debezium's transaction block, one id
            // per committed transaction, in groups of 1, 3, 1, 1, 2, 1, 1 changes.
            List<String> txIds = new ArrayList<>();
            for (SourceRecord r : seen.subList(before, seen.size())) {
                Struct tx = ((Struct) r.value()).getStruct("transaction");
                assertNotNull(tx, "no transaction block in " + r);
                txIds.add(tx.getString("id"));
                Struct source = ((Struct) r.value()).getStruct("source");
                assertNotNull(source.getString("gtid"), "no GTID in the source block of " + r);
            }
            int[] sizes = {1, 3, 1, 1, 2, 1, 1};
            int at = 0;
            List<String> distinct = new ArrayList<>();
            for (int n : sizes) {
                for (int k = 1; k < n; k++) {
                    assertEquals(txIds.get(at), txIds.get(at + k), "transaction ids " + txIds);
                }
                assertTrue(!distinct.contains(txIds.get(at)), "transaction ids " + txIds);
                distinct.add(txIds.get(at));
                at += n;
            }
            assertNotEquals(distinct.get(0), distinct.get(1));
        } finally {
            engine.close();
        }

        // Down: three transactions the connector must find when it comes back.
        try (Connection a = connect(DB)) {
            // T9, T10 (two statements), T11.
            exec(a, "INSERT INTO items VALUES (6, 6, 6, 'six', 6.6, '2026-06-06 06:06:06.6', '[6]')");
            exec(a, "BEGIN", "UPDATE items SET name = 'five again' WHERE id = 5",
                    "DELETE FROM items WHERE id = 3", "COMMIT");
            // Rolled back while down: never seen.
            exec(a, "BEGIN", "INSERT INTO items (id) VALUES (97)", "ROLLBACK");
            exec(a, "INSERT INTO items (id, name) VALUES (7, 'seven')");
        }

        LinkedBlockingQueue<SourceRecord> again = new LinkedBlockingQueue<>();
        AtomicReference<String> againEnd = new AtomicReference<>();
        Engine restarted = new Engine(p, again, againEnd);
        try {
            Map<String, Object> r3 = row(3, 2147483647, "9223372036854775808", "Grüße",
                    "99999999.9999", "1999-12-31 23:59:59.999999", "[true, false, {\"k\": \"v\"}]");
            Map<String, Object> r5 = row(5, 6, "5", "five", "5.5000",
                    "2026-01-02 03:04:05.000006", "\"five\"");
            Map<String, Object> r5b = new LinkedHashMap<>(r5);
            r5b.put("name", "five again");
            List<Change> want = List.of(
                    new Change("c", null, row(6, 6, "6", "six", "6.6000",
                            "2026-06-06 06:06:06.600000", "[6]")),
                    new Change("u", r5, r5b), new Change("d", r3, null),
                    new Change("c", null, row(7, null, null, "seven", null, null, null)));
            List<SourceRecord> seen = new ArrayList<>();
            List<Change> got = collect(again, seen, againEnd, want.size(), 90);
            // Nothing more: no snapshot again, nothing streamed before the stop again.
            got.addAll(drain(again, seen, 3));
            assertEquals(want, got, "changes after the restart:\n" + lines(got));
        } finally {
            restarted.close();
            deleteTree(state);
        }
    }

    /** The connector's settings; offsets and schema history are files under `state`. */
    static Properties properties(Path state) {
        Properties p = new Properties();
        p.setProperty("name", "strata-cdc");
        p.setProperty("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        p.setProperty("offset.storage.file.filename", state.resolve("offsets.dat").toString());
        p.setProperty("offset.flush.interval.ms", "60000");
        p.setProperty("schema.history.internal", "io.debezium.storage.file.history.FileSchemaHistory");
        p.setProperty("schema.history.internal.file.filename",
                state.resolve("schema-history.dat").toString());
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", port());
        p.setProperty("database.user", "root");
        p.setProperty("database.password", "");
        p.setProperty("database.ssl.mode", "disabled");
        p.setProperty("database.server.id", "5401");
        p.setProperty("topic.prefix", PREFIX);
        p.setProperty("database.include.list", DB);
        p.setProperty("snapshot.mode", "initial");
        p.setProperty("bigint.unsigned.handling.mode", "precise");
        p.setProperty("include.schema.changes", "false");
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("provide.transaction.metadata", "true");
        p.setProperty("errors.max.retries", "0");
        return p;
    }

    /** A running embedded engine that puts every record in `records`. */
    static final class Engine implements AutoCloseable {
        final ExecutorService pool = Executors.newSingleThreadExecutor();
        final DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;

        Engine(Properties p, LinkedBlockingQueue<SourceRecord> records,
                AtomicReference<String> end) {
            engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                    .using(p)
                    .notifying(e -> records.add(e.record()))
                    .using((ok, message, error) -> end.set(
                            (ok ? "finished: " : "failed: ") + message
                                    + (error == null ? "" : " (" + error + ")")))
                    .build();
            pool.execute(engine);
        }

        /** Stops the engine; its offsets are committed to the offset store on the way. */
        @Override
        public void close() throws Exception {
            engine.close();
            pool.shutdown();
            assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS), "the engine did not stop");
        }
    }

    static void deleteTree(Path dir) throws java.io.IOException {
        try (var paths = Files.walk(dir)) {
            for (Path q : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }

    /** The data changes that arrive within `seconds` (none expected). */
    static List<Change> drain(LinkedBlockingQueue<SourceRecord> records, List<SourceRecord> seen,
            int seconds) throws InterruptedException {
        List<Change> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            SourceRecord r = records.poll(100, TimeUnit.MILLISECONDS);
            if (r != null && TOPIC.equals(r.topic())) {
                seen.add(r);
                out.add(change(r));
            }
        }
        return out;
    }

    static Change change(SourceRecord r) {
        Struct v = (Struct) r.value();
        return new Change(v.getString("op"), values(v.getStruct("before")),
                values(v.getStruct("after")));
    }

    static String lines(List<Change> changes) {
        StringBuilder sb = new StringBuilder();
        for (Change c : changes) {
            sb.append("  ").append(c).append('\n');
        }
        return sb.toString();
    }

    /**
     * Takes the next `n` data changes of the items table from the queue (transaction
     * metadata records are skipped), failing if the engine stops or they do not arrive
     * within `seconds`.
     */
    static List<Change> collect(LinkedBlockingQueue<SourceRecord> records, List<SourceRecord> seen,
            AtomicReference<String> engineEnd, int n, int seconds) throws InterruptedException {
        List<Change> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (out.size() < n) {
            SourceRecord r = records.poll(200, TimeUnit.MILLISECONDS);
            if (r == null) {
                if (engineEnd.get() != null) {
                    fail("the Debezium engine stopped (" + engineEnd.get() + ") after:\n" + lines(out));
                }
                if (System.nanoTime() > deadline) {
                    fail("only " + out.size() + " of " + n + " changes within " + seconds
                            + " s:\n" + lines(out));
                }
                continue;
            }
            if (!TOPIC.equals(r.topic())) {
                continue;
            }
            seen.add(r);
            out.add(change(r));
        }
        return out;
    }
}
