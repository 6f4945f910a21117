/* A small static binary for the execve cost: `exec_chain N` replaces itself
 * with `exec_chain N-1` until N is 0, so a run of N execs has no fork, no
 * dynamic loader and no libc start-up in it, only the exec path and the
 * hooks on it. Freestanding so that nothing but execve and exit runs. */
#define SYS_execve 59
#define SYS_exit 60

static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

__attribute__((noreturn)) static void quit(int code)
{
	for (;;)
		sys3(SYS_exit, code, 0, 0);
}

__attribute__((used)) void start_c(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	unsigned long n = 0;
	char buf[24], *p = buf + sizeof(buf) - 1;

	if (argc < 2)
		quit(2);
	for (const char *s = argv[1]; *s; ++s) {
		if (*s < '0' || *s > '9')
			quit(2);
		n = n * 10 + (unsigned long)(*s - '0');
	}
	if (n == 0)
		quit(0);
	n -= 1;
	*p = 0;
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	char *next[] = {argv[0], p, 0};
	sys3(SYS_execve, (long)argv[0], (long)next, (long)envp);
	quit(1); /* execve returned: refused or failed */
}

/* The kernel enters with the argument count at the stack pointer, which is
 * 16-byte aligned; `call` leaves the alignment a C function expects. */
__attribute__((naked)) void _start(void)
{
	__asm__ volatile("mov %rsp, %rdi\n\tcall start_c\n\tud2");
}
