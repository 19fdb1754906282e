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

import re
from datetime import timedelta
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
    # Development and demo installs: a random key made on first run and kept under var/ (never a constant in the
    # repository, which would let anyone forge links and completion codes of a reachable install).
    SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
    if not SECRET_KEY:
        from annotation_site.installation import SecretKeyError, installation_secret_key

        try:
            SECRET_KEY = installation_secret_key(VAR_DIR)
        except SecretKeyError as error:
            raise ImproperlyConfigured(str(error)) from error

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
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation_site.jobs",
    "annotation_site.annotators",
    "annotation_site.crowd",
    "annotation_site.corpus",
    "annotation_site.factuality",
    "annotation_site.judgment_tasks",
    "annotation_site.interchange",
    "annotation_site.datasets",
    "assessment",
    "metrics_eval",
    "annotation_site.demo",
]

MIDDLEWARE = [
    "annotation_site.security_headers.SvgContentSecurityPolicyMiddleware",  # first: sees static files too
    "django.middleware.security.SecurityMiddleware",
    "annotation_site.address_check.NulInAddressMiddleware",  # %00 in a path or query: 400 before any view
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "annotation_site.corpus.media.MediaFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "annotation_site.throttling.ThrottleMiddleware",  # rate limits by URL name (docs/reliability.md)
    "annotation_site.address_check.NulInFormMiddleware",  # NUL in a form field: 400 before the view
    # late, so it sees the views' exceptions first: an unreachable database answers 503 + Retry-After (axes
    # defines no process_exception, so being after it changes nothing for that)
    "annotation_site.database_unavailable.DatabaseUnavailableMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
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
    # with "database is locked"; WAL (switched on once per file: annotation_site/sqlite_wal.py) lets readers
    # proceed during a write.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
else:
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend with a health check that polls the idle connection's socket before any "SELECT 1"
        DATABASES["default"]["ENGINE"] = "annotation_site.postgresql_backend"
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    # A health check before the first query of each request on a reused connection: a request after a database
    # restart gets a fresh connection instead of an error (annotation_site/postgresql_backend: no round trip
    # while nothing has arrived on the idle connection; docs/reliability.md measures its cost).
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", env.bool("DATABASE_CONN_HEALTH_CHECKS", default=True))
# PostgreSQL: the compiled hot-path queries are prepared on the server once per session
# (annotation_site/prepared_queries.py); false behind a connection pooler in transaction mode.
CAPTIONEVAL_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login throttling (django-axes): after CAPTIONEVAL_LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# address, signing in is refused (429, templates/registration/locked_out.html) for the cool-off time, even with
# the right password. Attempts are kept in the database (shared by every web process).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("CAPTIONEVAL_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("CAPTIONEVAL_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False
# Other rate limits (annotation_site/throttling.py): CAPTIONEVAL_THROTTLE_<SCOPE>_<KIND>="COUNT/SECONDS" per
# address, token, assignment or account; read from the environment here, defaults in throttling.DEFAULT_LIMITS.
for _name in [n for n in env.ENVIRON if n.startswith("CAPTIONEVAL_THROTTLE_")]:
    globals()[_name] = env(_name)
# The cache holds the throttles' counts (and figure renderings): set CACHE_URL=redis://... in production so every
# web process shares them (the default local-memory cache counts per process).
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

# Database sessions whose per-request read is compiled once per connection (same table and rows as Django's
# own "django.contrib.sessions.backends.db": switching between the two keeps everyone signed in).
SESSION_ENGINE = "annotation_site.sessions"
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
# One broker can serve several installations (or a test run beside a benchmark) when each has its own queue.
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="celery")
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
    "da-release-idle-assignments": {
        "task": "assessment.tasks.release_idle_assignments",
        "schedule": env.int("DA_RELEASE_INTERVAL", default=10 * 60),
    },
    "crowd-release-idle-work": {
        "task": "annotation_site.crowd.tasks.release_idle",
        "schedule": env.int("CROWD_RELEASE_INTERVAL", default=5 * 60),
    },
}

# DA assignments of accounts and link workers untouched this long give their HIT slot back (docs/reliability.md).
DA_ASSIGNMENT_IDLE_MINUTES = env.int("DA_ASSIGNMENT_IDLE_MINUTES", default=120)

# --- Crowd work (docs/crowd.md) --------------------------------------------------------------------------
CROWD_FRAME_ORIGINS = env.list(
    "CROWD_FRAME_ORIGINS",
    default=["https://worker.mturk.com", "https://workersandbox.mturk.com", "https://www.mturk.com"],
)
CROWD_EXPORT_EXPIRES = env.int("CROWD_EXPORT_EXPIRES", default=24 * 3600)
CROWD_PAYMENTS_LEASE_SECONDS = env.int("CROWD_PAYMENTS_LEASE_SECONDS", default=15 * 60)
# The largest bonus per HIT a study or a payment run may plan, in the study's currency (docs/crowd.md, "Policies").
CAPTIONEVAL_MAX_BONUS = env("CAPTIONEVAL_MAX_BONUS", default="100.00").strip()
if not re.fullmatch(r"[0-9]{1,6}(?:\.[0-9]{1,2})?", CAPTIONEVAL_MAX_BONUS):
    raise ImproperlyConfigured(
        f"CAPTIONEVAL_MAX_BONUS must be an amount such as 100.00 (digits, at most two after the point), "
        f"not {CAPTIONEVAL_MAX_BONUS[:20]!r}"
    )
PROLIFIC_API_TOKEN = env("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_URL = env("PROLIFIC_API_URL", default="https://api.prolific.com")
PROLIFIC_COMPLETION_URL = env("PROLIFIC_COMPLETION_URL", default="https://app.prolific.com/submissions/complete")
PROLIFIC_WEBHOOK_SECRET = env("PROLIFIC_WEBHOOK_SECRET", default="")
PROLIFIC_WEBHOOK_TOLERANCE = env.int("PROLIFIC_WEBHOOK_TOLERANCE", default=300)
PROLIFIC_JWT_AUDIENCE = env("PROLIFIC_JWT_AUDIENCE", default="")
PROLIFIC_JWT_PARAMETER = env("PROLIFIC_JWT_PARAMETER", default="prolific_token")
PROLIFIC_TIMEOUT = env.float("PROLIFIC_TIMEOUT", default=20.0)
MTURK_ENDPOINT_URL = env("MTURK_ENDPOINT_URL", default="")
MTURK_REGION = env("MTURK_REGION", default="us-east-1")
MTURK_ACCESS_KEY_ID = env("MTURK_ACCESS_KEY_ID", default="")
MTURK_SECRET_ACCESS_KEY = env("MTURK_SECRET_ACCESS_KEY", default="")
MTURK_SUBMIT_HOSTS = env.list("MTURK_SUBMIT_HOSTS", default=["www.mturk.com", "workersandbox.mturk.com"])

# --- Limits on untrusted input (docs/reliability.md) -----------------------------------------------------------
CAPTIONEVAL_JSON_MAX_DEPTH = env.int("CAPTIONEVAL_JSON_MAX_DEPTH", default=32)
CAPTIONEVAL_JSON_MAX_NUMBER_LENGTH = env.int("CAPTIONEVAL_JSON_MAX_NUMBER_LENGTH", default=40)
# Imported files (annotation_site/uploads.py): checked from their declared sizes before they are read or unpacked.
CAPTIONEVAL_MAX_UPLOAD_BYTES = env.int("CAPTIONEVAL_MAX_UPLOAD_BYTES", default=50 * 1024 * 1024)
# A DA judgments file imported by the page or the API is written within the request (checks, writes, QC): this
# keeps it well inside gunicorn's timeout (benchmarks/da_import.py); larger files go through da_import_judgments.
CAPTIONEVAL_MAX_DA_UPLOAD_BYTES = env.int("CAPTIONEVAL_MAX_DA_UPLOAD_BYTES", default=10 * 1024 * 1024)
# Video files added to a dataset are stored (streamed to storage), not parsed: a limit of their own.
CAPTIONEVAL_MAX_VIDEO_BYTES = env.int("CAPTIONEVAL_MAX_VIDEO_BYTES", default=2048 * 1024 * 1024)
CAPTIONEVAL_ZIP_MAX_BYTES = env.int("CAPTIONEVAL_ZIP_MAX_BYTES", default=200 * 1024 * 1024)
CAPTIONEVAL_ZIP_MAX_FILES = env.int("CAPTIONEVAL_ZIP_MAX_FILES", default=1000)
CAPTIONEVAL_ZIP_MAX_RATIO = env.int("CAPTIONEVAL_ZIP_MAX_RATIO", default=200)

# --- REST framework ---------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    # JSON bodies are read through annotation_site.safe_json (depth, number length, surrogates, NUL: a clear 400)
    "DEFAULT_PARSER_CLASSES": [
        "annotation_site.safe_json.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "annotation_site.api_schema.AutoSchema",
    # one error shape for every API (annotation_site/api_errors.py)
    "EXCEPTION_HANDLER": "annotation_site.api_errors.error_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "annotation_site.api_errors.ErrorShapeJSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    # a download answers its file whatever Accept names; nothing is refused with 406 (annotation_site/api_negotiation.py)
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "annotation_site.api_negotiation.NeverNotAcceptable",
    "DEFAULT_PAGINATION_CLASS": "annotation_site.api_pagination.LimitOffsetPagination",  # limit capped
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
    # The schema lists every endpoint: like the API itself (IsAdminUser by default), it is for staff.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
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

# The platform's public address, for links printed where no request tells the host (commands: worker links of
# da_assign, invitation links of factuality_project). Pages build links from the request instead.
CAPTIONEVAL_BASE_URL = env("CAPTIONEVAL_BASE_URL", default="http://127.0.0.1:8000").rstrip("/")

# LOG_LEVEL is shared with gunicorn (gunicorn.conf.py), which takes any case: accept "warning" as well.
LOG_LEVEL = env("LOG_LEVEL", default="INFO").strip().upper()
if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
    raise ImproperlyConfigured(f"LOG_LEVEL must be one of debug, info, warning, error, critical, not {LOG_LEVEL!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}
