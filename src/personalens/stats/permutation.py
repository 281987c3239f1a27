"""The paired sign-flip permutation test of a mean difference (condition vs base, per record).

Exact when every sign pattern fits in `resamples` (2^n <= resamples); otherwise Monte Carlo with
the +1 correction, p = (1 + #{|mean*| >= |mean|}) / (1 + resamples), which is never 0.

The Monte Carlo draws are those of `default_rng(seed).choice((1.0, -1.0), size=(resamples,
n))`, generated without building that matrix: `choice` draws integers(0, 2), and numpy makes
each from the top bit of one 32-bit half (low half first) of the PCG64 stream, so the signs
are the sign bits of the raw words read as int32 (a test pins this against `choice`). The bits
are packed eight to a byte and each resample's sum is read from a table of every byte's
partial sum, in chunks of rows: 8x fewer operations than the sign matrix product and no
(resamples x n) float matrix (2 GB at 25,000 records). Sums of integer scores are exact either
way; other sums differ from the matrix product by rounding only, far inside the tie tolerance.
"""

import sys
from collections.abc import Sequence

import numpy as np

_CHUNK_VALUES = 1 << 22  # signs per chunk: 4M (2M raw words, 16 MB)
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)  # 256 x 8, LSB first


def sign_flip_test(differences: np.ndarray, *, resamples: int = 10000, seed: int = 0) -> dict:
    """{mean, p, exact, n} for the two-sided test that the paired differences centre on 0."""
    return sign_flip_tests([differences], resamples=resamples, seed=seed)[0]


def sign_flip_tests(columns: Sequence[np.ndarray], *, resamples: int = 10000,
                    seed: int = 0) -> list[dict]:
    """`sign_flip_test` of each column, the same numbers, one draw per length.

    Columns of equal length share the seed's sign draws (as separate calls with the same seed
    would draw them), so the draws are made once for all of them.
    """
    arrays = [np.asarray(c, dtype=float) for c in columns]
    out: list[dict] = [{} for _ in arrays]
    by_length: dict[int, list[int]] = {}
    for i, d in enumerate(arrays):
        by_length.setdefault(len(d), []).append(i)
    for n, indices in by_length.items():
        ds = [arrays[i] for i in indices]
        if n == 0:
            results = [{"mean": None, "p": None, "exact": False, "n": 0} for _ in ds]
        elif 2 ** n <= resamples:
            results = [_exact(d) for d in ds]
        else:
            results = _monte_carlo(ds, resamples, seed)
        for i, result in zip(indices, results, strict=True):
            out[i] = result
    return out


def _tolerance(observed: float) -> float:
    return 1e-12 * max(1.0, observed)  # float noise must not split ties


def _exact(d: np.ndarray) -> dict:
    n = len(d)
    observed = abs(d.mean())
    # Every sign pattern, in itertools.product((1, -1), repeat=n) order.
    patterns = np.arange(2 ** n)[:, None] >> np.arange(n - 1, -1, -1)[None, :]
    signs = 1.0 - 2.0 * (patterns & 1)
    means = np.abs(signs @ d / n)
    return {"mean": float(d.mean()), "p": float(np.mean(means >= observed - _tolerance(observed))),
            "exact": True, "n": n}


def _monte_carlo(ds: list[np.ndarray], resamples: int, seed: int) -> list[dict]:
    n = len(ds[0])
    rng = np.random.default_rng(seed)
    if sys.byteorder != "little":  # the int32 view below reads halves in little-endian order
        signs = rng.choice((1.0, -1.0), size=(resamples, n))
        return [_result(d, np.abs(signs @ d / n), resamples) for d in ds]
    groups = -(-n // 8)
    padded = np.zeros((len(ds), groups * 8))
    for k, d in enumerate(ds):
        padded[k, :n] = d
    # tables[k][g * 256 + b]: the sum of column k's elements 8g..8g+7 whose bit is set in b.
    tables = [(row.reshape(groups, 8) @ _BYTE_BITS.T).ravel() for row in padded]
    offsets = (np.arange(groups, dtype=np.intp) * 256)[:, None]
    totals = [d.sum() for d in ds]
    negatives = np.empty((len(ds), resamples))  # sum of the elements flipped to -1
    chunk = max(2, (_CHUNK_VALUES // n) // 2 * 2)  # even: whole raw words per chunk
    index = np.empty((groups, min(chunk, resamples)), dtype=np.intp)
    gathered = np.empty(index.shape)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        words = rng.bit_generator.random_raw(-(-rows * n // 2))
        bits = (words.view(np.int32)[: rows * n] < 0).reshape(rows, n)
        packed = np.packbits(bits, axis=1, bitorder="little")
        idx, buffer = index[:, :rows], gathered[:, :rows]
        np.add(packed.T, offsets, out=idx)
        for k, table in enumerate(tables):
            np.take(table, idx, out=buffer)
            negatives[k, start:start + rows] = buffer.sum(axis=0)
    return [_result(d, np.abs(total - 2 * negative) / n, resamples)
            for d, total, negative in zip(ds, totals, negatives, strict=True)]


def _result(d: np.ndarray, means: np.ndarray, resamples: int) -> dict:
    observed = abs(d.mean())
    extreme = int(np.sum(means >= observed - _tolerance(observed)))
    return {"mean": float(d.mean()), "p": (1 + extreme) / (1 + resamples), "exact": False,
            "n": len(d)}
