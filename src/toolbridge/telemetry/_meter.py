"""Where spans report the numbers behind the metrics. Nothing is counted until a program installs a
meter (`toolbridge.telemetry.metrics.install_metrics()`, which `serve` and `gateway` call), so a library
user's agent never imports the metrics library."""

from __future__ import annotations

__all__ = ["Meter", "current_meter", "use_meter"]


class Meter:
    """Counts nothing; `toolbridge.telemetry.metrics.PrometheusMeter` counts everything."""

    def run_started(self) -> None:
        pass

    def run_ended(self, agent: str, stop_reason: str) -> None:
        pass

    def step(self, agent: str) -> None:
        pass

    def model_request(self, model: str, outcome: str, seconds: float) -> None:
        pass

    def model_tokens(self, model: str, input_tokens: int, output_tokens: int) -> None:
        pass

    def tool_call(self, tool: str, server: str, outcome: str, *, seconds: float | None, cached: bool) -> None:
        """`seconds`: how long it ran (None: it did not run, or the cache answered)."""

    def event_streams(self, change: int) -> None:
        pass


_current = Meter()


def current_meter() -> Meter:
    return _current


def use_meter(meter: Meter) -> None:
    global _current
    _current = meter
