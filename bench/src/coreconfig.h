/* MLPerf Storage's comparability of the kernel's workload, as common/coreconfig.py computes it for a harness run:
 * the core-config-v1 hash of the DLIO workload YAML with its --set overrides, the class of the edition, and whether
 * the DLIO revision the kernel's entry replays is accepted for the edition. The facts come from
 * common/coreconfig.json through the generated coreconfig_facts.h (bench/coreconfig_facts.cmake). */
#ifndef H5DLIO_CORECONFIG_H
#define H5DLIO_CORECONFIG_H
#include "config.h"

/* output.json's "comparability" object (malloc'd JSON): the keys of common/coreconfig.py comparability(), and a
 * "note" when no hash could be made (an h5bench JSON configuration, a value PyYAML would read as a type the kernel
 * does not reproduce). */
char *coreconfig_json(const config_t *c);
/* provenance.json beside output.json (malloc'd JSON): mlpstorage's stamp (mlps-run-provenance/1) of the kernel run,
 * as common/coreconfig.py provenance() stamps a harness run, stamped_by "h5dlio kernel", its notes saying it is not
 * a submission; the DLIO revision is the one the kernel's entry declares it replays ("declared"). */
char *coreconfig_provenance(const config_t *c);
#endif
