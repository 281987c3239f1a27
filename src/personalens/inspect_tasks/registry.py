"""The Inspect extension's entry point (`[project.entry-points.inspect_ai]`): importing it
registers a task `personalens/<lens>` for every registered lens that declares one (each also
a name of this module) and the model provider `personalens/<spec>`."""

from personalens.inspect_tasks.lens_task import lens_task_function, task_lenses
from personalens.inspect_tasks.model_provider import personalens_models

TASKS = {lens: lens_task_function(lens) for lens in task_lenses()}
globals().update(TASKS)

__all__ = ["TASKS", "personalens_models", *TASKS]
