/* Optional DFTracer regions (epoch, step, sample read, compute, file generation). Nothing is linked at build time:
 * when DFTracer's preload library is in the process (LD_PRELOAD=libdftracer_preload.so, DFTRACER_ENABLE=1), its C
 * API (initialize_region/finalize_region) is found with dlsym and the kernel's phases appear in the same trace as
 * the POSIX calls; otherwise every call here is a no-op. */
#ifndef H5DLIO_TRACE_H
#define H5DLIO_TRACE_H
void trace_init(void);
int trace_enabled(void);
void *trace_begin(const char *name); /* NULL when tracing is off */
void trace_int(void *region, const char *key, long long value);
void trace_end(void *region);
#endif
