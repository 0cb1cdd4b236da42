"""An OTLP/HTTP receiver on 127.0.0.1 for tests: a toolbridge process given its address as
`telemetry.otlp_endpoint` sends it its spans, decoded here with opentelemetry-proto."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["Receiver", "attributes", "receiver"]


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths: list[str] = []
        self.spans: list[tuple[str, Span]] = []
        """(service.name, span) for every span received."""


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        self.server.paths.append(self.path)
        for resource_spans in request.resource_spans:
            service = next(
                a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"
            )
            for scope_spans in resource_spans.scope_spans:
                self.server.spans.extend((service, span) for span in scope_spans.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def attributes(span: Span) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for attribute in span.attributes:
        value = attribute.value
        values[attribute.key] = getattr(value, value.WhichOneof("value"))
    return values
