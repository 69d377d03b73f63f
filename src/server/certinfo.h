/*
 * certinfo.h — what the self-managed webhook certificate's Secret holds,
 * read with GnuTLS for the decision of certplan.h (design §8): which CA of
 * ca.crt ca.key belongs to, whether tls.crt and tls.key are a pair it or
 * another CA of the bundle issued for the names wanted, valid now, and
 * whether a caBundle trusts the signing CA.
 *
 * Everything read is untrusted (anyone with update on the Secret wrote
 * it): a part that does not parse is reported as unusable, never an error
 * or a crash (tests/fuzz/fuzz_tlssecret.c).
 */
#ifndef HR_SERVER_CERTINFO_H
#define HR_SERVER_CERTINFO_H

#include <stddef.h>
#include <stdint.h>

#include "server/certplan.h"
#include "server/selfsigned.h"
#include "util/err.h"

/* The four PEM values of the Secret (NULL or length 0: absent). */
typedef struct hr_certsrc {
    const char *crt, *key, *ca, *ca_key;
    size_t crt_len, key_len, ca_len, ca_key_len;
} hr_certsrc;

/* The names the serving certificate must carry. */
typedef struct hr_certnames {
    const char *const *dns;
    size_t n_dns;
    const char *const *ips;
    size_t n_ips;
} hr_certnames;

/* "0A1B…": the serial of a certificate in hex, up to 20 bytes, and the NUL. */
#define HR_CERTINFO_SERIAL_LEN 41

/* Fill *out from src, the names wanted, the webhook configuration's
 * caBundle (PEM, may be NULL) and now (seconds since the epoch); serial
 * gets tls.crt's serial in hex ("" when none). Never fails. */
void hr_certinfo_read(const hr_certsrc *src, const hr_certnames *want, const char *trusted,
                      size_t trusted_len, int64_t now, hr_certplan_in *out,
                      char serial[HR_CERTINFO_SERIAL_LEN]);

/* The signing CA (the certificate of ca.crt whose key is ca.key) as a
 * pair to sign with; HR_E_INPUT when there is none. Owned by the caller. */
HR_MUST_CHECK hr_status hr_certinfo_signing_ca(const hr_certsrc *src, hr_selfsigned **out,
                                               hr_err *err);

#endif
