"""Anthropic's Messages API (`/v1/messages`): Claude Code and the `anthropic` SDK on any model."""
