# Parameters of the small-test benchmark: odd sizes, as kernel suites use to
# catch masking bugs. SMALL_TESTS_SCALE (default 1) multiplies the cases.
import os

import torch

SCALE = int(os.environ.get('SMALL_TESTS_SCALE', '1'))
ROWS = [1, 3, 17, 64, 127][: 2 + SCALE]
COLS = [33, 127, 255, 1000, 4097][: 2 + SCALE]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SIZES = [7, 1000, 4099, 65537, 262147][: 2 + SCALE]


def tol(dtype):
    return {'atol': 1e-5, 'rtol': 1e-5} if dtype == torch.float32 else {'atol': 2e-2, 'rtol': 2e-2}
