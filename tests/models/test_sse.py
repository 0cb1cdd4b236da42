"""The SSE decoder: each event's data, whatever the line endings and however the bytes are chunked."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbridge.models._sse import SseDecoder

CASES = [
    pytest.param(b'data: {"a":1}\n\n', [b'{"a":1}'], id="one-event"),
    pytest.param(b"data: 1\n\ndata: 2\n\n", [b"1", b"2"], id="two-events"),
    pytest.param(b"data: 1\r\n\r\ndata: 2\r\r", [b"1", b"2"], id="crlf-and-cr"),
    pytest.param(b"data:no-space\n\n", [b"no-space"], id="no-space-after-colon"),
    pytest.param(b"data:  two spaces\n\n", [b" two spaces"], id="only-one-space-dropped"),
    pytest.param(b"data: a\ndata: b\n\n", [b"a\nb"], id="multi-line-data"),
    pytest.param(b"data\ndata: b\n\ndata\n\n", [b"\nb", b""], id="data-without-a-colon-is-empty"),
    pytest.param(
        b": keep-alive\n\nevent: x\nid: 7\nretry: 5\ndata: 1\n\n", [b"1"], id="other-fields-dropped"
    ),
    pytest.param(b"event: ping\n\n", [], id="event-without-data-is-not-dispatched"),
    pytest.param(b"data: unfinished\n", [], id="an-event-without-its-blank-line-waits"),
    pytest.param(b"data: [DONE]\n\n", [b"[DONE]"], id="done"),
]


@pytest.mark.parametrize(("stream", "expected"), CASES)
def test_events_in_one_chunk(stream: bytes, expected: list[bytes]) -> None:
    assert SseDecoder().feed(stream) == expected


@pytest.mark.parametrize(("stream", "expected"), CASES)
def test_events_byte_by_byte(stream: bytes, expected: list[bytes]) -> None:
    decoder = SseDecoder()
    assert [event for i in range(len(stream)) for event in decoder.feed(stream[i : i + 1])] == expected


EVENTS = st.lists(st.text(alphabet='ab{}":,[] é', min_size=1).map(str.encode), max_size=5)
ENDINGS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@given(events=EVENTS, ending=ENDINGS, cuts=st.lists(st.integers(min_value=0, max_value=400)))
def test_any_chunking_gives_the_same_events(events: list[bytes], ending: bytes, cuts: list[int]) -> None:
    stream = b"".join(b"data: " + event + ending + ending for event in events)
    bounds = [0, *sorted(cut for cut in cuts if cut <= len(stream)), len(stream)]
    decoder = SseDecoder()
    pieces = [stream[start:end] for start, end in itertools.pairwise(bounds)]
    assert [event for piece in pieces for event in decoder.feed(piece)] == events
