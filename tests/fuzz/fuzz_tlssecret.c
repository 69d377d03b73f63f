/*
 * fuzz_tlssecret.c — libFuzzer target for what the self-managed webhook
 * certificate reads (design §8): the Secret and the
 * MutatingWebhookConfiguration as the API server returns them
 * (kube/write/tlssecret.h), and the PEM values of the Secret as GnuTLS
 * reads them for the decision (server/certinfo.h). Anyone allowed to
 * update the Secret writes these bytes.
 *
 * The input is the JSON of an object; its first bytes, cut at NUL bytes,
 * are also taken as the Secret's four PEM values and a caBundle.
 *
 * Invariants: nothing crashes or leaks; a parsed Secret's values are
 * NUL-terminated at their length; garbage PEM is never a usable CA or pair.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/write/tlssecret.h"
#include "server/certinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next NUL-separated piece of [*p, end). */
static const char *piece(const char **p, const char *end, size_t *len)
{
    const char *s = *p;
    const char *z = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    *len = z ? (size_t)(z - s) : (size_t)(end - s);
    *p = z ? z + 1 : end;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';

    hr_ktls_secret sec;
    hr_err err;
    if (hr_ktls_secret_parse(s, size, &sec, &err) == HR_OK) {
        const char *v[] = {sec.crt, sec.key, sec.ca, sec.ca_key};
        size_t l[] = {sec.crt_len, sec.key_len, sec.ca_len, sec.ca_key_len};
        for (int i = 0; i < 4; i++)
            if (v[i] && v[i][l[i]] != '\0')
                abort();
        hr_certsrc src = {sec.crt,     sec.key,     sec.ca,     sec.ca_key,
                          sec.crt_len, sec.key_len, sec.ca_len, sec.ca_key_len};
        hr_certplan_in in;
        char serial[HR_CERTINFO_SERIAL_LEN];
        hr_certinfo_read(&src, &(hr_certnames){0}, sec.ca, sec.ca_len, (int64_t)time(NULL), &in,
                         serial);
        hr_ktls_secret_free(&sec);
    }
    hr_kmwc m;
    if (hr_kmwc_parse(s, size, "ca", 2, &m, &err) == HR_OK)
        hr_kmwc_free(&m);

    const char *p = s, *end = s + size;
    size_t l[5];
    const char *v[5];
    for (int i = 0; i < 5; i++)
        v[i] = piece(&p, end, &l[i]);
    hr_certsrc src = {v[0], v[1], v[2], v[3], l[0], l[1], l[2], l[3]};
    static const char *const dns[] = {"hr-webhook.ns.svc"};
    static const char *const ips[] = {"127.0.0.1"};
    hr_certnames want = {dns, 1, ips, 1};
    hr_certplan_in in;
    char serial[HR_CERTINFO_SERIAL_LEN];
    hr_certinfo_read(&src, &want, v[4], l[4], (int64_t)time(NULL), &in, serial);
    /* random bytes are not a CA with its key, nor a pair it issued */
    if (size < 64 && (in.ca_ok || in.leaf_ok))
        abort();
    hr_selfsigned *ca;
    if (hr_certinfo_signing_ca(&src, &ca, &err) == HR_OK)
        hr_selfsigned_free(ca);
    free(s);
    return 0;
}
