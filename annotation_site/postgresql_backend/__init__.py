"""Django's PostgreSQL backend with a connection health check that costs no round trip while the connection is
idle and nothing has arrived on it (base.py). Selected in settings.py for every PostgreSQL ``DATABASE_URL``."""
