"""docker-compose.yml: valid against the official Compose Specification schema, and shaped the way the
deployment needs it (docs/deployment.md). No Docker engine is needed: the file is read as data."""

import copy
import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest
from deployment_support import (
    ALL_SERVICES,
    APP_SERVICES,
    OPERATOR_ENV,
    REPO,
    InterpolationError,
    compose_variables,
    interpolate,
)

SCHEMAS = Path(__file__).resolve().parent / "schemas"
SCHEMA_FILE = SCHEMAS / "compose-spec.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_FILE.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    assert validator_class is jsonschema.Draft202012Validator  # the draft the schema declares
    validator_class.check_schema(schema)
    return validator_class(schema)


def errors(validator, document):
    return sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))


def describe(found):
    return "\n".join(f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in found)


# --- the schema itself -----------------------------------------------------------------------------------------


def test_vendored_schema_is_the_one_the_readme_describes():
    readme = (SCHEMAS / "README.md").read_text()
    recorded = re.search(r"sha256 ([0-9a-f]{64})", readme).group(1)
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == recorded
    assert "Apache" in (SCHEMAS / "LICENSE.compose-spec").read_text()
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["title"] == "Compose Specification"


# --- schema validation -------------------------------------------------------------------------------------------


def test_compose_file_is_valid_as_written(validator, compose_raw):
    assert not errors(validator, compose_raw), describe(errors(validator, compose_raw))


def test_compose_file_is_valid_after_interpolation(validator, compose):
    assert not errors(validator, compose), describe(errors(validator, compose))


def _ports_as_string(document):
    document["services"]["web"]["ports"] = "8000"
    return ("services", "web")


def _unknown_top_level_key(document):
    document["servces"] = {"web": {"image": "captioneval"}}
    return ()


def _unknown_service_key(document):
    document["services"]["worker"]["concurency"] = 4
    return ("services", "worker")


def _unknown_depends_on_condition(document):
    document["services"]["web"]["depends_on"]["migrate"]["condition"] = "service_finished"
    return ("services", "web")


def _healthcheck_test_not_a_command(document):
    document["services"]["db"]["healthcheck"]["test"] = 42
    return ("services", "db")


def _volumes_as_a_list(document):
    document["volumes"] = ["pgdata", "redisdata"]
    return ("volumes",)


@pytest.mark.parametrize(
    "break_it",
    [
        _ports_as_string,
        _unknown_top_level_key,
        _unknown_service_key,
        _unknown_depends_on_condition,
        _healthcheck_test_not_a_command,
        _volumes_as_a_list,
    ],
    ids=lambda function: function.__name__.strip("_"),
)
def test_broken_copies_fail_validation(validator, compose, break_it):
    """The validator really checks: each deliberately broken copy of the (valid) file is rejected, at the
    place that was broken."""
    assert not errors(validator, compose)
    broken = copy.deepcopy(compose)
    where = break_it(broken)
    found = errors(validator, broken)
    assert found, f"{break_it.__name__} was accepted by the schema"
    assert any(tuple(error.absolute_path)[: len(where)] == where for error in found), describe(found)


# --- structure we rely on ------------------------------------------------------------------------------------------


def test_services(compose):
    assert set(compose["services"]) == ALL_SERVICES


def test_application_services_share_one_image_build(compose):
    builds = {name: compose["services"][name].get("build") for name in (*APP_SERVICES, "createbucket")}
    images = {name: compose["services"][name].get("image") for name in (*APP_SERVICES, "createbucket")}
    assert builds["web"] == {"context": ".", "dockerfile": "Dockerfile"}
    assert all(build == builds["web"] for build in builds.values()), builds
    assert len(set(images.values())) == 1 and images["web"], images
    assert (REPO / builds["web"]["context"] / builds["web"]["dockerfile"]).is_file()


def test_application_environment_comes_from_one_anchor(compose_text, compose_raw):
    assert "x-app-environment: &app-environment" in compose_text
    base = compose_raw["x-app-environment"]
    for name in ("worker", "beat", "migrate"):
        assert compose_raw["services"][name]["environment"] == base, name
    web = compose_raw["services"]["web"]["environment"]
    assert {key: web[key] for key in base} == base
    assert set(web) - set(base) <= {"GUNICORN_WORKER_CLASS", "GUNICORN_WORKERS", "GUNICORN_THREADS", "GUNICORN_TIMEOUT"}


def test_migrate_is_a_one_shot_job_that_web_and_worker_wait_for(compose):
    migrate = compose["services"]["migrate"]
    assert migrate["restart"] == "no"
    assert "ports" not in migrate
    command = " ".join(migrate["command"])
    assert "python manage.py migrate --noinput" in command
    assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("web", "worker"):
        depends_on = compose["services"][name]["depends_on"]
        assert depends_on["migrate"]["condition"] == "service_completed_successfully", name
        assert depends_on["createbucket"]["condition"] == "service_completed_successfully", name
        assert depends_on["db"]["condition"] == "service_healthy", name
        assert depends_on["redis"]["condition"] == "service_healthy", name


def test_createbucket_is_a_one_shot_job_after_the_store_is_healthy(compose):
    job = compose["services"]["createbucket"]
    assert job["restart"] == "no"
    assert job["command"] == ["python", "docker/create_bucket.py"]
    assert job["depends_on"]["s3"]["condition"] == "service_healthy"
    assert job["environment"]["S3_BOOTSTRAP_ENDPOINT_URL"] == "http://s3:9000"
    assert (
        job["environment"]["AWS_STORAGE_BUCKET_NAME"]
        == compose["services"]["web"]["environment"]["AWS_STORAGE_BUCKET_NAME"]
    )


def test_web_runs_gunicorn_on_port_8000(compose):
    web = compose["services"]["web"]
    assert web["command"] == ["gunicorn", "--config", "gunicorn.conf.py", "annotation_site.wsgi"]
    assert [port.rsplit(":", 1)[1] for port in web["ports"]] == ["8000"]
    assert web["ports"] == ["127.0.0.1:8000:8000"]  # default: only the proxy on this machine reaches it
    assert web["healthcheck"]["test"] == ["CMD", "python", "docker/healthcheck.py"]


def test_worker_and_beat_run_celery(compose_raw):
    worker = compose_raw["services"]["worker"]["command"]
    assert worker[:4] == ["celery", "--app", "annotation_site", "worker"]
    assert worker[worker.index("--concurrency") + 1] == "${CELERY_WORKER_CONCURRENCY:-2}"
    beat = compose_raw["services"]["beat"]
    assert beat["command"][:4] == ["celery", "--app", "annotation_site", "beat"]
    # exactly one beat: never replicated
    assert "scale" not in beat and "replicas" not in beat.get("deploy", {})


@pytest.mark.parametrize("name", ["db", "redis", "s3"])
def test_backing_services_have_healthchecks(compose, name):
    healthcheck = compose["services"][name]["healthcheck"]
    assert not healthcheck.get("disable")
    assert healthcheck["test"][0] in ("CMD", "CMD-SHELL") and len(healthcheck["test"]) >= 2


def test_db_is_postgres_15_and_data_lives_on_named_volumes(compose):
    services, declared = compose["services"], set(compose["volumes"])
    assert services["db"]["image"] == "postgres:15"
    assert "pgdata:/var/lib/postgresql/data" in services["db"]["volumes"]
    assert "redisdata:/data" in services["redis"]["volumes"]
    assert "s3data:/data" in services["s3"]["volumes"]
    assert declared == {"pgdata", "redisdata", "s3data"}
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0] if isinstance(volume, str) else volume.get("source", "")
            if not source.startswith((".", "/", "~")):
                assert source in declared, f"{name} uses undeclared volume {source}"


def test_only_web_and_the_store_publish_ports(compose):
    published = {name for name, service in compose["services"].items() if service.get("ports")}
    assert published == {"web", "s3"}


# --- configuration ---------------------------------------------------------------------------------------------


def _names_read(path):
    return set(re.findall(r"""env(?:\.\w+)?\(\s*["']([A-Z][A-Z0-9_]*)["']""", path.read_text())) | set(
        re.findall(r"""environ\.get\(\s*["']([A-Z][A-Z0-9_]*)["']""", path.read_text())
    )


def test_application_is_configured_only_through_variables_settings_reads(compose):
    read_by_settings = _names_read(REPO / "annotation_site" / "settings.py")
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL"} <= read_by_settings  # the regex works
    environment = compose["services"]["worker"]["environment"]
    assert set(environment) <= read_by_settings, set(environment) - read_by_settings
    assert {
        "CAPTIONEVAL_MODE",
        "DJANGO_SECRET_KEY",
        "DJANGO_ALLOWED_HOSTS",
        "DJANGO_CSRF_TRUSTED_ORIGINS",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "AWS_STORAGE_BUCKET_NAME",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ENDPOINT_URL_S3",
        "AWS_S3_REGION_NAME",
    } <= set(environment)
    assert environment["CAPTIONEVAL_MODE"] == "production"
    assert "DJANGO_DEBUG" not in environment
    gunicorn_only = set(compose["services"]["web"]["environment"]) - set(environment)
    assert gunicorn_only <= _names_read(REPO / "gunicorn.conf.py")


def test_every_variable_the_deployment_guide_lists_reaches_the_containers(compose_text):
    """A variable in docs/deployment.md's tables that the compose file never passes on does nothing when an
    operator sets it in .env (DATABASE_CONN_HEALTH_CHECKS, GUNICORN_WORKER_CLASS and the Celery queue and
    visibility timeout once were)."""
    guide = (REPO / "docs" / "deployment.md").read_text()
    listed = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", guide, flags=re.MULTILINE)
    assert {"DJANGO_SECRET_KEY", "DATABASE_PREPARED_STATEMENTS"} <= set(listed)  # the pattern reads the tables
    unused = [name for name in listed if not re.search(r"\$\{" + name + r"\b", compose_text)]
    assert not unused, f"documented but never interpolated in docker-compose.yml: {unused}"


def test_interpolated_urls_point_at_the_compose_services(compose):
    environment = compose["services"]["web"]["environment"]
    assert environment["DATABASE_URL"] == (
        f"postgres://captioneval:{OPERATOR_ENV['POSTGRES_PASSWORD']}@db:5432/captioneval"
    )
    assert environment["CELERY_BROKER_URL"] == "redis://redis:6379/0"
    assert environment["AWS_ENDPOINT_URL_S3"] == OPERATOR_ENV["AWS_ENDPOINT_URL_S3"]
    assert environment["DJANGO_SECRET_KEY"] == OPERATOR_ENV["DJANGO_SECRET_KEY"]
    assert compose["services"]["s3"]["environment"]["MINIO_ROOT_PASSWORD"] == OPERATOR_ENV["AWS_SECRET_ACCESS_KEY"]
    assert compose["services"]["db"]["environment"]["POSTGRES_PASSWORD"] == OPERATOR_ENV["POSTGRES_PASSWORD"]


SECRET_NAME = re.compile(r"SECRET|PASSWORD|ACCESS_KEY|TOKEN")
REQUIRED_REFERENCE = re.compile(r"^\$\{([A-Z][A-Z0-9_]*):\?[^}]+\}$")


def _environments(document):
    yield "x-app-environment", document["x-app-environment"]
    for name, service in document["services"].items():
        yield name, service.get("environment", {})


def test_no_secret_is_written_in_the_file(compose_raw):
    checked = 0
    for owner, environment in _environments(compose_raw):
        assert isinstance(environment, dict), f"{owner}: use a mapping for environment"
        for key, value in environment.items():
            if SECRET_NAME.search(key):
                assert REQUIRED_REFERENCE.match(str(value)), f"{owner}.{key} must be ${{VAR:?message}}, not {value!r}"
                checked += 1
    assert checked >= 6
    url = compose_raw["x-app-environment"]["DATABASE_URL"]
    assert re.fullmatch(
        r"postgres://\$\{POSTGRES_USER:-\w+\}:\$\{POSTGRES_PASSWORD:\?[^}]+\}@db:5432/"
        r"\$\{POSTGRES_DB:-\w+\}",
        url,
    ), url


@pytest.mark.parametrize("missing", sorted(OPERATOR_ENV))
def test_compose_refuses_to_start_without_each_required_variable(compose_raw, missing):
    environment = {key: value for key, value in OPERATOR_ENV.items() if key != missing}
    with pytest.raises(InterpolationError, match=rf"required variable {missing} is missing"):
        interpolate(compose_raw, environment)
    with pytest.raises(InterpolationError, match=rf"required variable {missing} is missing"):
        interpolate(compose_raw, {**environment, missing: ""})


def test_defaults_do_not_nest_variables(compose_raw):
    """The interpolation helper (and a reader) handles one level; keep it that way."""
    for text in re.findall(r"\$\{[^}]*\}", json.dumps(compose_raw)):
        assert "$" not in text[2:], text


def test_every_variable_is_documented(compose_raw):
    documentation = (REPO / "docs" / "deployment.md").read_text()
    variables = compose_variables(compose_raw)
    assert {"DJANGO_SECRET_KEY", "CELERY_WORKER_CONCURRENCY", "S3_IMAGE"} <= variables
    undocumented = {name for name in variables if f"`{name}`" not in documentation}
    assert not undocumented, f"add to the table in docs/deployment.md: {sorted(undocumented)}"
