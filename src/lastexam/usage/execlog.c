/* lastexam exec log: preloaded (LD_PRELOAD) into every dynamically linked program an agent
 * runs in its sandbox. When a program starts it appends one line to $LASTEXAM_EXEC_LOG:
 *     exec<TAB>pid<TAB>ppid<TAB>unix time<TAB>executable<TAB>argv joined by 0x1f
 * and when a parent reaps a child (waitpid, wait4, wait3, wait) one line:
 *     exit<TAB>pid<TAB>code    or    signal<TAB>pid<TAB>signal number
 * $LASTEXAM_EXEC_LOG is a FIFO drained by the harness (usage/channel.py). Each line is one
 * blocking write() shorter than PIPE_BUF, so lines of concurrent processes never interleave
 * and none is lost. Before each write the descriptor is checked to still be the log (a program
 * may close it and reuse its number). Nothing else in the program changes: every failure is
 * ignored. Built by the harness with gcc (usage/shim.py). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static dev_t log_dev;
static ino_t log_ino;

static int log_ok(void) {
    struct stat st;
    return log_fd >= 0 && fstat(log_fd, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino;
}

static void clean(char *s, ssize_t n, char sep) {
    for (ssize_t i = 0; i < n; i++) {
        if (s[i] == 0) s[i] = sep;
        else if (s[i] == '\n' || s[i] == '\t' || s[i] == '\r') s[i] = ' ';
    }
}

__attribute__((constructor)) static void on_start(void) {
    const char *path = getenv("LASTEXAM_EXEC_LOG");
    if (!path) return;
    /* Non-blocking open: no reader (no harness) must not hang the program; writes block. */
    log_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (log_fd < 0) return;
    struct stat st;
    if (fstat(log_fd, &st) != 0) {
        close(log_fd);
        log_fd = -1;
        return;
    }
    log_dev = st.st_dev;
    log_ino = st.st_ino;
    int flags = fcntl(log_fd, F_GETFL);
    if (flags >= 0) fcntl(log_fd, F_SETFL, flags & ~O_NONBLOCK);
    char exe[960];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) n = 0;
    clean(exe, n, ' ');
    exe[n] = 0;
    char args[2880];
    ssize_t m = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        m = read(fd, args, sizeof args - 1);
        close(fd);
        if (m < 0) m = 0;
    }
    if (m > 0 && args[m - 1] == 0) m--;
    clean(args, m, '\x1f');
    args[m] = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[4000];
    int len = snprintf(line, sizeof line, "exec\t%d\t%d\t%ld.%06ld\t%s\t%s\n", (int)getpid(),
                       (int)getppid(), (long)ts.tv_sec, ts.tv_nsec / 1000, exe, args);
    if (len < 0) return;
    if (len >= (int)sizeof line) {
        len = sizeof line - 1;
        line[len - 1] = '\n';
    }
    ssize_t w = write(log_fd, line, len);
    (void)w;
}

static void report(pid_t pid, int status) {
    if (pid <= 0 || !log_ok()) return;
    char line[64];
    int len;
    if (WIFEXITED(status))
        len = snprintf(line, sizeof line, "exit\t%d\t%d\n", (int)pid, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        len = snprintf(line, sizeof line, "signal\t%d\t%d\n", (int)pid, WTERMSIG(status));
    else
        return;
    ssize_t w = write(log_fd, line, len);
    (void)w;
}

pid_t waitpid(pid_t pid, int *status, int options) {
    static pid_t (*real)(pid_t, int *, int);
    if (!real) real = (pid_t(*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
    int s = 0;
    pid_t r = real(pid, status ? status : &s, options);
    report(r, status ? *status : s);
    return r;
}

pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru) {
    static pid_t (*real)(pid_t, int *, int, struct rusage *);
    if (!real) real = (pid_t(*)(pid_t, int *, int, struct rusage *))dlsym(RTLD_NEXT, "wait4");
    int s = 0;
    pid_t r = real(pid, status ? status : &s, options, ru);
    report(r, status ? *status : s);
    return r;
}

pid_t wait3(int *status, int options, struct rusage *ru) {
    return wait4(-1, status, options, ru);
}

pid_t wait(int *status) {
    return waitpid(-1, status, 0);
}
