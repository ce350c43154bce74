// LD_PRELOAD shim (bench/public/diag/phases.py): appends "before-main main exit-handlers" (ms) to
// $PHASES_OUT at the end of a process, from its constructor, main and exit.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double t0, tmain, texit;
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((constructor(101))) static void ctor(void) {
    t0 = now();
}
typedef int (*main_t)(int, char**, char**);
static main_t real_main;
static int wrap_main(int c, char** v, char** e) {
    tmain = now();
    int r = real_main(c, v, e);
    texit = now();
    return r;
}
typedef int (*lsm_t)(main_t, int, char**, void (*)(void), void (*)(void), void (*)(void), void*);
int __libc_start_main(main_t m, int c, char** v, void (*i)(void), void (*f)(void), void (*rf)(void),
                      void* st) {
    lsm_t real = (lsm_t)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = m;
    return real(wrap_main, c, v, i, f, rf, st);
}
void exit(int code) {
    if (texit == 0)
        texit = now();
    static void (*real_exit)(int);
    real_exit = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    real_exit(code);
    __builtin_unreachable();
}
__attribute__((destructor(101))) static void dtor(void) {
    double end = now();
    const char* p = getenv("PHASES_OUT");
    if (!p)
        return;
    FILE* f = fopen(p, "a");
    if (!f)
        return;
    fprintf(f, "%.3f %.3f %.3f\n", tmain - t0, texit - tmain, end - texit);
    fclose(f);
}
