"""The pixels of the gemma3-vision-* fixtures' images, defined by a formula
that any language computes to the same float32 values.

    v[i] = ((i * 40503 + phase * 7919 + 12345) mod 65536) / 32768 - 1

over the flat index i of a channels x height x width tensor (channel-major,
then rows, then columns), with integer arithmetic up to the division. Every
step is exact: the remainder is below 2^16, dividing by 2^15 and subtracting
1 only moves the binary point, and the result has at most 16 significant
bits, so float32 holds it exactly. No sine, no rounding: nothing that a
math library or a compiler's contraction could change. The values cover
[-1, 1) as normalized pixels do (Gemma 3 normalizes to [-1, 1]).
"""
import numpy as np

FORMULA = "((i * 40503 + phase * 7919 + 12345) mod 65536) / 32768 - 1"


def fixture_pixels(shape, phase):
    """float32 array of the given [C, H, W] shape for image `phase`."""
    count = int(np.prod(shape))
    index = np.arange(count, dtype=np.int64)
    numerator = (index * 40503 + phase * 7919 + 12345) % 65536
    values = numerator.astype(np.float64) / 32768.0 - 1.0
    pixels = values.astype(np.float32)
    if not np.array_equal(pixels.astype(np.float64), values):
        raise AssertionError("a pixel value is not exact in float32")
    return pixels.reshape(shape)
