"""The end-to-end step: the target model answers a personal question from retrieved chunks."""

import hashlib
import json

from personalens.models import Message

ANSWER_PARAMS = {"temperature": 0.0, "max_tokens": 48, "seed": 0}


def answer_messages(question: str, chunks: list[str]) -> list[Message]:
    """One user turn: the chunks as numbered excerpts, then the question and the answer form."""
    excerpts = "\n\n".join(f"[{i}] {chunk}" for i, chunk in enumerate(chunks, start=1))
    prompt = (
        "Below are excerpts from my private records: conversations with people I know, my chats "
        "with an AI assistant, and my purchases.\n\n"
        f"{excerpts}\n\n"
        "Using only these excerpts, answer my question with just the name or names of the "
        "entities asked for, separated by commas. Do not add explanations or other words.\n\n"
        f"Question: {question}"
    )
    return [{"role": "user", "content": prompt}]


def prompt_digest(messages: list[Message]) -> str:
    """sha256 of the messages as sent: a record keeps it instead of the prompt (which holds k
    session texts), and the report checks the prompt it rebuilds from the data against it."""
    text = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
