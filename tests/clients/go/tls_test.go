// TLS and caching_sha2_password as go-sql-driver/mysql sees them. Runs only when
// crates/server/tests/tls.rs sets STRATA_TLS_CA (the server's generated ca.pem); the
// driver suite (drivers.rs) skips it. The server greets with caching_sha2_password and
// has user gouser:gopw, whose first login here is a full authentication.
package strata

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func tlsDSN(t *testing.T, user, pass, params string) string {
	t.Helper()
	return fmt.Sprintf("%s:%s@tcp(127.0.0.1:%s)/?%s", user, pass, os.Getenv("STRATA_PORT"), params)
}

func cipherOf(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name, cipher string
	if err := db.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatalf("%s: %v", dsn, err)
	}
	return cipher
}

func TestTLS(t *testing.T) {
	caFile := os.Getenv("STRATA_TLS_CA")
	if caFile == "" {
		t.Skip("STRATA_TLS_CA not set (run through crates/server/tests/tls.rs)")
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no CA certificate in " + caFile)
	}
	// Verified against the generated CA, the host name included.
	if err := mysql.RegisterTLSConfig("strata", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	// caching_sha2_password, first login: full authentication inside TLS.
	if c := cipherOf(t, tlsDSN(t, "gouser", "gopw", "tls=strata")); c == "" {
		t.Fatal("tls=strata: no cipher")
	}
	if c := cipherOf(t, tlsDSN(t, "root", "", "tls=skip-verify")); c == "" {
		t.Fatal("tls=skip-verify: no cipher")
	}
	// Without TLS: gouser is cached now (fast path); gorsa needs the RSA exchange, the
	// driver asking for the server's key.
	if c := cipherOf(t, tlsDSN(t, "gouser", "gopw", "tls=false")); c != "" {
		t.Fatalf("tls=false: cipher %q", c)
	}
	if c := cipherOf(t, tlsDSN(t, "gorsa", "rsapw", "tls=false")); c != "" {
		t.Fatalf("RSA login: cipher %q", c)
	}
	db, _ := sql.Open("mysql", tlsDSN(t, "gorsa", "wrong", "tls=false"))
	defer db.Close()
	err = db.Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("wrong password: %v", err)
	}
}
