#pragma once

// Page operations on planes in host memory, with the same results as the
// backends' save_page, restore_page and copy_page_tokens on device planes:
// the pages of layers offloaded to host memory are moved by memcpy, never by
// a kernel.

#include "quire/kernels/kv_layout.h"

namespace quire::engine::detail {

// Whole pages to and from a buffer of the host tier's layout: each plane's
// page slice, key data, key scales, value data, value scales.
void host_save_page(const kernels::KvLayerView& layer, int page, void* out);
void host_restore_page(const kernels::KvLayerView& layer, int page, const void* in);
// The first `tokens` token slots of page `source` into page `destination`,
// every plane; an FP8 plane's per-page scales whole.
void host_copy_page_tokens(const kernels::KvLayerView& layer, int source, int destination,
                           int tokens);

}  // namespace quire::engine::detail
