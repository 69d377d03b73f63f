/*
 * fuzz_kresponse.c — libFuzzer target for what the client reads from
 * servers and plugins besides watch events: Status error bodies, the
 * Retry-After header, exec plugin ExecCredential output, Lease objects and
 * RFC 3339 times. All of them come from outside the process.
 *
 * Invariants: nothing crashes or leaks; a parsed credential has a token or
 * a certificate+key pair; a Retry-After is within [0, 1 h]; a Status
 * message is printable ASCII.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config/execcred.h"
#include "kube/ktime.h"
#include "kube/transport/kstatus.h"
#include "kube/write/lease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    if (size)
        memcpy(s, data, size);

    hr_kstatus st;
    hr_kstatus_parse(s, size, &st);
    for (const char *p = st.message; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            abort();

    long ra = hr_kretry_after_ms(s, size, 1796025600);
    if (ra < 0 || ra > 3600000)
        abort();

    const char *versions[] = {"client.authentication.k8s.io/v1",
                              "client.authentication.k8s.io/v1beta1"};
    for (int i = 0; i < 2; i++) {
        hr_kexec_result r;
        hr_err e;
        if (hr_kexec_parse(s, size, versions[i], &r, &e) == HR_OK) {
            if (!r.token && !(r.cert && r.key))
                abort();
            hr_kexec_result_free(&r);
        }
    }

    hr_klease l;
    hr_err e;
    if (hr_klease_parse(s, size, &l, &e) == HR_OK && !l.rv[0])
        abort();

    int64_t us = hr_ktime_parse_us(s, size);
    if (us != INT64_MIN) {
        char back[HR_KTIME_MICRO_MAX];
        hr_ktime_format_micro(us, back);
        if (hr_ktime_parse_us(back, strlen(back)) != us)
            abort();
    }
    free(s);
    return 0;
}
