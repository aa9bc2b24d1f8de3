/* Dataset discovery as the DLIO entry in use makes it (docs/kernel.md): the folder listings and the probe stat DLIO
 * makes before its first data-file open, and the check that every file the kernel will read is there. */
#ifndef H5DLIO_DISCOVER_H
#define H5DLIO_DISCOVER_H
#include "layout.h"

/* Called before the first training epoch (every release past 2.0.0 discovers only `if self.args.do_train:`, v2.0.1
 * main.py:177, f6796ed :255; 2.0.0 main.py:171 also in a generate-only launch, which the kernel does not replay).
 * Lists each phase's folder (and its sub-folders) as DLIO does: the 2.x entries (file_sharding index_slice) on every
 * rank, listing <folder>, probing its first entry, then globbing; the 3.x entries (round_robin) on rank 0 only, from
 * the configured sub-folder count. A missing folder or file of an enabled phase, or a file that is not a regular
 * one, ends every rank with status 2 naming key 'data-folder' (ranks agree: none waits for another). */
void discover_dataset(const layout_t *L, int rank);
#endif
