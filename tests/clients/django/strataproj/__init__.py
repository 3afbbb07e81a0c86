"""Django project used to check Strata against what Django sends. mysqlclient needs C headers
that are not always installed, so PyMySQL stands in for it (Django accepts it as MySQLdb)."""

try:
    import MySQLdb  # noqa: F401  (mysqlclient, when it is installed)
except ImportError:
    import pymysql

    pymysql.install_as_MySQLdb()
