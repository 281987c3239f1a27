"""How many tokens a target reply may take: `--max-tokens`, capped for a local model so that the
prompt and the reply fit in its context.

llama.cpp in-process gives each request one slot's context (`ChatModel.context_tokens`, 8192 by
default) and stops a reply where the context ends. The prompt's tokens are bounded from above
by its UTF-8 bytes (a byte-level BPE token is at least one byte) plus the chat template's tokens
per message, so the cap never lets a reply run into the end of the context. An API model's
server knows its own context: its request carries `--max-tokens` unchanged.
"""

from personalens.models import ChatModel
from personalens.models.completion import Message

TEMPLATE_TOKENS = 16  # role markers and separators per message, with room to spare


def prompt_bound(messages: list[Message]) -> int:
    """An upper bound on the tokens of `messages`."""
    return sum(len(m["content"].encode()) + TEMPLATE_TOKENS for m in messages)


def reply_tokens(model: ChatModel, messages: list[Message], max_tokens: int,
                 later: int = 0) -> int:
    """The max_tokens to request; `later` bounds (in tokens) what a dialogue adds to
    `messages` before its last request."""
    context = model.context_tokens
    if context is None:
        return max_tokens
    return max(1, min(max_tokens, context - prompt_bound(messages) - later))
