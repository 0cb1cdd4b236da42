"""`ServerRequests`: the `ClientFeatures` of a toolbox, answering what its servers ask.

- sampling: the server's configured model (`"sampling": {"model": ...}`), else a configured model a
  request's model hint names, else the running agent's model; after the person's approval unless the
  server's `"approval": "never"`; at most `rate_limit` requests a minute per server; through
  `sampling_model`, which may wrap the model for the call that asked (`toolbridge serve` charges the
  tokens to the user whose run made it);
- elicitation: passed to the `UserAsker`; its form answers checked against the schema;
- roots: a server's own `roots`, else the shared ones (the agent's, or the run's default).

Where there is no asker, requests that need a person are declined with a message saying why.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence

import anyio
import mcp_types as mcp

from toolbridge.agent.asking import ElicitationRequest, NobodyToAsk, SamplingRequest, UserAsker
from toolbridge.agent.sampling import SamplingReply, sample_with
from toolbridge.config.model import Config, ServerConfig
from toolbridge.errors import ToolbridgeError
from toolbridge.mcp.calls_in_flight import CallInFlight, asking_call
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.elicitation_form import ElicitationForm, FormError
from toolbridge.mcp.roots import Roots
from toolbridge.models import Model, resolve_model_async

__all__ = ["DECLINED", "ServerRequests"]

logger = logging.getLogger(__name__)

DECLINED = -1
"""The error code MCP's examples use for a request the user rejected."""


class ServerRequests:
    """Answers servers' sampling, elicitation and roots requests for one toolbox (see the module doc).

    `model` gives the running agent's model (asked at each request: it may be switched meanwhile).
    `roots` are the folders servers without roots of their own see (paths or file:// URIs).
    `non_interactive` says why nobody can be asked, for the messages sent to servers.
    `sampling_model(model, call)` gives the model that answers a sampling request made during `call`
    (None: outside any call, or unknown); a `ToolbridgeError` from it refuses the request.
    """

    def __init__(
        self,
        config: Config,
        *,
        model: Callable[[], Model | None] = lambda: None,
        asker: UserAsker | None = None,
        roots: Sequence[str] = (),
        non_interactive: str = "nobody can be asked here",
        sampling_model: Callable[[Model, CallInFlight | None], Model] = lambda model, call: model,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.sampling_model = sampling_model
        self.model = model
        self.asker = asker
        self.roots = Roots(roots, per_server=_server_roots(config))
        """The roots servers see; `set()` them, then tell the pool (`notify_roots_changed`)."""
        self.non_interactive = non_interactive
        self._clock = clock
        self._recent: dict[str, deque[float]] = {}
        self._models: dict[str, Model] = {}
        self._resolving = anyio.Lock()

    def features(self) -> ClientFeatures:
        return ClientFeatures(
            sampling=self.sample,
            elicitation=self.elicit,
            roots=self.roots,
            on_elicitation_complete=self._completed,
        )

    async def aclose(self) -> None:
        """Close the models opened for servers (not the agent's)."""
        models, self._models = self._models, {}
        for model in models.values():
            await model.aclose()

    # -- sampling -------------------------------------------------------------------------------

    async def sample(
        self, server: str, params: mcp.CreateMessageRequestParams
    ) -> SamplingReply | mcp.ErrorData:
        settings = self._server_config(server)
        if (refused := self._over_rate_limit(server)) is not None:
            return refused
        try:
            model = await self._model_for(server, params)
        except ToolbridgeError as exc:
            return _error(f"Server {server!r} asked for a completion, but no model can answer: {exc}")
        try:
            model = self.sampling_model(model, asking_call())
        except ToolbridgeError as exc:
            return _error(f"Sampling refused for server {server!r}: {exc}", code=DECLINED)
        if settings is None or settings.sampling.approval != "never":
            if self.asker is None:
                return _error(self._nobody(server, "Sampling", self.non_interactive), code=DECLINED)
            request = SamplingRequest(server=server, params=params, model=model.name, call=asking_call())
            try:
                approved = await self.asker.approve_sampling(request)
            except NobodyToAsk as exc:
                return _error(self._nobody(server, "Sampling", str(exc)), code=DECLINED)
            if not approved:
                return _error(f"The user declined the sampling request of server {server!r}.", code=DECLINED)
        cap = settings.sampling.max_tokens if settings is not None else None
        try:
            return await sample_with(model, params, max_tokens=cap, server=server)
        except ToolbridgeError as exc:
            return _error(f"The model {model.name!r} failed to answer: {exc}")

    def _over_rate_limit(self, server: str) -> mcp.ErrorData | None:
        settings = self._server_config(server)
        limit = settings.sampling.rate_limit if settings is not None else None
        if limit is None:
            return None
        now = self._clock()
        recent = self._recent.setdefault(server, deque())
        while recent and recent[0] <= now - 60:
            recent.popleft()
        if len(recent) >= limit:
            return _error(
                f"Sampling refused: server {server!r} has made {limit} requests in the last minute, its "
                "limit (raise 'sampling.rate_limit' in its config to allow more).",
                code=DECLINED,
            )
        recent.append(now)
        return None

    async def _model_for(self, server: str, params: mcp.CreateMessageRequestParams) -> Model:
        settings = self._server_config(server)
        name = settings.sampling.model if settings is not None else None
        if name is None:
            name = self._hinted_model(params)
        if name is None:
            agent_model = self.model()
            if agent_model is not None:
                return agent_model
        async with self._resolving:
            key = name or ""
            if key not in self._models:
                self._models[key] = await resolve_model_async(name, self.config)
            return self._models[key]

    def _hinted_model(self, params: mcp.CreateMessageRequestParams) -> str | None:
        """The first configured model a hint names (hints are substrings of a name or model id)."""
        hints = params.model_preferences.hints if params.model_preferences else None
        for hint in hints or ():
            wanted = (hint.name or "").lower()
            for name, model in self.config.models.items():
                if wanted and (wanted in name.lower() or wanted in (model.model or "").lower()):
                    return name
        return None

    # -- elicitation ----------------------------------------------------------------------------

    async def elicit(self, server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult | mcp.ErrorData:
        if self.asker is None:
            return _error(
                f"Elicitation declined: {self.non_interactive}, so nobody can answer the question of server {server!r} "
                f"question ({params.message!r}). Run toolbridge interactively to answer it.",
                code=DECLINED,
            )
        try:
            return await self._ask_person(server, params, self.asker)
        except NobodyToAsk as exc:
            return _error(
                f"Elicitation declined: {exc}, so nobody can answer the question of server {server!r} "
                f"({params.message!r}). Run toolbridge interactively to answer it.",
                code=DECLINED,
            )

    async def _ask_person(
        self, server: str, params: mcp.ElicitRequestParams, asker: UserAsker
    ) -> mcp.ElicitResult | mcp.ErrorData:
        if isinstance(params, mcp.ElicitRequestURLParams):
            request = ElicitationRequest(
                server=server,
                message=params.message,
                url=params.url,
                elicitation_id=params.elicitation_id,
                call=asking_call(),
            )
            answer = await asker.elicit(request)
            return mcp.ElicitResult(action=answer.action)
        try:
            form = ElicitationForm.from_schema(params.requested_schema)
        except FormError as exc:
            return _error(
                f"Elicitation declined: toolbridge cannot show the form server {server!r} asks for: {exc}"
            )
        request = ElicitationRequest(server=server, message=params.message, form=form, call=asking_call())
        answer = await asker.elicit(request)
        if answer.action != "accept":
            return mcp.ElicitResult(action=answer.action)
        try:
            content = form.complete(answer.content or {})
        except FormError as exc:
            return _error(f"The answer to the form of server {server!r} was not valid: {exc}")
        return mcp.ElicitResult(action="accept", content=dict(content))

    def _nobody(self, server: str, what: str, why: str) -> str:
        return (
            f"{what} declined: {why}, and server {server!r} needs approval to use the model. The user "
            'can allow it with "sampling": {"approval": "never"} in its config.'
        )

    def _completed(self, server: str, elicitation_id: str) -> None:
        if self.asker is not None:
            self.asker.elicitation_completed(server, elicitation_id)

    def _server_config(self, server: str) -> ServerConfig | None:
        return self.config.servers.get(server)


def _server_roots(config: Config) -> dict[str, list[str]]:
    return {name: server.roots for name, server in config.servers.items() if server.roots is not None}


def _error(message: str, *, code: int = mcp.INTERNAL_ERROR) -> mcp.ErrorData:
    logger.info("%s", message)
    return mcp.ErrorData(code=code, message=message)
