/* The sandbox launcher: launch GATE_FD FSIZE NPROC PROGRAM ARGS...
 *
 * One hop between the harness and bwrap (it replaced sh -> prlimit -> setpriv). Started by
 * the harness already as the sandbox's uid, it waits until the harness has put it in the
 * sandbox's cgroups and writes "go" on the gate (GATE_FD -1: no gate), closes the gate, sets
 * the file-size and process-count limits (0: unchanged) and becomes PROGRAM.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int limit(int resource, const char *value) {
    rlim_t n = (rlim_t)strtoull(value, NULL, 10);
    struct rlimit rl = {n, n};
    return n == 0 ? 0 : setrlimit(resource, &rl);
}

int main(int argc, char **argv) {
    if (argc < 5)
        return 126;
    int gate = atoi(argv[1]);
    if (gate >= 0) {
        char go[3];
        if (read(gate, go, 3) != 3 || memcmp(go, "go\n", 3) != 0)
            return 126;
        close(gate);
    }
    if (limit(RLIMIT_FSIZE, argv[2]) != 0 || limit(RLIMIT_NPROC, argv[3]) != 0)
        return 126;
    execvp(argv[4], argv + 4);
    return 127;
}
