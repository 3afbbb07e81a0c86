// Tests go-sql-driver/mysql against a running Strata server (STRATA_PORT, set by
// crates/server/tests/drivers.rs): with interpolateParams=false every query with arguments is
// a server-side prepared statement (COM_STMT_PREPARE/EXECUTE, binary protocol), so this checks
// the binary encodings of each type, column metadata, transactions, error numbers and
// context cancellation as the Go driver sees them.
package strata

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

const dbName = "go_driver"

func dsn(t *testing.T, db string, extra string) string {
	t.Helper()
	port := os.Getenv("STRATA_PORT")
	if port == "" {
		t.Fatal("STRATA_PORT is not set (run through crates/server/tests/drivers.rs)")
	}
	host := os.Getenv("STRATA_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	s := fmt.Sprintf("root@tcp(%s:%s)/%s?interpolateParams=false&parseTime=true&loc=UTC&charset=utf8mb4", host, port, db)
	if extra != "" {
		s += "&" + extra
	}
	return s
}

// open creates a fresh database for one test and returns a pool connected to it.
func open(t *testing.T, suffix string) *sql.DB {
	t.Helper()
	admin, err := sql.Open("mysql", dsn(t, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := dbName + "_" + suffix
	mustExec(t, admin, "DROP DATABASE IF EXISTS "+name)
	mustExec(t, admin, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4")
	db, err := sql.Open("mysql", dsn(t, name, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestTypesThroughPreparedStatements(t *testing.T) {
	db := open(t, "types")
	mustExec(t, db, `CREATE TABLE types (
		id INT NOT NULL PRIMARY KEY, i INT, b BIGINT, d DECIMAL(12,3), s VARCHAR(40),
		dt DATETIME, bl BLOB, f DOUBLE, u BIGINT UNSIGNED)`)
	dt := time.Date(2024, 2, 29, 13, 45, 6, 0, time.UTC)
	stmt, err := db.Prepare("INSERT INTO types VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stmt.Exec(1, int32(-7), int64(9223372036854775807), "123456789.125", "héllo ✓",
		dt, []byte{0, 1, 0xfe, 0xff}, 1.5, uint64(18446744073709551615)); err != nil {
		t.Fatalf("insert row 1: %v", err)
	}
	if _, err := stmt.Exec(2, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatalf("insert row 2: %v", err)
	}
	res, err := stmt.Exec(3, 0, int64(-9223372036854775808), "-0.001", "", dt.Add(-24*time.Hour), []byte{}, -0.25, 0)
	if err != nil {
		t.Fatalf("insert row 3: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("RowsAffected = %d", n)
	}
	stmt.Close()

	rows, err := db.Query("SELECT i, b, d, s, dt, bl, f, u FROM types WHERE id = ?", 1)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.DatabaseTypeName())
	}
	want := "INT BIGINT DECIMAL VARCHAR DATETIME BLOB DOUBLE UNSIGNED BIGINT"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("column types = %q, want %q", got, want)
	}
	if p, s, ok := cols[2].DecimalSize(); !ok || p != 12 || s != 3 {
		t.Errorf("DECIMAL size = %d,%d,%v", p, s, ok)
	}
	if n, ok := cols[0].Nullable(); !ok || !n {
		t.Errorf("column i nullable = %v,%v", n, ok)
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	var (
		i   int32
		b   int64
		d   string
		s   string
		gdt time.Time
		bl  []byte
		f   float64
		u   uint64
	)
	if err := rows.Scan(&i, &b, &d, &s, &gdt, &bl, &f, &u); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if i != -7 || b != 9223372036854775807 || d != "123456789.125" || s != "héllo ✓" ||
		!gdt.Equal(dt) || !bytes.Equal(bl, []byte{0, 1, 0xfe, 0xff}) || f != 1.5 || u != 18446744073709551615 {
		t.Errorf("row 1 = %v %v %v %q %v %v %v %v", i, b, d, s, gdt, bl, f, u)
	}

	// NULLs come back as invalid sql.Null* values.
	var (
		ni  sql.NullInt64
		ns  sql.NullString
		nt  sql.NullTime
		nf  sql.NullFloat64
		nbl []byte
	)
	err = db.QueryRow("SELECT i, s, dt, f, bl FROM types WHERE id = ?", 2).Scan(&ni, &ns, &nt, &nf, &nbl)
	if err != nil {
		t.Fatal(err)
	}
	if ni.Valid || ns.Valid || nt.Valid || nf.Valid || nbl != nil {
		t.Errorf("NULL row scanned as %v %v %v %v %v", ni, ns, nt, nf, nbl)
	}

	// A NULL parameter, and a parameter used in an expression.
	var cnt int
	if err := db.QueryRow("SELECT COUNT(*) FROM types WHERE i <=> ?", nil).Scan(&cnt); err != nil || cnt != 1 {
		t.Errorf("NULL-safe compare with NULL param: %d, %v", cnt, err)
	}
	var sum int64
	var cat string
	if err := db.QueryRow("SELECT ? + 1, CONCAT(?, 'x')", 41, "ab").Scan(&sum, &cat); err != nil || sum != 42 || cat != "abx" {
		t.Errorf("expression over params: %d %q %v", sum, cat, err)
	}
	var negb int64
	var negd string
	var day time.Time
	if err := db.QueryRow("SELECT b, d, dt FROM types WHERE id = ?", 3).Scan(&negb, &negd, &day); err != nil {
		t.Fatal(err)
	}
	if negb != -9223372036854775808 || negd != "-0.001" || !day.Equal(dt.Add(-24*time.Hour)) {
		t.Errorf("row 3 = %v %v %v", negb, negd, day)
	}
}

func TestReexecuteAndLastInsertID(t *testing.T) {
	db := open(t, "reexec")
	mustExec(t, db, "CREATE TABLE seq (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))")
	stmt, err := db.Prepare("INSERT INTO seq (v) VALUES (?)")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for n := 1; n <= 300; n++ {
		res, err := stmt.Exec(fmt.Sprintf("v%d", n))
		if err != nil {
			t.Fatalf("exec %d: %v", n, err)
		}
		id, err := res.LastInsertId()
		if err != nil || id != int64(n) {
			t.Fatalf("LastInsertId = %d, %v; want %d", id, err, n)
		}
	}
	q, err := db.Prepare("SELECT v FROM seq WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for n := 1; n <= 300; n += 13 {
		var v string
		if err := q.QueryRow(n).Scan(&v); err != nil || v != fmt.Sprintf("v%d", n) {
			t.Fatalf("row %d: %q %v", n, v, err)
		}
	}
	var v string
	if err := q.QueryRow(100000).Scan(&v); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("missing row: %v", err)
	}
	res := mustExec(t, db, "UPDATE seq SET v = ? WHERE id <= ?", "x", 10)
	if n, _ := res.RowsAffected(); n != 10 {
		t.Errorf("UPDATE RowsAffected = %d", n)
	}
}

func TestTransactions(t *testing.T) {
	db := open(t, "tx")
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB")
	mustExec(t, db, "INSERT INTO acct VALUES (?, ?), (?, ?)", 1, 100, 2, 0)
	ctx := context.Background()

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE acct SET bal = bal - ? WHERE id = ?", 30, 1)
	mustExec(t, tx, "UPDATE acct SET bal = bal + ? WHERE id = ?", 30, 2)
	var inside int
	if err := tx.QueryRow("SELECT bal FROM acct WHERE id = ?", 2).Scan(&inside); err != nil || inside != 30 {
		t.Fatalf("inside tx: %d %v", inside, err)
	}
	var outside int
	if err := db.QueryRow("SELECT bal FROM acct WHERE id = ?", 2).Scan(&outside); err != nil || outside != 0 {
		t.Fatalf("other session sees uncommitted data: %d %v", outside, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT bal FROM acct WHERE id = ?", 1).Scan(&outside); err != nil || outside != 100 {
		t.Fatalf("after rollback: %d %v", outside, err)
	}

	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE acct SET bal = bal - ? WHERE id = ?", 25, 1)
	mustExec(t, tx, "INSERT INTO acct VALUES (?, ?)", 3, 25)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, bal FROM acct WHERE id > ? ORDER BY id", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, bal int
		if err := rows.Scan(&id, &bal); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d=%d", id, bal))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, ","); s != "1=75,2=0,3=25" {
		t.Errorf("after commit: %s", s)
	}
}

func TestErrors(t *testing.T) {
	db := open(t, "errors")
	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(3))")
	mustExec(t, db, "INSERT INTO u VALUES (?, ?)", 1, "a")

	_, err := db.Exec("INSERT INTO u VALUES (?, ?)", 1, "b")
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("duplicate key: want *mysql.MySQLError, got %T %v", err, err)
	}
	if me.Number != 1062 || string(me.SQLState[:]) != "23000" {
		t.Errorf("duplicate key: %d %s %s", me.Number, me.SQLState, me.Message)
	}
	_, err = db.Exec("INSERT INTO u VALUES (?, ?)", 2, "abcd")
	if !errors.As(err, &me) || me.Number != 1406 {
		t.Errorf("too long: %v", err)
	}
	_, err = db.Query("SELEKT ?", 1)
	if !errors.As(err, &me) || me.Number != 1064 || string(me.SQLState[:]) != "42000" {
		t.Errorf("syntax error: %v", err)
	}
	_, err = db.Query("SELECT * FROM nope WHERE id = ?", 1)
	if !errors.As(err, &me) || me.Number != 1146 {
		t.Errorf("unknown table: %v", err)
	}
	// Unknown database in the DSN.
	bad, _ := sql.Open("mysql", dsn(t, "go_no_such_db", ""))
	defer bad.Close()
	if err := bad.Ping(); !errors.As(err, &me) || me.Number != 1049 {
		t.Errorf("unknown database: %v", err)
	}
	// The pool still works.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM u WHERE id > ?", 0).Scan(&n); err != nil || n != 1 {
		t.Errorf("after errors: %d %v", n, err)
	}
}

func TestContextTimeout(t *testing.T) {
	db := open(t, "ctx")
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := db.QueryContext(ctx, "SELECT ?", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired context: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	var one int
	if err := db.QueryRowContext(ctx2, "SELECT ?", 1).Scan(&one); err != nil || one != 1 {
		t.Errorf("live context: %d %v", one, err)
	}
}

func TestLargeBlobAndUnicode(t *testing.T) {
	db := open(t, "blob")
	mustExec(t, db, "CREATE TABLE b (id INT PRIMARY KEY, data LONGBLOB, s VARCHAR(20))")
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = byte(i*31 + 7)
	}
	mustExec(t, db, "INSERT INTO b VALUES (?, ?, ?)", 1, big, "日本語 😀")
	var got []byte
	var s string
	var n int64
	if err := db.QueryRow("SELECT data, s, LENGTH(data) FROM b WHERE id = ?", 1).Scan(&got, &s, &n); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) || n != int64(len(big)) || s != "日本語 😀" {
		t.Errorf("blob %d bytes (want %d), equal=%v; s=%q", len(got), len(big), bytes.Equal(got, big), s)
	}
}
