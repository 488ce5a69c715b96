"""Per-call planning of basic selections, and chunk keys (see plan.pyx)."""

from typing import Any

import numpy as np

MAX_TASKS: int
MAX_DIMS: int
COL_CHUNK: int
COL_START: int
COL_STEP: int
COL_COUNT: int
COL_OUT: int
COL_IDX: int
COL_FULL: int
NCOLS: int
PROJECTION_COLS: int
TABLE_MIN_POINTS: int
TABLE_ROOM: int

def plan_basic(selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...],
               bounds: tuple[np.ndarray | None, ...] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...], tuple[bool, ...]] | None: ...
def format_keys(coords: np.ndarray, head: str, separator: str) -> list[str]: ...
def plan_points(idx: list[np.ndarray], shape: tuple[int, ...], chunks: tuple[int, ...],
                bounds: tuple[np.ndarray | None, ...] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | tuple[int, int]: ...
def plan_mask(mask: np.ndarray, shape: tuple[int, ...], chunks: tuple[int, ...],
              bounds: tuple[np.ndarray | None, ...] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
