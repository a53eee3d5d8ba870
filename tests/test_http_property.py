"""A property-based run over the HTTP API's OpenAPI document (issue 16): schemathesis generates
requests for every operation, valid and invalid, from the committed schema's own app, and no
answer may be a server error (5xx other than a StorageError's 503) or break its documented
response schema. Bounded: a fixed number of examples per operation, derandomized so a failure
reproduces on the next run.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.integrations.http import create_app

EXAMPLES = 12


@pytest.fixture
def api_schema(tmp_path):
    """The API over a small populated database: a conversation with cards, records, a protected row."""
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
    yield schemathesis.openapi.from_asgi("/openapi.json", create_app(mf))
    mf.close()


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_no_generated_request_is_a_server_error(case):
    response = case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])
    assert response.status_code < 500, response.text
