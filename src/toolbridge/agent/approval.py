"""Asking the user before a call runs (see `toolbridge.tools.approval`, where the call pipeline asks)."""

from toolbridge.tools.approval import ApprovalRequest, Approver, approve_all

__all__ = ["ApprovalRequest", "Approver", "approve_all"]
