"""Turning config validation failures into one line that names the key (docs/design.md §9)."""
from __future__ import annotations

import jsonschema


def _path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _find_schema_error(error):
    """The jsonschema error behind ``error``: snakemake.utils.validate raises a WorkflowError
    while handling it, so it is on the exception chain."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, jsonschema.ValidationError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def one_line_config_error(error: BaseException) -> str:
    """``experiments.gaussian_A.grid.rho[0]: -1 is less than or equal to the minimum of 0``."""
    schema_error = _find_schema_error(error)
    if schema_error is None:
        return f"config error: {error}".splitlines()[0]
    best = jsonschema.exceptions.best_match([schema_error])
    message = best.message
    if best.validator == "additionalProperties":
        message = f"unknown key: {message}"
    return f"config error at {_path(best.absolute_path)}: {message}".splitlines()[0]
