"""Settings of the compatibility project: one MySQL database on the server under test
(STRATA_HOST / STRATA_PORT, set by crates/server/tests/drivers.rs), UTC time zone support on."""

import os

SECRET_KEY = "strata-compatibility-suite-not-secret"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django.contrib.contenttypes", "shop"]
ROOT_URLCONF = "strataproj.urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.mysql",
        "NAME": os.environ.get("DJANGO_DB", "dj_shop"),
        "USER": os.environ.get("STRATA_USER", "root"),
        "PASSWORD": "",
        "HOST": os.environ.get("STRATA_HOST", "127.0.0.1"),
        "PORT": os.environ.get("STRATA_PORT", "3306"),
        "OPTIONS": {"charset": "utf8mb4"},
        "TEST": {"NAME": "test_" + os.environ.get("DJANGO_DB", "dj_shop")},
    }
}
