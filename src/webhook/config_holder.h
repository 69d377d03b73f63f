/*
 * config_holder.h — the live HeadroomConfig, shared between the thread that
 * learns about changes (the config watch) and the threads that read it on
 * every request (webhook connections).
 *
 * A reader must never see a config half-way through an update, and an
 * admission request must not wait behind a slow writer. So the config is
 * published as immutable snapshots: a writer deep-copies the new hr_config
 * into a snapshot with its own arena and swaps a pointer under a short
 * write lock; readers take a reference under a read lock and use their
 * snapshot for as long as they like. The last reference frees it.
 *
 * What is published is the configuration in force — hr_config_effective's
 * result, --dry-run already applied — so a reader never re-derives the
 * precedence of design §11. `headroom run` publishes from its one
 * "config changed" path (cmd_run.c, apply_config_locked), which also
 * pushes the change to the controller.
 */
#ifndef HR_WEBHOOK_CONFIG_HOLDER_H
#define HR_WEBHOOK_CONFIG_HOLDER_H

#include <stdint.h>

#include "core/config.h"
#include "util/err.h"

typedef struct hr_cfg_snapshot hr_cfg_snapshot;
typedef struct hr_cfg_holder hr_cfg_holder;

/* The config inside a snapshot (valid while the reference is held). */
const hr_config *hr_cfg_snapshot_config(const hr_cfg_snapshot *s);

/* Monotonic version: 1 for the first config, +1 per publish. */
uint64_t hr_cfg_snapshot_version(const hr_cfg_snapshot *s);

/* A holder starting with `initial` (deep-copied). */
HR_MUST_CHECK hr_status hr_cfg_holder_new(const hr_config *initial, hr_cfg_holder **out,
                                          hr_err *err);
void hr_cfg_holder_free(hr_cfg_holder *h);

/* Publish a new config (deep-copied; the caller keeps ownership of c and
 * of everything it points to). On error the previous config stays. */
HR_MUST_CHECK hr_status hr_cfg_holder_set(hr_cfg_holder *h, const hr_config *c, hr_err *err);

/* Take a reference to the current snapshot; never NULL. Pair with
 * hr_cfg_snapshot_release. */
hr_cfg_snapshot *hr_cfg_holder_get(hr_cfg_holder *h);
void hr_cfg_snapshot_release(hr_cfg_snapshot *s);

#endif
