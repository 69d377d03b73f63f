/*
 * certs.h — the webhook's serving certificate, read from tls.crt and
 * tls.key in a directory and re-read when they change, without a restart
 * (design §8: cert-manager rotates them in place).
 *
 * A thread sleeps until the directory changes (inotify: a Secret volume
 * swaps its ..data symlink, a plain rewrite closes a file) and then stats
 * both files (inode, size, mtime), besides once a minute for an event
 * missed or the directory replaced; where inotify is not available it
 * stats them every interval instead. A quiet daemon's certificates cost one
 * wakeup a minute, not one a second. It loads a new pair only when the certificate's public
 * key matches the private key, so a rotation caught half-way (key written,
 * cert not yet) keeps the old pair serving until the new one is whole.
 *
 * New TLS connections get the pair current at their handshake through
 * hr_certs_select, called from GnuTLS's certificate callback. A replaced
 * pair is not freed at once — a handshake on another thread may still be
 * using it — but after a grace period far longer than any handshake.
 *
 * The secured /metrics needs no provided pair: hr_certs_fallback_selfsigned
 * makes a self-signed one at start (selfsigned.h) that hr_certs_select_any
 * hands out until a pair loads; from then on the loaded pair, as for the
 * webhook, which never gets the self-signed one (hr_certs_select).
 */
#ifndef HR_SERVER_CERTS_H
#define HR_SERVER_CERTS_H

#include <gnutls/abstract.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/selfsigned.h"
#include "util/err.h"
#include "util/log.h"

typedef struct hr_certs hr_certs;

/* Prepare for dir/tls.crt and dir/tls.key and try a first load. Missing or
 * bad files are not an error here (they may appear later): the holder is
 * simply not ready until they load. */
HR_MUST_CHECK hr_status hr_certs_new(const char *dir, const hr_logger *log, hr_certs **out,
                                     hr_err *err);

/* hr_certs_new for dir/crt and dir/key: other file names than tls.crt and
 * tls.key (the Go implementation's --metrics-cert-name, --metrics-cert-key,
 * --webhook-cert-name, --webhook-cert-key). */
HR_MUST_CHECK hr_status hr_certs_new_files(const char *dir, const char *crt, const char *key,
                                           const hr_logger *log, hr_certs **out, hr_err *err);

/* A holder fed from memory, not files (the self-managed certificate's
 * Secret, read from the API: design §8): no thread, nothing loaded until
 * hr_certs_set_pem. what names the source in the log ("secret ns/name"). */
HR_MUST_CHECK hr_status hr_certs_new_mem(const char *what, const hr_logger *log, hr_certs **out,
                                         hr_err *err);

/* Load the pair tls.crt, tls.key from PEM, checked as a file pair is (the
 * key must match): 1 when a new pair is in force, 0 when it is the one in
 * force already, -1 (why set) when it cannot be used (the previous pair
 * keeps serving). One thread calls it. */
HR_MUST_CHECK int hr_certs_set_pem(hr_certs *c, const char *crt, size_t crt_len, const char *key,
                                   size_t key_len, char *why, size_t cap);

/* Start the thread (interval: the poll in ms where inotify is not
 * available, 0: 1000). */
HR_MUST_CHECK hr_status hr_certs_start(hr_certs *c, unsigned interval_ms, hr_err *err);

/* Stop the thread and free everything. */
void hr_certs_free(hr_certs *c);

/* One poll, as the thread does it: 1 when a new pair was loaded, 0 when
 * nothing changed, -1 when the files changed but could not be loaded. */
HR_MUST_CHECK int hr_certs_check(hr_certs *c);

/* A readiness check (hr_ready_fn): a pair is loaded. ud = hr_certs. */
bool hr_certs_ready(void *ud);

/* How many pairs were loaded so far (0: none yet). */
uint64_t hr_certs_generation(hr_certs *c);

/* The current pair for a handshake; 0 on success, -1 when none is loaded.
 * The pointers stay valid for the grace period after a replacement. */
HR_MUST_CHECK int hr_certs_select(hr_certs *c, gnutls_pcert_st **pcert, unsigned *n,
                                  gnutls_privkey_t *key);

/* Unless a pair is loaded already, make the self-signed fallback for the
 * names a scraper of this pod may dial (hr_selfsigned_for_pod: service, ns
 * and pod_ip may be NULL), kept until hr_certs_free. Logs once which
 * certificate /metrics starts with: the provided one, or the self-signed
 * one with its SHA-256 fingerprint. An error when it cannot be made. */
HR_MUST_CHECK hr_status hr_certs_fallback_selfsigned(hr_certs *c, const char *service,
                                                     const char *ns, const char *pod_ip,
                                                     hr_err *err);

/* As hr_certs_select, but the self-signed fallback when no pair is loaded
 * (-1 only when there is neither). */
HR_MUST_CHECK int hr_certs_select_any(hr_certs *c, gnutls_pcert_st **pcert, unsigned *n,
                                      gnutls_privkey_t *key);

#endif
