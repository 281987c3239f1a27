"""PrefDisco: does a model discover a new user's preferences by asking, then reason for them?"""
