"""The shared synthetic world: personas, social graph, profiles, private documents, QA."""
