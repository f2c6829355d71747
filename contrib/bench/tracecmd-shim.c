#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
static int blocked(const char *p){ return p && (strstr(p,"set_ftrace_") || strstr(p,"set_graph_") || strstr(p,"available_filter_functions") || strstr(p,"ftrace_enabled") || strstr(p, "set_ftrace_notrace_pid")); }
#define WRAP(name) int name(const char *p, int fl, ...){ static int (*real)(const char*,int,...); if(!real) real=dlsym(RTLD_NEXT,#name); va_list ap; va_start(ap,fl); int m=va_arg(ap,int); va_end(ap); if(blocked(p)) return real("/dev/null", (fl & ~(O_CREAT|O_TRUNC|O_APPEND)), 0); return real(p,fl,m);}
WRAP(open) WRAP(open64)
int openat(int d,const char *p,int fl,...){ static int (*real)(int,const char*,int,...); if(!real) real=dlsym(RTLD_NEXT,"openat"); va_list ap; va_start(ap,fl); int m=va_arg(ap,int); va_end(ap); if(blocked(p)) return real(d,"/dev/null",fl&~(O_CREAT|O_TRUNC|O_APPEND),0); return real(d,p,fl,m);}
