"""The Inspect extension's entry point (`[project.entry-points.inspect_ai]`): importing it
registers the tasks `personalens/<lens>` and the model provider `personalens/<spec>`."""

from personalens.inspect_tasks.model_provider import personalens_models
from personalens.inspect_tasks.personabench import personabench
from personalens.inspect_tasks.pqb import pqb
from personalens.inspect_tasks.prefdisco import prefdisco
from personalens.inspect_tasks.prisk import prisk

__all__ = ["personabench", "personalens_models", "pqb", "prefdisco", "prisk"]
