/* The sandbox launcher: launch UID GATE_FD FSIZE NPROC PROGRAM ARGS...
 *
 * One hop between the harness and bwrap (it replaced sh -> prlimit -> setpriv). It first
 * becomes UID (gid UID, no supplementary groups; -1: stays the caller), so that the harness
 * spawns it without changing ids itself (Python then forks with vfork, not a copy of the
 * harness's memory). It then waits until the harness has put it in the sandbox's cgroups and
 * writes "go" on the gate (GATE_FD -1: no gate), closes the gate, sets the file-size and
 * process-count limits (0: unchanged) and becomes PROGRAM.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int limit(int resource, const char *value) {
    rlim_t n = (rlim_t)strtoull(value, NULL, 10);
    struct rlimit rl = {n, n};
    return n == 0 ? 0 : setrlimit(resource, &rl);
}

static int become(const char *value) {
    char *end;
    long id = strtol(value, &end, 10);
    if (end == value || *end != '\0' || id < -1 || id > 0x7fffffffL)
        return -1; /* not a uid: never read as 0, root */
    if (id < 0)
        return 0;
    uid_t u = (uid_t)id;
    if (setgroups(0, NULL) != 0 || setresgid(u, u, u) != 0 || setresuid(u, u, u) != 0)
        return -1;
    uid_t r, e, s;
    return getresuid(&r, &e, &s) == 0 && r == u && e == u && s == u ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 6 || become(argv[1]) != 0)
        return 126;
    int gate = atoi(argv[2]);
    if (gate >= 0) {
        char go[3];
        if (read(gate, go, 3) != 3 || memcmp(go, "go\n", 3) != 0)
            return 126;
        close(gate);
    }
    if (limit(RLIMIT_FSIZE, argv[3]) != 0 || limit(RLIMIT_NPROC, argv[4]) != 0)
        return 126;
    execvp(argv[5], argv + 5);
    return 127;
}
