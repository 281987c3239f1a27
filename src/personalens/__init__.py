"""personalens: measure how AI assistants understand, find, ask for and use private information."""

__version__ = "0.1.0"
