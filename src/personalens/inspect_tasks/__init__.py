"""The four lenses as Inspect tasks (`pip install 'personalens[inspect]'`): each task reuses its
lens's loader, prompts, protocol and scoring; `personalens import-inspect` turns the logs back
into run directories."""
