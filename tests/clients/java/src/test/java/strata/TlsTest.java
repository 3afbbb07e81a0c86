// Connector/J over TLS (sslMode=REQUIRED and VERIFY_CA against the server's generated CA)
// and caching_sha2_password's full authentication, inside TLS and by RSA key retrieval.
// Runs only with -Dstrata.tls.ca=<ca.pem> (crates/server/tests/tls.rs starts a server that
// greets with caching_sha2_password and has users javauser:javapw and javarsa:rsapw);
// the driver suite (drivers.rs) skips it.
package strata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

class TlsTest {
    static String url(String user, String password, String params) {
        String port = System.getProperty("strata.port", "3306");
        return "jdbc:mysql://127.0.0.1:" + port + "/?user=" + user + "&password=" + password
                + "&" + params;
    }

    static String cipher(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SHOW STATUS LIKE 'Ssl_cipher'")) {
            r.next();
            return r.getString(2);
        }
    }

    @Test
    void tlsAndFullAuthentication() throws Exception {
        String ca = System.getProperty("strata.tls.ca", "");
        assumeTrue(!ca.isEmpty(), "strata.tls.ca not set (run through crates/server/tests/tls.rs)");
        // First login of javauser: full authentication inside TLS.
        try (Connection c = DriverManager.getConnection(url("javauser", "javapw", "sslMode=REQUIRED"))) {
            assertFalse(cipher(c).isEmpty());
        }
        // The certificate verified against the CA: a PKCS#12 trust store holding ca.pem
        // (this JDK has no PEM key store type).
        Path store = Files.createTempFile("strata-ca", ".p12");
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            try (InputStream in = Files.newInputStream(Path.of(ca))) {
                ks.setCertificateEntry("strata-ca",
                        CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            try (OutputStream out = Files.newOutputStream(store)) {
                ks.store(out, "changeit".toCharArray());
            }
            String verify = "sslMode=VERIFY_CA&trustCertificateKeyStoreType=PKCS12"
                    + "&trustCertificateKeyStorePassword=changeit"
                    + "&trustCertificateKeyStoreUrl=file:" + store;
            try (Connection c = DriverManager.getConnection(url("root", "", verify))) {
                assertFalse(cipher(c).isEmpty());
            }
        } finally {
            Files.deleteIfExists(store);
        }
        // Without TLS: javarsa's full authentication by RSA, the driver retrieving the key.
        try (Connection c = DriverManager.getConnection(
                url("javarsa", "rsapw", "sslMode=DISABLED&allowPublicKeyRetrieval=true"))) {
            assertEquals("", cipher(c));
        }
        SQLException e = assertThrows(SQLException.class, () -> DriverManager.getConnection(
                url("javarsa", "wrong", "sslMode=DISABLED&allowPublicKeyRetrieval=true")));
        assertEquals(1045, e.getErrorCode());
    }
}
