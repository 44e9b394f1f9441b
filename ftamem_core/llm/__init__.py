"""The language models: the backends (embedded llama.cpp, OpenAI-compatible, scripted), their prompt
cache, the prompts (package data), the GGUF files and the sentence encoder."""
