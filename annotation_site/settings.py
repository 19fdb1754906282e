"""CaptionEval settings: every value comes from the environment (django-environ).

With no configuration at all the platform runs on its embedded default: a SQLite file and a local media
folder under ``var/``, Celery tasks executed eagerly in the web process, DEBUG off. Environment variables
switch to the real parts (see README, "Configuration"):

- ``DATABASE_URL=postgres://user:pass@host:5432/name``  PostgreSQL (any URL django-environ understands).
- ``CELERY_BROKER_URL=redis://host:6379/0``              a real broker; tasks go to Celery workers.
- ``AWS_STORAGE_BUCKET_NAME`` (+ ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_S3_REGION_NAME``,
  ``AWS_ENDPOINT_URL_S3`` for S3-compatible servers)      media (videos, thumbnails) and exports on S3.
- ``CAPTIONEVAL_MODE=production``                         hardened settings that pass ``check --deploy``.
"""
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

VAR_DIR = Path(env("CAPTIONEVAL_VAR_DIR", default=str(BASE_DIR / "var")))

MODE = env("CAPTIONEVAL_MODE", default="development")
if MODE not in ("development", "production"):
    raise ImproperlyConfigured(f"CAPTIONEVAL_MODE must be 'development' or 'production', not {MODE!r}")
PRODUCTION = MODE == "production"

DEBUG = env.bool("DJANGO_DEBUG", default=False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG must be off in production mode")

if PRODUCTION:
    SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("production mode needs DJANGO_SECRET_KEY (50 characters or more)")
else:
    SECRET_KEY = env("DJANGO_SECRET_KEY", default="django-insecure-development-key-not-for-production-use")

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation_site.jobs",
    "annotation_site.annotators",
    "annotation_site.corpus",
    "annotation_site.factuality",
    "annotation_site.interchange",
    "annotation_site.datasets",
    "assessment",
    "metrics_eval",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "annotation_site.corpus.media.MediaFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "annotation_site.urls"
WSGI_APPLICATION = "annotation_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'captioneval.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # IMMEDIATE transactions and a busy timeout keep concurrent writers (web + eager tasks) from failing
    # with "database is locked"; WAL lets readers proceed during a write.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Static files and media ------------------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(VAR_DIR / "static")))
STATICFILES_DIRS = [BASE_DIR / "static"]
try:  # WhiteNoise indexes STATIC_ROOT at start-up and warns when it is missing (before the first collectstatic)
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
except OSError:
    pass
# Development serves static files straight from the app folders; production serves collectstatic output.
WHITENOISE_USE_FINDERS = not PRODUCTION
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(VAR_DIR / "media")))
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

AWS_STORAGE_BUCKET_NAME = env("AWS_STORAGE_BUCKET_NAME", default=env("S3_BUCKET", default=""))
USE_S3 = bool(AWS_STORAGE_BUCKET_NAME)
if USE_S3:
    _s3_options = {
        "bucket_name": AWS_STORAGE_BUCKET_NAME,
        "region_name": env("AWS_S3_REGION_NAME", default=env("AWS_DEFAULT_REGION", default="us-east-1")),
        "endpoint_url": env("AWS_ENDPOINT_URL_S3", default=env("S3_ENDPOINT_URL", default="")) or None,
        "access_key": env("AWS_ACCESS_KEY_ID", default="") or None,
        "secret_key": env("AWS_SECRET_ACCESS_KEY", default="") or None,
        "addressing_style": env("AWS_S3_ADDRESSING_STYLE", default="path"),
        "signature_version": "s3v4",  # presigned URLs signed with SigV4 (SigV2 is refused by newer regions)
        "querystring_auth": True,  # presigned URLs: the browser fetches videos (with Range) from S3 itself
        "querystring_expire": env.int("AWS_QUERYSTRING_EXPIRE", default=6 * 3600),
        "file_overwrite": False,
        "default_acl": None,
    }
    _media_storage = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": _s3_options}
else:
    _media_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _media_storage,
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# --- Celery -------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# With Redis and acks_late, a task still unacknowledged after the visibility timeout is handed to another worker:
# keep it longer than the longest task.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=6 * 3600)}
CELERY_BEAT_SCHEDULE = {
    "probe-videos-missing-metadata": {
        "task": "annotation_site.corpus.tasks.probe_pending_videos",
        "schedule": env.int("CAPTIONEVAL_PROBE_INTERVAL", default=15 * 60),
    },
}

# --- REST framework ---------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # "?format=" names a dataset format in our export endpoints, not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "CaptionEval API",
    "DESCRIPTION": "Datasets, human judgments of video captions and their analysis.",
    "VERSION": "0.1.0",
    # Swagger UI assets come from the drf-spectacular-sidecar package, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Production hardening ---------------------------------------------------------------------------------
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    # The SSL redirect is normally done by the proxy in front; a health check may come in over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
