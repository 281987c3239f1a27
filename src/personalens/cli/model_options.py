"""The model-endpoint options every command that calls a model takes, spelled once."""

from typing import Annotated

import typer

BaseUrl = Annotated[str | None, typer.Option(
    help="Base URL of an OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp, ...).")]
ApiKeyEnv = Annotated[str, typer.Option(help="Environment variable holding the API key.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Bypass the on-disk response cache.")]
Concurrency = Annotated[int | None, typer.Option(
    help="Maximum requests in flight to the model endpoint (default: adaptive).")]
MaxAttempts = Annotated[int, typer.Option(
    help="Attempts per model call before the step is recorded as failed.")]
