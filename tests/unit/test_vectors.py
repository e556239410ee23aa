"""Stored vectors (projections/vectors.py): as stored, and the nearest ones found exactly or through their sign bits."""

from __future__ import annotations

import numpy as np
import pytest
from mnemolog.projections import vectors
from mnemolog.projections.vectors import _Matrix, decode_int8, encode


def unit_rows(n: int, d: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_vector_comes_back_as_stored_within_the_quantisation_step() -> None:
    rows = unit_rows(5, 64, 1)
    back = decode_int8(encode(rows)).astype(np.float32) / vectors.SCALE
    assert back.shape == (5, 64) and np.abs(back - rows).max() <= 0.5 / vectors.SCALE + 1e-6


@pytest.mark.parametrize("signs", [False, True], ids=["exact", "sign bits then int8"])
def test_the_nearest_rows_are_found_both_ways(signs: bool) -> None:
    rows = unit_rows(5_000, 128, 2)
    stored = decode_int8(encode(rows))
    query = rows[1234] + 0.05 * unit_rows(1, 128, 3)[0]
    query /= np.linalg.norm(query)
    held = _Matrix(0, ["excerpt"] * len(rows), [str(i) for i in range(len(rows))],
                   stored if signs else stored.astype(np.float32) / vectors.SCALE,
                   np.packbits(stored > 0, axis=1) if signs else None)

    found, scores = held.scores(query, 5)

    exact = np.argsort(-(rows @ query))[:5]
    assert found[0] == 1234 and scores[0] > 0.95
    assert set(found[:3]) == set(exact[:3])
    assert list(scores) == sorted(scores, reverse=True)
