/*
 * fuzz_kubeconfig.c — libFuzzer target for kubeconfig resolution
 * (kube/config/kubeconfig.h), which reads YAML written by people and by tools.
 *
 * Files named in the input are never opened (HR_KUBECONFIG_NO_FILES): the
 * fuzzer would otherwise read /dev/stdin or a FIFO it names and hang. The
 * input is resolved twice, with current-context and with a fixed context
 * name, so both lookup paths run. For an accepted input the result must be
 * coherent: a server with a scheme, a certificate only with its key, no
 * CA together with insecure.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const hr_kubeconfig *c)
{
    if (!c->server)
        abort();
    size_t host = strncmp(c->server, "https://", 8) == 0  ? 8
                  : strncmp(c->server, "http://", 7) == 0 ? 7
                                                          : 0;
    if (!host || c->server[host] == '\0' || c->server[host] == '/')
        abort(); /* a scheme, then a host */
    if (!c->cert != !c->key)
        abort();
    if (c->insecure && c->ca)
        abort();
    if (!c->ns || !c->context)
        abort();
    if (c->exec && (!c->exec->command || !c->exec->api_version))
        abort();
    for (size_t i = 0; c->exec && i < c->exec->n_args; i++)
        if (!c->exec->args[i])
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes: ASan flags any read past it. */
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    if (size)
        memcpy(s, data, size);
    const char *contexts[] = {NULL, "x"};
    for (int i = 0; i < 2; i++) {
        hr_kubeconfig *c = NULL;
        hr_err e;
        if (hr_kubeconfig_parse(s, size, "fuzz", "/nonexistent", contexts[i],
                                HR_KUBECONFIG_NO_FILES, &c, &e) == HR_OK) {
            check(c);
            hr_kubeconfig_free(c);
        } else if (c != NULL || e.msg[0] == '\0') {
            abort(); /* an error always says something and returns nothing */
        }
    }
    free(s);
    return 0;
}
