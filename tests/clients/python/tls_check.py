"""TLS and caching_sha2_password's full authentication as PyMySQL and mysql-connector-python
see them, against a fresh Strata server started by crates/server/tests/tls.rs.

Usage: python3 tls_check.py SCENARIO, with STRATA_PORT, STRATA_DATADIR (for ca.pem and
public_key.pem) and, for `secure_transport`, STRATA_SOCKET in the environment. The server
has users root (no password), app:secret, app2:pw2, app3:pw3 and greets with
caching_sha2_password. Each scenario needs a server no client has logged in to yet (the
fast-authentication cache starts empty). Prints one line per check; exits non-zero on the
first failure.
"""

import os
import sys

import pymysql

PORT = int(os.environ["STRATA_PORT"])
DATADIR = os.environ["STRATA_DATADIR"]
CA = os.path.join(DATADIR, "ca.pem")
checks = 0


def check(what, cond, detail=""):
    global checks
    if not cond:
        print(f"FAIL: {what} {detail}")
        sys.exit(1)
    checks += 1
    print(f"ok: {what}")


def connect(**kw):
    return pymysql.connect(host="127.0.0.1", port=PORT, connect_timeout=10, **kw)


def refused(code, **kw):
    try:
        connect(**kw).close()
    except pymysql.err.OperationalError as e:
        return e.args[0] == code, e.args
    return False, "connected"


def status(conn, name):
    with conn.cursor() as c:
        c.execute(f"SHOW STATUS LIKE '{name}'")
        rows = c.fetchall()
        return rows[0][1] if rows else None


def other_public_key():
    """A valid RSA public key that is not the server's."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def pymysql_scenario():
    # TLS with the server's certificate verified against the generated CA (host name too).
    conn = connect(user="root", ssl={"ca": CA, "check_hostname": True})
    cipher, version = status(conn, "Ssl_cipher"), status(conn, "Ssl_version")
    check("verified TLS shows a cipher", bool(cipher), cipher)
    check("and a TLS version", version in ("TLSv1.2", "TLSv1.3"), version)
    with conn.cursor() as c:
        c.execute("SELECT @@have_ssl, @@tls_version, @@ssl_ca")
        have, tls_version, ssl_ca = c.fetchone()
    check("have_ssl YES", have == "YES", have)
    check("tls_version", tls_version == "TLSv1.2,TLSv1.3", tls_version)
    check("ssl_ca is the generated CA", ssl_ca.endswith("ca.pem"), ssl_ca)
    conn.close()
    plain = connect(user="root", ssl_disabled=True)
    check("no cipher without TLS", status(plain, "Ssl_cipher") == "", status(plain, "Ssl_cipher"))
    plain.close()

    # Cold cache: app's first login must be a full authentication. Without TLS, with a
    # public key that is not the server's, the server cannot decrypt the password.
    wrong_key = other_public_key()
    ok, detail = refused(1045, user="app", password="secret", ssl_disabled=True,
                         server_public_key=wrong_key)
    check("cold cache: full authentication with a wrong RSA key is refused", ok, detail)
    # Full authentication over TLS: the password in clear inside TLS.
    conn = connect(user="app", password="secret", ssl={"ca": CA})
    with conn.cursor() as c:
        c.execute("SELECT CURRENT_USER()")
        check("full authentication over TLS", c.fetchone()[0].startswith("app@"))
    conn.close()
    # Now cached: the fast path needs no key at all, so the wrong one is never used.
    conn = connect(user="app", password="secret", ssl_disabled=True, server_public_key=wrong_key)
    check("warm cache: fast path without TLS", conn.open)
    conn.close()
    ok, detail = refused(1045, user="app", password="wrong", ssl={"ca": CA})
    check("a wrong password over TLS is refused", ok, detail)

    # app2: full authentication by RSA, the client asking for the key first.
    ok, detail = refused(1045, user="app2", password="nope", ssl_disabled=True)
    check("a wrong password through RSA is refused", ok, detail)
    conn = connect(user="app2", password="pw2", ssl_disabled=True)
    with open(os.path.join(DATADIR, "public_key.pem"), "rb") as f:
        on_disk = f.read()
    check("RSA key request answered with public_key.pem",
          conn.server_public_key.strip() == on_disk.strip())
    check("full authentication through RSA", status(conn, "Ssl_cipher") == "")
    conn.close()
    # app3: the client already holds the server's public key (no request round trip).
    conn = connect(user="app3", password="pw3", ssl_disabled=True, server_public_key=on_disk)
    check("full authentication with a known public key", conn.open)
    conn.close()


def connector_scenario():
    import mysql.connector

    for pure in (True, False):
        try:
            conn = mysql.connector.connect(
                host="127.0.0.1", port=PORT, user="app", password="secret",
                ssl_ca=CA, ssl_verify_cert=True, ssl_verify_identity=True, use_pure=pure,
                auth_plugin="caching_sha2_password", connection_timeout=10)
        except ImportError:
            print("note: mysql-connector C extension not available")
            continue
        cur = conn.cursor()
        cur.execute("SHOW STATUS LIKE 'Ssl_cipher'")
        cipher = cur.fetchone()[1]
        check(f"mysql-connector (use_pure={pure}) verified TLS: cipher", bool(cipher), cipher)
        cur.execute("SELECT CURRENT_USER()")
        check(f"mysql-connector (use_pure={pure}) caching_sha2 over TLS",
              cur.fetchone()[0].startswith("app@"))
        conn.close()


def secure_transport_scenario():
    ok, detail = refused(3159, user="root", ssl_disabled=True)
    check("require_secure_transport refuses plain TCP with 3159", ok, detail)
    try:
        connect(user="root", ssl_disabled=True)
    except pymysql.err.OperationalError as e:
        check("with MySQL's message", "insecure transport are prohibited" in e.args[1], e.args)
    conn = connect(user="app", password="secret", ssl={"ca": CA})
    check("TLS is accepted", bool(status(conn, "Ssl_cipher")))
    conn.close()
    sock = pymysql.connect(unix_socket=os.environ["STRATA_SOCKET"], user="app2", password="pw2")
    with sock.cursor() as c:
        c.execute("SELECT @@require_secure_transport")
        check("the unix socket is accepted (caching_sha2 in clear on it)", c.fetchone()[0] == 1)
        c.execute("SET GLOBAL require_secure_transport = OFF")
    sock.close()
    conn = connect(user="root", ssl_disabled=True)
    check("SET GLOBAL require_secure_transport=OFF lets plain TCP in", conn.open)
    conn.close()


{
    "pymysql": pymysql_scenario,
    "connector": connector_scenario,
    "secure_transport": secure_transport_scenario,
}[sys.argv[1]]()
print(f"{sys.argv[1]}: {checks} checks passed")
