"""The OpenAPI schema (drf-spectacular): every operation documents the error answers in the one error shape
(``annotation_site.api_errors.ErrorSerializer``) beside the responses its view declares."""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

from annotation_site.api_errors import ErrorSerializer

ERROR_STATUSES = {
    "400": "Invalid request (validation); see ``fields``.",
    "401": "Not authenticated.",
    "403": "Permission denied.",
    "404": "Not found.",
    "409": "Conflict with the current state of the data.",
}


def _untyped(response):
    """A response a view declared without a shape (no content, or a bare object): documented as the error."""
    schemas = [body.get("schema", {}) for body in (response.get("content") or {}).values()]
    return not schemas or all(
        schema.get("type") == "object" and "properties" not in schema and "$ref" not in schema for schema in schemas
    )


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction=direction)
        if direction != "response":
            return responses
        for code, description in ERROR_STATUSES.items():
            if code not in responses or _untyped(responses[code]):
                responses[code] = self._get_response_for_code(ErrorSerializer, code)
                responses[code]["description"] = description
        return responses
