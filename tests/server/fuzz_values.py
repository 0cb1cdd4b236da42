"""Hypothesis strategies for what clients may send a server: any JSON value, any text (lone surrogates
and control characters included, as JSON can carry both), and query-string text; `FUZZ`, the settings
every fuzz test here runs with."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = 40
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Text includes lone surrogates and control characters: JSON can carry both.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
# A URL's query is UTF-8 text: a lone surrogate cannot be sent in one (the client refuses to encode it).
query_texts = st.text(st.characters(codec="utf-8", exclude_categories=()), max_size=40)
scalars = st.none() | st.booleans() | st.integers() | st.integers(min_value=10**18) | st.floats() | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
