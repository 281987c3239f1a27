"""The models layer: one async call shape over every backend, with cache, retries and limits.

Names load on first use (lazy_loader), so importing one of them loads its module
only: `personalens --help` and the options models stay light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "chat_model": ["ChatModel"],
    "completion": ["Completion", "Message", "Provider", "Usage"],
    "failures": ["ModelCallFailed", "PermanentModelError", "TransientModelError"],
    "retry": ["RetryPolicy"],
    "role": ["Role"],
    "role_set": ["RoleModels", "RoleSet"],
    "settings": ["EndpointSettings", "ModelSettings", "load_model"],
    "spec": ["DEFAULT_MODEL", "PROVIDERS", "SPEC_HELP", "validate_spec"],
    "structured": ["complete_structured", "schema_bounded"],
})
