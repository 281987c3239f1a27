"""The models layer: one async call shape over every backend, with cache, retries and limits."""

from personalens.models.chat_model import ChatModel
from personalens.models.completion import Completion, Message, Provider, Usage
from personalens.models.failures import ModelCallFailed, PermanentModelError, TransientModelError
from personalens.models.retry import RetryPolicy
from personalens.models.role_set import Role, RoleModels, RoleSet
from personalens.models.settings import ModelSettings
from personalens.models.spec import DEFAULT_MODEL, SPEC_HELP, load_model, validate_spec
from personalens.models.structured import complete_structured, schema_bounded
from personalens.runs.usage import UsageLedger, merge_usage

__all__ = [
    "DEFAULT_MODEL", "SPEC_HELP", "ChatModel", "Completion", "Message", "ModelCallFailed",
    "ModelSettings", "PermanentModelError", "Provider", "RetryPolicy", "Role", "RoleModels",
    "RoleSet", "TransientModelError", "Usage", "UsageLedger", "complete_structured",
    "load_model", "merge_usage", "schema_bounded", "validate_spec",
]
