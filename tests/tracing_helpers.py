"""The process's one OpenTelemetry tracer provider for tests, recording spans in memory."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolbridge.telemetry._otlp import mcp_request_ids


def in_memory_spans() -> InMemorySpanExporter:
    """The process's tracer provider, set once (OpenTelemetry allows one per process), as `serve` sets
    it up; its exporter, emptied."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(mcp_request_ids())
        provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
        trace.set_tracer_provider(provider)
    processors = provider._active_span_processor._span_processors
    exporter = next(p.span_exporter for p in processors if isinstance(p, SimpleSpanProcessor))
    assert isinstance(exporter, InMemorySpanExporter)
    exporter.clear()
    return exporter


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]
