"""The real results of this session's short rtsoak runs (conftest.py), the explained one included,
match docs/result.schema.json as Python's `jsonschema` reads it: what a reader in another language
relies on holds for the JSON rtsoak writes today. Under RTSOAK_CI=1 a missing `jsonschema` fails
the tests instead of skipping them."""

from __future__ import annotations

import copy
import importlib
import json
import os
from pathlib import Path

import pytest
from conftest import REPO_DIR, measured_runs

SCHEMA = REPO_DIR / "docs" / "result.schema.json"


def jsonschema():
    """The `jsonschema` package, or skip (fail in CI) saying what to install."""
    try:
        return importlib.import_module("jsonschema")
    except ImportError:
        message = "jsonschema is not installed: pip install -r analysis/requirements.txt"
        if os.environ.get("RTSOAK_CI") == "1":
            pytest.fail(message)
        pytest.skip(message)


def written_today(schema):
    """The schema as today's rtsoak writes results: properties older version 2 results lack but
    this build always writes (`x-rtsoak-always-written`) are required too."""
    if isinstance(schema, list):
        return [written_today(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    strict = {key: written_today(value) for key, value in schema.items()}
    if "x-rtsoak-always-written" in schema:
        strict["required"] = strict.get("required", []) + schema["x-rtsoak-always-written"]
    return strict


def validator(strict: bool = True):
    module = jsonschema()
    schema = json.loads(SCHEMA.read_text())
    module.Draft202012Validator.check_schema(schema)
    if strict:
        schema = written_today(schema)
    return module.Draft202012Validator(schema, format_checker=module.Draft202012Validator.FORMAT_CHECKER)


def assert_matches_schema(result: Path) -> dict:
    data = json.loads(result.read_text())
    errors = sorted(validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    listed = "\n".join(f"{e.json_path}: {e.message[:300]}" for e in errors[:20])
    assert not errors, f"{result} does not match docs/result.schema.json ({len(errors)} errors):\n{listed}"
    return data


def test_the_result_schema_is_valid_draft_2020_12():
    schema = json.loads(SCHEMA.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema().Draft202012Validator.check_schema(schema)


def test_the_real_compare_result_matches_the_schema(real_result):
    data = assert_matches_schema(real_result)
    assert measured_runs(data), "rtsoak measured no transport; the check would prove little"


def test_the_real_explained_result_matches_the_schema(explained_result):
    data = assert_matches_schema(explained_result)
    assert data["plan"]["explain"] is True
    assert any("explanation" in run for run in measured_runs(data)), "no run was explained"


def test_the_schema_rejects_what_rtsoak_does_not_write(real_data):
    check = validator()
    assert check.is_valid(real_data)
    unknown = copy.deepcopy(real_data)
    unknown["runs"][0]["integrity"]["surprise"] = 0
    missing = copy.deepcopy(real_data)
    del missing["plan"]["verdict"]["max_expected_per_day_ns"]
    wrong_type = copy.deepcopy(real_data)
    wrong_type["runs"][0]["measured_ns"] = 1.5
    for edited, where in ((unknown, "integrity"), (missing, "verdict"), (wrong_type, "measured_ns")):
        errors = list(check.iter_errors(edited))
        assert errors and any(where in e.json_path for e in errors), [e.message for e in errors]
