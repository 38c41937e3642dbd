"""The model gateway: the one door between sandboxes and model providers.

A host-side HTTP server on a unix socket that speaks the Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses and Gemini APIs; forwards to the real provider with the key
held on the host, or answers from a script; and counts, prices and budgets every call of
every trial.
"""

from lastexam.gateway.models import Budget, CallRecord, Script, SessionSummary, Usage
from lastexam.gateway.prices import PriceTable, price_table
from lastexam.gateway.providers import PROVIDERS, ModelSpec, parse_model
from lastexam.gateway.scripted import load_script
from lastexam.gateway.server import Gateway, check_model
from lastexam.gateway.session import Session

__all__ = [
    "PROVIDERS",
    "Budget",
    "CallRecord",
    "Gateway",
    "ModelSpec",
    "PriceTable",
    "Script",
    "Session",
    "SessionSummary",
    "Usage",
    "check_model",
    "load_script",
    "parse_model",
    "price_table",
]
