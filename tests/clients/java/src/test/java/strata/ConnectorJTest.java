// Connector/J against a running Strata server with server-side prepared statements
// (useServerPrepStmts=true, cachePrepStmts=true): the connect-time queries the driver issues,
// binary-protocol parameters and results of each type, ResultSetMetaData, batches,
// transactions, generated keys and error codes. The port comes from -Dstrata.port.
package strata;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLSyntaxErrorException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDateTime;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ConnectorJTest {
    static final String DB = "java_connectorj";

    static String url(String db) {
        String port = System.getProperty("strata.port", "3306");
        return "jdbc:mysql://127.0.0.1:" + port + "/" + db
                + "?user=root&password=&sslMode=DISABLED&useServerPrepStmts=true"
                + "&cachePrepStmts=true&connectionTimeZone=UTC&forceConnectionTimeZoneToSession=false"
                + "&characterEncoding=UTF-8";
    }

    static Connection connect() throws SQLException {
        return DriverManager.getConnection(url(DB));
    }

    @BeforeAll
    static void createDatabase() throws SQLException {
        try (Connection c = DriverManager.getConnection(url(""));
                Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DB);
            s.execute("CREATE DATABASE " + DB + " CHARACTER SET utf8mb4");
        }
    }

    @Test
    void connectsAndReportsServer() throws SQLException {
        try (Connection c = connect()) {
            assertTrue(c.isValid(5));
            DatabaseMetaData md = c.getMetaData();
            assertFalse(md.getDatabaseProductVersion().isEmpty());
            assertEquals(DB, c.getCatalog());
            assertTrue(c.getAutoCommit());
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1 + 1, 'x'")) {
                assertTrue(rs.next());
                assertEquals(2, rs.getInt(1));
                assertEquals("x", rs.getString(2));
                assertFalse(rs.next());
            }
        }
    }

    @Test
    void preparedTypesAndMetadata() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE types (id INT NOT NULL PRIMARY KEY, i INT, b BIGINT,"
                    + " d DECIMAL(12,3), v VARCHAR(40), dt DATETIME, bl BLOB, f DOUBLE)");
            Timestamp ts = Timestamp.valueOf(LocalDateTime.of(2024, 2, 29, 13, 45, 6));
            byte[] bytes = {0, 1, (byte) 0xfe, (byte) 0xff};
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO types VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                // The driver really prepared it on the server.
                assertTrue(ps instanceof com.mysql.cj.jdbc.ServerPreparedStatement,
                        "not a server-side statement: " + ps.getClass());
                ps.setInt(1, 1);
                ps.setInt(2, -2147483648);
                ps.setLong(3, 9223372036854775807L);
                ps.setBigDecimal(4, new BigDecimal("123456789.125"));
                ps.setString(5, "héllo ✓ 日本語");
                ps.setTimestamp(6, ts);
                ps.setBytes(7, bytes);
                ps.setDouble(8, 1.5);
                assertEquals(1, ps.executeUpdate());
                ps.setInt(1, 2);
                ps.setNull(2, Types.INTEGER);
                ps.setNull(3, Types.BIGINT);
                ps.setNull(4, Types.DECIMAL);
                ps.setNull(5, Types.VARCHAR);
                ps.setNull(6, Types.TIMESTAMP);
                ps.setNull(7, Types.BLOB);
                ps.setNull(8, Types.DOUBLE);
                assertEquals(1, ps.executeUpdate());
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, i, b, d, v, dt, bl, f, i AS alias FROM types WHERE id = ?")) {
                ps.setInt(1, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    ResultSetMetaData md = rs.getMetaData();
                    assertEquals(9, md.getColumnCount());
                    assertEquals("i", md.getColumnName(2));
                    assertEquals("alias", md.getColumnLabel(9));
                    assertEquals("types", md.getTableName(1));
                    assertEquals(Types.INTEGER, md.getColumnType(1));
                    assertEquals(Types.BIGINT, md.getColumnType(3));
                    assertEquals(Types.DECIMAL, md.getColumnType(4));
                    assertEquals(Types.VARCHAR, md.getColumnType(5));
                    assertEquals(Types.TIMESTAMP, md.getColumnType(6));
                    assertEquals(Types.LONGVARBINARY, md.getColumnType(7));
                    assertEquals(Types.DOUBLE, md.getColumnType(8));
                    assertEquals(12, md.getPrecision(4));
                    assertEquals(3, md.getScale(4));
                    assertEquals(ResultSetMetaData.columnNoNulls, md.isNullable(1));
                    assertEquals(ResultSetMetaData.columnNullable, md.isNullable(2));
                    assertEquals(40, md.getColumnDisplaySize(5));
                    assertTrue(rs.next());
                    assertEquals(-2147483648, rs.getInt("i"));
                    assertEquals(9223372036854775807L, rs.getLong("b"));
                    assertEquals(new BigDecimal("123456789.125"), rs.getBigDecimal("d"));
                    assertEquals("héllo ✓ 日本語", rs.getString("v"));
                    assertEquals(ts, rs.getTimestamp("dt"));
                    assertArrayEquals(bytes, rs.getBytes("bl"));
                    assertEquals(1.5, rs.getDouble("f"));
                    assertEquals(-2147483648, rs.getInt("alias"));
                    assertFalse(rs.next());
                }
                ps.setInt(1, 2);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(0, rs.getInt("i"));
                    assertTrue(rs.wasNull());
                    assertNull(rs.getObject("b"));
                    assertNull(rs.getBigDecimal("d"));
                    assertNull(rs.getString("v"));
                    assertNull(rs.getTimestamp("dt"));
                    assertNull(rs.getBytes("bl"));
                    rs.getDouble("f");
                    assertTrue(rs.wasNull());
                }
            }
            // A NULL parameter: `= NULL` matches nothing, `<=>` matches the NULL row.
            try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM types WHERE i <=> ?")) {
                ps.setNull(1, Types.INTEGER);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(1, rs.getInt(1));
                }
            }
        }
    }

    @Test
    void batchesAndGeneratedKeys() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE seq (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))");
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO seq (v) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "first");
                assertEquals(1, ps.executeUpdate());
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    assertTrue(keys.next());
                    assertEquals(1L, keys.getLong(1));
                }
                for (int i = 0; i < 100; i++) {
                    ps.setString(1, "b" + i);
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                assertEquals(100, counts.length);
                for (int n : counts) {
                    assertEquals(1, n);
                }
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    long expect = 2;
                    while (keys.next()) {
                        assertEquals(expect++, keys.getLong(1));
                    }
                    assertEquals(102L, expect);
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*), MAX(id) FROM seq")) {
                assertTrue(rs.next());
                assertEquals(101, rs.getInt(1));
                assertEquals(101L, rs.getLong(2));
            }
            // executeUpdate through a plain Statement also reports the key.
            assertEquals(1, s.executeUpdate("INSERT INTO seq (v) VALUES ('plain')",
                    Statement.RETURN_GENERATED_KEYS));
            try (ResultSet keys = s.getGeneratedKeys()) {
                assertTrue(keys.next());
                assertEquals(102L, keys.getLong(1));
            }
        }
    }

    @Test
    void reexecutesCachedStatement() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE kv (k INT PRIMARY KEY, v VARCHAR(20))");
            for (int i = 0; i < 300; i++) {
                // Same SQL each time: with cachePrepStmts the server-side statement is reused.
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO kv VALUES (?, ?)")) {
                    ps.setInt(1, i);
                    if (i % 4 == 0) {
                        ps.setNull(2, Types.VARCHAR);
                    } else {
                        ps.setString(2, "v" + i);
                    }
                    assertEquals(1, ps.executeUpdate());
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM kv WHERE k = ?")) {
                for (int i = 0; i < 300; i += 7) {
                    ps.setInt(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals(i % 4 == 0 ? null : "v" + i, rs.getString(1));
                    }
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*), COUNT(v), SUM(k) FROM kv")) {
                assertTrue(rs.next());
                assertEquals(300, rs.getInt(1));
                assertEquals(225, rs.getInt(2));
                assertEquals(44850L, rs.getLong(3));
            }
        }
    }

    @Test
    void transactions() throws SQLException {
        try (Connection a = connect(); Connection b = connect(); Statement s = a.createStatement()) {
            s.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB");
            s.execute("INSERT INTO acct VALUES (1, 100), (2, 0)");
            a.setAutoCommit(false);
            try (PreparedStatement ps = a.prepareStatement("UPDATE acct SET bal = bal + ? WHERE id = ?")) {
                ps.setInt(1, -30);
                ps.setInt(2, 1);
                assertEquals(1, ps.executeUpdate());
                ps.setInt(1, 30);
                ps.setInt(2, 2);
                assertEquals(1, ps.executeUpdate());
            }
            assertEquals("100,0", balances(b));
            a.rollback();
            assertEquals("100,0", balances(a));
            try (PreparedStatement ps = a.prepareStatement("UPDATE acct SET bal = bal + ? WHERE id = ?")) {
                ps.setInt(1, -10);
                ps.setInt(2, 1);
                ps.executeUpdate();
            }
            a.commit();
            a.setAutoCommit(true);
            assertEquals("90,0", balances(b));
        }
    }

    static String balances(Connection c) throws SQLException {
        StringBuilder sb = new StringBuilder();
        try (PreparedStatement ps = c.prepareStatement("SELECT bal FROM acct WHERE id > ? ORDER BY id")) {
            ps.setInt(1, 0);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (sb.length() > 0) {
                        sb.append(',');
                    }
                    sb.append(rs.getInt(1));
                }
            }
        }
        return sb.toString();
    }

    @Test
    void errorCodes() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE u (id INT PRIMARY KEY, v VARCHAR(3))");
            s.execute("INSERT INTO u VALUES (1, 'a')");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO u VALUES (?, ?)")) {
                ps.setInt(1, 1);
                ps.setString(2, "b");
                SQLIntegrityConstraintViolationException e =
                        assertThrows(SQLIntegrityConstraintViolationException.class, ps::executeUpdate);
                assertEquals(1062, e.getErrorCode());
                assertEquals("23000", e.getSQLState());
                ps.setInt(1, 2);
                ps.setString(2, "toolong");
                SQLException e2 = assertThrows(SQLException.class, ps::executeUpdate);
                assertEquals(1406, e2.getErrorCode());
            }
            // A failed server-side prepare falls back to a client-side statement (the
            // driver's emulateUnsupportedPstmts), so the error comes at execution.
            try (PreparedStatement bad = c.prepareStatement("SELEKT ?")) {
                bad.setInt(1, 1);
                SQLSyntaxErrorException se = assertThrows(SQLSyntaxErrorException.class, bad::execute);
                assertEquals(1064, se.getErrorCode());
                assertEquals("42000", se.getSQLState());
            }
            try (PreparedStatement bad = c.prepareStatement("SELECT * FROM no_such_table WHERE id = ?")) {
                bad.setInt(1, 1);
                SQLSyntaxErrorException te = assertThrows(SQLSyntaxErrorException.class, bad::executeQuery);
                assertEquals(1146, te.getErrorCode());
                assertEquals("42S02", te.getSQLState());
            }
            // Still usable.
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM u")) {
                assertTrue(rs.next());
                assertEquals(1, rs.getInt(1));
            }
        }
    }
}
