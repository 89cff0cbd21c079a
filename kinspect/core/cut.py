"""Long names cut to a width where they read apart.

Inductor names a site's kernels alike up to their last words
(`triton_tem_fused_add_addmm_arange_embedding_native_layer_norm_unsqueeze_view_1`, `..._2`,
`..._3`): cut at the end, three variants read the same. A name cut here keeps its start
and, longer, its end, with `…` where the middle was.
"""

from __future__ import annotations

MARK = "…"

KERNEL_LEAST = 12
"""A kernel's name is never cut shorter: a few letters of its start, its distinguishing end."""


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole if it fits, else its first third and its
    last two thirds around `…`."""
    if len(text) <= width:
        return text
    if width <= 1:
        return MARK[:width]
    keep = width - 1
    head = keep // 3
    return text[:head] + MARK + text[len(text) - (keep - head):]
