"""PersonalQuery-Benchmark: is retrieval robust to how each user phrases a need?"""
