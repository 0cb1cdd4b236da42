"""toolbridge as an MCP server: the tools, resources and prompts of many servers behind one."""

from toolbridge.gateway._approval import ApprovalGate
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._forward import gateway_features
from toolbridge.gateway.configured import GatewaySetup
from toolbridge.gateway.server import Gateway

__all__ = ["ApprovalGate", "ClientCalls", "Gateway", "GatewaySetup", "gateway_features"]
