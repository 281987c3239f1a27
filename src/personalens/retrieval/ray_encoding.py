"""Encoding a corpus on Ray: Ray Data `map_batches` over actors that each hold the model once.

The driver sends only the texts its embedding cache lacks and stores what comes back, so the
cache stays the driver's; on a cluster with GPUs every actor takes one.
"""

from collections.abc import Callable

import numpy as np

ROWS_PER_BATCH = 256  # texts per actor call; the model still encodes in its own batch size


class _EncoderActor:
    """Holds one encoder for the actor's lifetime (Ray builds it once per actor)."""

    def __init__(self, load: Callable, batch_size: int):
        self.encoder = load()
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.encoder.encode(list(batch["text"]), batch_size=self.batch_size,
                                      convert_to_numpy=True, show_progress_bar=False)
        return {"row": batch["row"], "vector": np.asarray(vectors, np.float32)}


def encode_on_ray(executor, load: Callable, texts: list[str], batch_size: int) -> np.ndarray:
    """Vectors for `texts`, in order, encoded by Ray Data actors each holding `load()`'s model
    (`load` must pickle: a module-level function, or a partial of one)."""
    ray = executor.start()
    gpus = executor.gpus()
    actors = max(1, int(gpus) if gpus else int(ray.available_resources().get("CPU", 1)) // 2)
    rows = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
    encoded = rows.map_batches(_EncoderActor, fn_constructor_args=(load, batch_size),
                               batch_size=ROWS_PER_BATCH, batch_format="numpy",
                               compute=ray.data.ActorPoolStrategy(size=actors),
                               num_gpus=1 if gpus else 0)
    out: np.ndarray | None = None
    for batch in encoded.iter_batches(batch_format="numpy", batch_size=None):
        if out is None:
            out = np.empty((len(texts), batch["vector"].shape[1]), np.float32)
        out[batch["row"]] = batch["vector"]
    assert out is not None  # texts is never empty here
    return out
