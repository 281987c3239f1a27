"""PersonaBench: can a RAG assistant answer personal questions from noisy private documents?"""
