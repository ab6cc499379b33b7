"""Reading bytes eight at a time in compiled code (imported with numba, on first use)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["load_u64", "has_byte"]

ONES = np.uint64(0x0101010101010101)
HIGHS = np.uint64(0x8080808080808080)


@intrinsic
def load_u64(typingctx, buf, i):  # pragma: no cover - compiled
    """The 8 bytes ``buf[i:i + 8]`` of a ``uint8`` array as one little-endian ``uint64``, read
    in one unaligned load (the caller keeps ``i + 8 <= len(buf)``)."""

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        at = builder.gep(array.data, [args[1]])
        word = builder.bitcast(at, ir.IntType(64).as_pointer())
        return builder.load(word, align=1)

    return types.uint64(buf, types.intp), codegen


@njit(cache=True, nogil=True)
def has_byte(word, spread):  # pragma: no cover - compiled
    """Whether one of the 8 bytes of ``word`` equals the byte that ``spread`` repeats
    (``0x2222...`` for a quote): the exact zero-byte test of "Bit Twiddling Hacks"."""
    v = word ^ spread
    return ((v - ONES) & ~v & HIGHS) != np.uint64(0)
