"""Model backends: OpenAI-compatible HTTP, local GGUF through llama.cpp, and the scripted double."""
