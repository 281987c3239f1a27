"""The four lenses; each asks `models`, `retrieval` and `runs` for what it needs."""
