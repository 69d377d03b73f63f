/*
 * bench_cache.c — bytes per cached pod at 150,000 pods on 5,000 nodes
 * (design §16: ≤ 256 B/pod, i.e. RSS ≤ 64 MB for the whole cache).
 *
 * Pods go in the production way (JSON object → cache sink → decoder →
 * compact cache), generated one at a time so the input never sits in
 * memory. Two figures for the compact cache: RSS growth of the process
 * (/proc/self/statm, before and after) per pod, which includes malloc's
 * overhead and fragmentation, and the cache's own accounting.
 *
 * References, each in a forked child so their memory cannot blur ours:
 *   decoded views  — what keeping each pod as decoded (one arena per pod,
 *                    the shared decoder's output) would cost;
 *   whole objects  — each pod's JSON kept as a string, the least a cache
 *                    of whole objects holds (a Go informer keeps decoded
 *                    structs, several times more).
 * Ratios are reference / compact.
 *
 *   bench_cache [pods] [nodes]   defaults 150000 5000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yyjson.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/decode/decode.h"
#include "podgen.h"

#define N_NS 500

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * sysconf(_SC_PAGESIZE);
}

static char *buf;
static const size_t BUFCAP = 65536;

static yyjson_doc *gen_pod(unsigned i)
{
    podgen g = {buf, 0, BUFCAP};
    podgen_pod(&g, i, N_NS, 5000, podgen_nctr(i), 1000 + i);
    return yyjson_read(buf, g.len, 0);
}

static yyjson_doc *gen_node(unsigned i)
{
    podgen g = {buf, 0, BUFCAP};
    pg_put(
        &g,
        "{\"metadata\":{\"name\":\"node-%04u\",\"resourceVersion\":\"%u\",\"labels\":{"
        "\"beta.kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/os\":\"linux\","
        "\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/hostname\":\"node-%04u\","
        "\"kubernetes.io/os\":\"linux\",\"node.kubernetes.io/instance-type\":\"m7i.4xlarge\","
        "\"topology.kubernetes.io/region\":\"eu-west-1\",\"topology.kubernetes.io/zone\":"
        "\"eu-west-1%c\",\"karpenter.sh/capacity-type\":\"%s\",\"pool\":\"general-%u\"}},"
        "\"status\":{\"allocatable\":{\"cpu\":\"15890m\",\"memory\":\"60055Mi\",\"pods\":\"110\"},"
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"DiskPressure\","
        "\"status\":\"False\"},{\"type\":\"PIDPressure\",\"status\":\"False\"}]}}",
        i, i, i, 'a' + (char)(i % 3), i % 4 ? "on-demand" : "spot", i % 8);
    return yyjson_read(buf, g.len, 0);
}

static void put(hr_wsink *ws, yyjson_doc *d)
{
    hr_err err;
    if (!d || ws->upsert(ws->ud, yyjson_doc_get_root(d), &err) != HR_OK) {
        fprintf(stderr, "upsert failed: %s\n", d ? err.msg : "bad JSON");
        exit(1);
    }
    yyjson_doc_free(d);
}

/* Run fn in a child; it writes one double (bytes per pod) back. */
static double in_child(double (*fn)(unsigned), unsigned pods)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        double v = fn(pods);
        if (write(fd[1], &v, sizeof v) != (ssize_t)sizeof v)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    double v = -1;
    if (read(fd[0], &v, sizeof v) != (ssize_t)sizeof v)
        v = -1;
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return v;
}

/* Reference: each pod's decoded view in its own arena. */
static double ref_views(unsigned pods)
{
    hr_arena *arenas = calloc(pods, sizeof *arenas);
    hr_kpod *views = calloc(pods, sizeof *views);
    long r0 = rss_bytes();
    for (unsigned i = 0; i < pods; i++) {
        yyjson_doc *d = gen_pod(i);
        hr_err err;
        /* A chunk a little bigger than a pod's view, not the 64 KiB
         * default: the reference should be a fair one. */
        hr_arena_init(&arenas[i], 1024);
        if (hr_decode_pod(yyjson_doc_get_root(d), &arenas[i], &views[i], &err))
            exit(1);
        yyjson_doc_free(d);
    }
    return (double)(rss_bytes() - r0) / pods;
}

/* Reference: each pod's JSON kept whole. */
static double ref_json(unsigned pods)
{
    char **objs = calloc(pods, sizeof *objs);
    long r0 = rss_bytes();
    for (unsigned i = 0; i < pods; i++) {
        podgen g = {buf, 0, BUFCAP};
        podgen_pod(&g, i, N_NS, 5000, podgen_nctr(i), 1000 + i);
        objs[i] = malloc(g.len + 1);
        memcpy(objs[i], buf, g.len + 1);
    }
    return (double)(rss_bytes() - r0) / pods;
}

int main(int argc, char **argv)
{
    unsigned pods = argc > 1 ? (unsigned)atol(argv[1]) : 150000;
    unsigned nodes = argc > 2 ? (unsigned)atol(argv[2]) : 5000;
    buf = malloc(BUFCAP);
    hr_cache *c;
    hr_csink *ps, *ns;
    hr_err err;
    if (hr_cache_new(&c, &err) || hr_csink_new(c, HR_CK_POD, &ps, &err) ||
        hr_csink_new(c, HR_CK_NODE, &ns, &err))
        return 1;
    hr_wsink pw = hr_csink_wsink(ps), nw = hr_csink_wsink(ns);

    /* Warm up the transient buffers (yyjson, the sink's arena) so the
     * baseline already holds them, then measure from an empty cache. */
    put(&pw, gen_pod(0)); /* re-put below: counted once */
    long r0 = rss_bytes();
    for (unsigned i = 0; i < nodes; i++)
        put(&nw, gen_node(i));
    long r1 = rss_bytes();
    for (unsigned i = 0; i < pods; i++)
        put(&pw, gen_pod(i));
    long r2 = rss_bytes();
    hr_cache_stats st;
    hr_cache_lock(c);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_get_stats(c, &st);
    hr_cache_unlock(c);

    double per_pod_rss = (double)(r2 - r1) / st.pods;
    double per_pod_all = (double)(r2 - r0) / st.pods;
    double per_pod_own = (double)st.bytes / st.pods;
    printf("compact cache: %zu pods on %zu nodes, %zu namespaces seen through pods, "
           "%zu distinct interned strings (%zu bytes)\n",
           st.pods, st.nodes, (size_t)N_NS, st.strings, st.string_bytes);
    printf("  RSS: %.1f MB before, +%.1f MB for %u nodes, +%.1f MB for the pods\n", r0 / 1e6,
           (r1 - r0) / 1e6, nodes, (r2 - r1) / 1e6);
    printf("  bytes per pod, RSS growth (pods only):        %6.0f\n", per_pod_rss);
    printf("  bytes per pod, RSS growth (nodes and pods):   %6.0f   (budget 256: %s)\n",
           per_pod_all, per_pod_all <= 256 ? "met" : "MISSED");
    printf("  bytes per pod, the cache's own accounting:    %6.0f   "
           "(pod records+blobs+index %.0f, strings %.0f)\n",
           per_pod_own, (double)st.pod_bytes / st.pods, (double)st.string_bytes / st.pods);
    printf("  whole cache by its own accounting: %.1f MB (budget 64 MB at 150k pods + 5k nodes)\n",
           st.bytes / 1e6);

    /* Pod lookups and node scans while we are here: the controller's reads. */
    hr_cpod_scratch *scr = malloc(sizeof *scr);
    uint32_t ids[4096];
    size_t on_nodes = 0;
    hr_cache_lock(c);
    for (unsigned i = 0; i < nodes; i++) {
        char nn[32];
        snprintf(nn, sizeof nn, "node-%04u", i);
        on_nodes += hr_cache_node_pods(c, nn, ids, 4096);
    }
    hr_cache_unlock(c);
    printf("  pods reachable through the per-node index: %zu\n", on_nodes);
    free(scr);

    hr_csink_free(ps);
    hr_csink_free(ns);
    hr_cache_free(c);

    unsigned ref_pods = pods;
    double v = in_child(ref_views, ref_pods);
    double j = in_child(ref_json, ref_pods);
    printf("references (%u pods each, forked, RSS growth per pod):\n", ref_pods);
    printf("  decoded views, one arena per pod:   %8.0f B/pod   ratio %.1f x compact\n", v,
           v / per_pod_all);
    printf("  whole objects as JSON strings:      %8.0f B/pod   ratio %.1f x compact\n", j,
           j / per_pod_all);
    free(buf);
    return 0;
}
