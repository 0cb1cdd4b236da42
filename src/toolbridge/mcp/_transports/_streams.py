"""The (read, write) stream pair a transport hands to the SDK's `ClientSession`.

The SDK declares these shapes only in private modules (`mcp.shared._stream_protocols`), so we declare
the same structural protocols here and depend on the SDK's public surface alone. Anything the SDK's
transports yield satisfies them, and so does anything that satisfies them for the SDK.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self, TypeVar

from mcp.shared.message import SessionMessage

__all__ = ["ReadStream", "TransportStreams", "WriteStream"]

_T_co = TypeVar("_T_co", covariant=True)
_T_contra = TypeVar("_T_contra", contravariant=True)


class ReadStream(Protocol[_T_co]):
    async def receive(self) -> _T_co: ...
    async def aclose(self) -> None: ...
    def __aiter__(self) -> ReadStream[_T_co]: ...
    async def __anext__(self) -> _T_co: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None: ...


class WriteStream(Protocol[_T_contra]):
    async def send(self, item: _T_contra, /) -> None: ...
    async def aclose(self) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None: ...


TransportStreams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]
