"""The end-to-end step: the target model answers a personal question from retrieved chunks."""

from personalens.models import ChatModel, Completion, Message

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


async def answer(model: ChatModel, question: str, chunks: list[str]) -> Completion:
    return await model.complete(answer_messages(question, chunks), **ANSWER_PARAMS)
