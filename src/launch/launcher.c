/*
 * launcher.c — `kubectl-headroom` as the release's plugin archive ships it: a
 * static program that runs the dynamically linked `headroom` on the shared
 * libraries shipped beside it, so that the plugin runs on a machine that has
 * none of them (scripts/release/plugin.sh builds the archive; docs/cli.md,
 * "Installing the plugin from a release archive").
 *
 * The archive's layout, DIR being wherever it was unpacked:
 *   DIR/kubectl-headroom       this program (static: it needs nothing of the machine)
 *   DIR/libexec/headroom       the real binary
 *   DIR/lib/HR_LAUNCH_INTERP   the program interpreter (glibc's ld.so), and beside it every
 *                              shared library the binary needs, libc included
 *
 * It runs
 *   DIR/lib/HR_LAUNCH_INTERP --library-path DIR/lib --argv0 kubectl-headroom \
 *       DIR/libexec/headroom ARGS...
 * Calling the interpreter explicitly (rather than setting LD_LIBRARY_PATH) keeps
 * the machine's own ld.so and libraries out of it, and keeps the library path
 * out of the environment of what headroom starts (kubeconfig exec credential
 * plugins run on the machine's libraries). --argv0 makes headroom answer as the
 * plugin (src/cmd/main.c dispatches on argv[0]'s file name).
 *
 * DIR is the directory of the program's own file, symlinks resolved (krew links
 * ~/.krew/bin/kubectl-headroom to its store): /proc/self/exe, and where /proc is
 * not mounted (a bare chroot) realpath(argv[0]), or when argv[0] has no slash
 * the first executable of that name on PATH, as execvp would have found it.
 *
 * Exit status: headroom's own once the exec succeeds; 127 with one line on
 * stderr when a file of the layout is missing or DIR cannot be found; 126 when
 * the interpreter exists but cannot be executed.
 *
 * It uses no layer of src/ (docs/architecture.md) and links nothing but libc
 * (statically: CMakeLists.txt, target kubectl-headroom-launcher).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The program interpreter's file name (PT_INTERP's last component) on this
 * architecture; plugin.sh copies the binary's interpreter under that name and
 * checks that the two agree. */
#if defined(__x86_64__)
#define HR_LAUNCH_INTERP "ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define HR_LAUNCH_INTERP "ld-linux-aarch64.so.1"
#else
#error "kubectl-headroom's launcher: no program interpreter name for this architecture"
#endif

#define LAUNCH_NAME "kubectl-headroom"
#define EXIT_MISSING 127
#define EXIT_NOEXEC 126

static void complain(const char *what, const char *detail)
{
    /* A failed write to stderr has no one to report to: the exit status still says it. */
    (void)fprintf(stderr, "%s: %s%s%s\n", LAUNCH_NAME, what, detail ? ": " : "",
                  detail ? detail : "");
}

/* find_on_path: the first NAME on $PATH that is an executable file, into out
 * (PATH_MAX bytes), as execvp searches (an empty entry is the current
 * directory). 0 when found. */
static int find_on_path(const char *name, char *out)
{
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        return -1;
    const char *p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int n = len == 0 ? snprintf(out, PATH_MAX, "./%s", name)
                         : snprintf(out, PATH_MAX, "%.*s/%s", (int)len, p, name);
        if (n > 0 && n < PATH_MAX && access(out, X_OK) == 0)
            return 0;
        if (end == NULL)
            return -1;
        p = end + 1;
    }
}

/* self_dir: the directory of this program's file, symlinks resolved, into dir
 * (PATH_MAX bytes). 0 on success; otherwise it has said why on stderr. */
static int self_dir(const char *argv0, char *dir)
{
    ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX);
    if (n >= PATH_MAX) {
        complain("the path of /proc/self/exe is too long", NULL);
        return -1;
    }
    if (n > 0) {
        dir[n] = '\0';
    } else {
        /* No /proc (a bare root filesystem): argv[0], which is what the
         * caller executed, or what PATH made of it. */
        if (argv0 == NULL || *argv0 == '\0') {
            complain("cannot find its own directory", "no /proc/self/exe and no argv[0]");
            return -1;
        }
        char found[PATH_MAX];
        const char *path = argv0;
        if (strchr(argv0, '/') == NULL) {
            if (find_on_path(argv0, found) != 0) {
                complain("cannot find its own directory (no /proc/self/exe, and not on PATH)",
                         argv0);
                return -1;
            }
            path = found;
        }
        if (realpath(path, dir) == NULL) {
            int e = errno;
            complain(path, strerror(e));
            return -1;
        }
    }
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        complain("not an absolute path to itself", dir);
        return -1;
    }
    if (slash == dir)
        slash[1] = '\0'; /* "/kubectl-headroom": the root */
    else
        slash[0] = '\0';
    return 0;
}

/* join: DIR "/" REST into out (PATH_MAX bytes); 0 when it fits. */
static int join(char *out, const char *dir, const char *rest)
{
    size_t dl = strlen(dir);
    const char *sep = dl > 0 && dir[dl - 1] == '/' ? "" : "/";
    int n = snprintf(out, PATH_MAX, "%s%s%s", dir, sep, rest);
    if (n < 0 || n >= PATH_MAX) {
        complain("path too long", dir);
        return -1;
    }
    return 0;
}

/* present: PATH exists; otherwise say which file of the layout is missing. */
static int present(const char *path)
{
    if (access(path, F_OK) == 0)
        return 0;
    int e = errno;
    char msg[PATH_MAX + 160];
    int n = snprintf(msg, sizeof msg,
                     "%s: %s (the plugin's files must stay together as the release archive has "
                     "them: kubectl-headroom, lib/, libexec/)",
                     path, strerror(e));
    complain(n > 0 ? msg : path, NULL);
    return -1;
}

int main(int argc, char **argv)
{
    char dir[PATH_MAX], interp[PATH_MAX], libdir[PATH_MAX], bin[PATH_MAX];
    const char *argv0 = argc > 0 ? argv[0] : NULL;
    if (self_dir(argv0, dir) != 0)
        return EXIT_MISSING;
    if (join(libdir, dir, "lib") != 0 || join(interp, libdir, HR_LAUNCH_INTERP) != 0 ||
        join(bin, dir, "libexec/headroom") != 0)
        return EXIT_MISSING;
    if (present(interp) != 0 || present(bin) != 0)
        return EXIT_MISSING;

    /* interp --library-path LIBDIR --argv0 NAME BIN ARGS... NULL */
    int nargs = argc > 1 ? argc - 1 : 0;
    char **args = calloc((size_t)nargs + 7, sizeof *args);
    if (args == NULL) {
        complain("out of memory", NULL);
        return EXIT_MISSING;
    }
    char opt_lib[] = "--library-path", opt_argv0[] = "--argv0", name[] = LAUNCH_NAME;
    int i = 0;
    args[i++] = interp;
    args[i++] = opt_lib;
    args[i++] = libdir;
    args[i++] = opt_argv0;
    args[i++] = name;
    args[i++] = bin;
    for (int a = 1; a < argc; a++)
        args[i++] = argv[a];
    args[i] = NULL;

    execv(interp, args);
    int e = errno;
    complain(interp, strerror(e));
    free(args);
    return e == ENOENT ? EXIT_MISSING : EXIT_NOEXEC;
}
