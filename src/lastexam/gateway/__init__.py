"""The model gateway: the one door between sandboxes and model providers.

A host-side HTTP server on a unix socket (`server.Gateway`) that speaks the Anthropic
Messages, OpenAI Chat Completions, OpenAI Responses and Gemini APIs (`wire`); forwards to the
real provider with the key held on the host (`upstream`, `providers`) or answers from a
script (`scripted`); and counts, prices and budgets every call of every trial (`session`,
`prices`, `models`). Submodules are imported where used: `models` is pure data that the
results store imports, and must not pull in the server.
"""
