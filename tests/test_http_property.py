"""A property-based run over the HTTP API's OpenAPI document (issue 16): schemathesis generates
requests for every operation, valid and invalid, from the committed schema's own app, and no
answer may be a server error or break its documented response schema; with an API key, no
answer may show another namespace's content. Bounded: a fixed number of examples per operation, derandomized so a failure
reproduces on the next run.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.integrations.http import create_app, parse_keys

EXAMPLES = 8  # per operation (derandomized); 12 took a minute of the suite on 2 cores
KEY = "fuzz-key-0123456789abcdef"


def populated(tmp_path) -> MemFold:
    """A small database: a conversation with cards, records, a protected row, and a second
    namespace the keyed run may not touch."""
    window = WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3,
                            leaf_chunk_tokens=20, card_target_tokens=8)
    mf = MemFold(tmp_path / "api.db", clock=LogicalClock(), token_counter="words", embedder=None, window=window)
    conv = mf.conversation("0", namespace="0")
    for i in range(8):
        conv.append({"role": "user" if i % 2 == 0 else "assistant",
                     "content": f"turn {i}: order ORD-{i} ships on day {i} to 12 Elm St"})
    for i in range(3):
        mf.memory.write("0", "semantic", f"fact {i}", key=f"k{i % 2}")
    mf.protected.add("Never share the invoice.", conversation_id="0")
    other = mf.conversation("1", namespace="1")
    other.append({"role": "user", "content": "my PIN is 4471"})
    mf.memory.write("1", "semantic", "fact of another tenant")
    return mf


@pytest.fixture
def api_schema(tmp_path):
    """The API without keys (every caller the owner)."""
    mf = populated(tmp_path)
    yield schemathesis.openapi.from_asgi("/openapi.json", create_app(mf))
    mf.close()


@pytest.fixture
def keyed_schema(tmp_path):
    """The API with one key covering namespace "0" and holding no label."""
    mf = populated(tmp_path)
    keys = parse_keys([{"name": "fuzz", "key": KEY, "namespaces": ["0"]}], "fuzz keys")
    yield schemathesis.openapi.from_asgi("/openapi.json", create_app(mf, keys=keys))
    mf.close()


schema = schemathesis.pytest.from_fixture("api_schema")
keyed = schemathesis.pytest.from_fixture("keyed_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_no_generated_request_is_a_server_error(case):
    response = case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])
    assert response.status_code < 500, response.text


@keyed.parametrize()
@settings(max_examples=EXAMPLES // 2, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_no_generated_request_with_a_key_is_a_server_error_or_reads_another_namespace(case):
    response = case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"},
                                      checks=[not_a_server_error, response_schema_conformance])
    assert response.status_code < 500, response.text
    assert "4471" not in response.text and "another tenant" not in response.text
