"""The OpenAI-compatible endpoint: `/v1/chat/completions` with an agent's tools (`chat_completions`,
`mixed`) or in pass-through with the client's own (`passthrough`), and the wire shapes (`wire`)."""
