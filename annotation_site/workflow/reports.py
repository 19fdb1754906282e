"""What every protocol's report needs to leave as JSON: its numpy numbers made plain and its keys strings."""

import math


def jsonable(value, *, nan_to_null=False):
    """``value`` with numpy numbers made plain Python ones and dictionary keys made strings, through dicts,
    lists and tuples; ``nan_to_null``: a NaN becomes None (JSON null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v, nan_to_null=nan_to_null) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, nan_to_null=nan_to_null) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if nan_to_null and isinstance(value, float) and math.isnan(value):
        return None
    return value
