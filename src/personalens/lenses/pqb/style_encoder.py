"""The contrastive style encoder: a sentence's rule features → a 16-dim unit vector.

A small MLP (rules → hidden → 16) is trained with the multi-positive InfoNCE of supervised
contrastive learning (SupCon, "L_out"): in each batch every other sentence of the same user is
a positive, every sentence of another user a negative, logits are cosine similarity / 0.1.

The output is L2-normalised, in training and in `encode`. InfoNCE with a temperature is defined
on cosine similarities; without the unit norm the network can sharpen every logit by inflating
vector lengths, the temperature stops meaning anything, and the lengths (which the loss never
constrains) would then dominate the per-user Gaussians fitted on these vectors. The price is that
vectors lie on the 15-sphere; a user's Gaussian still has full rank because the sentences
spread over a curved cap, and user_gaussians floors the covariance anyway.

Batches are built P×K: sample users, then `per_user` sentences of each, so every anchor has
positives. Everything is seeded (weights, sampling) and runs on CPU, so a seed reproduces the
weights bit for bit on the same machine and thread count.

Weights are saved as a plain .npz of float32 arrays plus a JSON config string in the same file,
loaded with allow_pickle=False: no Python objects are ever deserialised.
"""

import io
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse
import torch
from torch import nn
from torch.nn import functional as F

from personalens.runs import write_atomic

Features = np.ndarray | scipy.sparse.csr_matrix  # rows of rule features (x/(1+x))


@dataclass(frozen=True)
class EncoderOptions:
    dim: int = 16
    temperature: float = 0.1
    epochs: int = 30
    batch_size: int = 256  # sentences per batch = users per batch × per_user
    learning_rate: float = 1e-3
    seed: int = 0
    hidden: int = 128
    per_user: int = 8  # sentences drawn from each sampled user, so positives exist


class _Network(nn.Module):
    def __init__(self, n_rules: int, hidden: int, dim: int):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_rules, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.layers(x), dim=1)


@dataclass
class StyleEncoder:
    network: _Network
    options: EncoderOptions
    n_rules: int
    history: list[float] = field(default_factory=list)  # mean training loss per epoch

    def encode(self, X: Features, batch_size: int = 4096) -> np.ndarray:
        """Unit-norm style vectors (n, dim), float32, for rows of rule features."""
        if X.shape[1] != self.n_rules:
            raise ValueError(f"features have {X.shape[1]} rules; the encoder expects "
                             f"{self.n_rules}")
        self.network.eval()
        with torch.no_grad():
            parts = [self.network(_tensor(X[start:start + batch_size])).numpy()
                     for start in range(0, X.shape[0], batch_size)]
        return np.concatenate([np.zeros((0, self.options.dim), dtype=np.float32), *parts])

    def save(self, path: str | Path) -> None:
        arrays = {f"weight:{name}": value.detach().numpy()
                  for name, value in self.network.state_dict().items()}
        config = {"options": asdict(self.options), "n_rules": self.n_rules,
                  "history": self.history}
        buffer = io.BytesIO()  # a buffer, so numpy does not append ".npz"
        np.savez(buffer, config=np.array(json.dumps(config)), **arrays)
        write_atomic(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> "StyleEncoder":
        with np.load(path, allow_pickle=False) as data:
            config = json.loads(str(data["config"]))
            state = {key.removeprefix("weight:"): torch.from_numpy(data[key].copy())
                     for key in data.files if key.startswith("weight:")}
        options = EncoderOptions(**config["options"])
        network = _Network(config["n_rules"], options.hidden, options.dim)
        network.load_state_dict(state)
        return cls(network, options, config["n_rules"], list(config["history"]))


def supcon_loss(z: torch.Tensor, labels: torch.Tensor, temperature: float) -> torch.Tensor:
    """Multi-positive InfoNCE over unit vectors z: each anchor's mean -log p(positive).

    The denominator runs over every other sentence in the batch; anchors without a positive
    (cannot happen with P×K batches) are left out of the mean.
    """
    self_mask = torch.eye(len(z), dtype=torch.bool)
    logits = (z @ z.T / temperature).masked_fill(self_mask, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    positive = (labels[:, None] == labels[None, :]) & ~self_mask
    n_positive = positive.sum(dim=1)
    per_anchor = -log_prob.masked_fill(~positive, 0.0).sum(dim=1)
    has = n_positive > 0
    return (per_anchor[has] / n_positive[has]).mean()


def train_encoder(X: Features, users: list[str], options: EncoderOptions = EncoderOptions(),
                  progress: Callable[[int, float], None] | None = None) -> StyleEncoder:
    """Train on rows of X labelled by user; `progress(epoch, mean_loss)` after each epoch.

    Users with a single sentence cannot have positives and are not sampled. An epoch is as many
    batches as it takes to draw about as many sentences as X has rows.
    """
    X = X.tocsr() if scipy.sparse.issparse(X) else X  # CSR: cheap row sampling
    groups = _user_rows(users, X.shape[0])
    rng = np.random.default_rng(options.seed)
    with torch.random.fork_rng(devices=[]):  # seed locally; leave the caller's RNG untouched
        torch.manual_seed(options.seed)
        network = _Network(X.shape[1], options.hidden, options.dim)
    optimizer = torch.optim.Adam(network.parameters(), lr=options.learning_rate)
    encoder = StyleEncoder(network, options, X.shape[1])
    # The real batch is (users drawn) x (sentences each), smaller than batch_size when there
    # are few users; an epoch must still draw about as many sentences as X has rows.
    batch = _users_per_batch(len(groups), options) * options.per_user
    steps = max(1, math.ceil(X.shape[0] / batch))
    for epoch in range(1, options.epochs + 1):
        network.train()
        losses = [_step(network, optimizer, X, groups, rng, options) for _ in range(steps)]
        encoder.history.append(float(np.mean(losses)))
        if progress is not None:
            progress(epoch, encoder.history[-1])
    return encoder


def _user_rows(users: list[str], n_rows: int) -> list[np.ndarray]:
    if len(users) != n_rows:
        raise ValueError(f"{len(users)} user labels for {n_rows} feature rows")
    rows: dict[str, list[int]] = {}
    for i, user in enumerate(users):
        rows.setdefault(user, []).append(i)
    groups = [np.array(rows[u]) for u in sorted(rows) if len(rows[u]) >= 2]
    if len(groups) < 2:
        raise ValueError("contrastive training needs at least 2 users with 2+ sentences each")
    return groups


def _users_per_batch(n_users: int, options: EncoderOptions) -> int:
    return min(n_users, max(2, options.batch_size // options.per_user))


def _step(network: _Network, optimizer: torch.optim.Optimizer, X: Features,
          groups: list[np.ndarray], rng: np.random.Generator, options: EncoderOptions) -> float:
    chosen = rng.choice(len(groups), size=_users_per_batch(len(groups), options), replace=False)
    rows = [rng.choice(groups[g], size=min(options.per_user, len(groups[g])), replace=False)
            for g in chosen]
    labels = np.concatenate([np.full(len(take), label) for label, take in enumerate(rows)])
    z = network(_tensor(X[np.concatenate(rows)]))
    loss = supcon_loss(z, torch.from_numpy(labels), options.temperature)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def _tensor(rows: Features) -> torch.Tensor:
    dense = rows.toarray() if scipy.sparse.issparse(rows) else rows
    return torch.from_numpy(np.ascontiguousarray(dense, dtype=np.float32))
