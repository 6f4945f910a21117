/* The ABI shared by the BPF programs and the userspace loader.
 * Every struct here crosses the kernel boundary (map values, ring-buffer
 * records), so each has fixed-width fields, explicit padding and layout
 * assertions that both compilers check. */
#ifndef LIVEGUARD_ABI_H
#define LIVEGUARD_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#ifdef __cplusplus
#define LG_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define LG_OFFSETOF(type, field) offsetof(type, field)
#include <cstddef>
#else
#define LG_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define LG_OFFSETOF(type, field) __builtin_offsetof(type, field)
#endif

#define LG_COMM_LEN 16
/* Cgroup nesting levels walked when looking for a tagged ancestor. Deeper
 * sessions than this are refused by `tag` rather than silently ignored. */
#define LG_MAX_CGROUP_LEVEL 32
#define LG_RINGBUF_BYTES (1024 * 1024)
/* Ancestors of the culprit an event records (nearest first), and the bytes
 * of its command line (NUL-separated arguments, as in /proc/<pid>/cmdline). */
#define LG_CHAIN_LEN 6
#define LG_ARGS_LEN 192
/* PYTEST_CURRENT_TEST as the culprit's libc held it at the refusal
 * ("path::test (phase)", cut to LG_TEST_LEN - 1 bytes), and how many
 * entries of its environment are searched for it. */
#define LG_TEST_LEN 256
#define LG_ENV_SCAN 128
/* Executables whose `environ` the kernel side can find. */
#define LG_MAX_ENVIRON_EXES 64
/* Map sizes: how many of each thing the kernel side can hold. */
#define LG_MAX_SESSIONS 4096
#define LG_MAX_PROTECTED_CGROUPS 4096
#define LG_MAX_PROTECTED_PIDS 16384
#define LG_MAX_GUARDED_CGROUPS 16384
#define LG_MAX_GUARDED_INODES 4096
#define LG_MAX_EXEC_WORDS 4096
/* Argv copies of execs in flight (one per thread between syscall entry
 * and the exec check), and files whose owner a member set (F_SETOWN). */
#define LG_MAX_EXEC_ARG_COPIES 4096
#define LG_MAX_FOWNERS 16384
/* Ports protected services listen on (learned from their sockets, or
 * named in the policy); kept until unload, so a restart's gap is covered. */
#define LG_MAX_PROTECTED_PORTS 4096
/* Filesystems that hold a protected tree, PID file or service directory,
 * whose free space the watcher measures. */
#define LG_MAX_WATCHED_FILESYSTEMS 256
/* Members' bus connections in the middle of writing a message. */
#define LG_MAX_BUS_WRITERS 4096
/* Names, ids and id prefixes of the containers guarded at their engines'
 * API sockets (a container takes 64 id prefixes, its id and its names). */
#define LG_MAX_ENGINE_REFS 8192
/* Arguments of one execve that the exec guard looks at, and the longest
 * argument it hashes; longer ones are hashed by their first bytes and
 * cannot match a policy word. */
#define LG_EXEC_MAX_ARGS 32
#define LG_EXEC_ARG_LEN 256

/* The door a refusal closed: one per kind of kernel path to a protected
 * service, named in events, counters and `status`. One table, so the
 * number, the name and the meaning never drift apart:
 * X(enum suffix, value, name, what it covers). */
#define LG_HOOKS(X)                                                                            \
	X(TASK_KILL, 0, "task_kill", "a signal sent directly")                                 \
	X(EXEC, 1, "exec", "a service-control command (bprm_check_security)")                  \
	X(CONTROL_FIFO, 2, "control_fifo", "a supervisor's control FIFO opened for writing")   \
	X(CGROUP_FILE, 3, "cgroup_file", "a cgroup file written (kill, freeze, procs, limits)") \
	X(PROC_FILE, 4, "proc_file", "/proc/<pid>/oom_score_adj, oom_adj or sysrq-trigger")    \
	X(PTRACE, 5, "ptrace", "ptrace attach, process_vm_*, process_madvise, /proc/<pid>/mem") \
	X(SIGIO, 6, "sigio", "SIGIO/SIGURG through F_SETOWN")                                  \
	X(SERVICE_SOCKET, 7, "service_socket", "connect() to a service manager's socket")      \
	X(BPF, 8, "bpf", "bpf() on liveguard's maps, programs or links")                       \
	X(PINS, 9, "pins", "liveguard's bpffs pins changed, or bpffs unmounted")               \
	X(LIMITS, 10, "limits", "prlimit, nice, scheduler, I/O priority of a protected process") \
	X(CLONE_INTO_CGROUP, 11, "clone_into_cgroup", "clone3(CLONE_INTO_CGROUP): a child born outside the session cgroup") \
	X(MOUNT, 12, "mount", "mount or unmount in the initial mount namespace")              \
	X(SYSCTL, 13, "sysctl", "a /proc/sys file written (core_pattern, modprobe, sched_rt_*)") \
	X(BPF_LOAD, 14, "bpf_load", "a BPF program loaded")                                   \
	X(PERF_EVENT, 15, "perf_event", "a perf event that signals (sigtrap)")                 \
	X(FANOTIFY, 16, "fanotify", "a fanotify permission mark (FAN_*_PERM)")                 \
	X(REALTIME, 17, "realtime", "a realtime scheduling policy (FIFO, RR, DEADLINE)")       \
	X(PATH, 18, "path", "a protected file or tree changed (write, create, remove, rename, attributes, locks)") \
	X(REBOOT, 19, "reboot", "reboot(2), kexec_load, kexec_file_load (CAP_SYS_BOOT)")       \
	X(MODULE, 20, "module", "a kernel module loaded or removed (CAP_SYS_MODULE)")          \
	X(CLOCK, 21, "clock", "the machine's clock or its adjustment set (CAP_SYS_TIME)")      \
	X(RAW_IO, 22, "raw_io", "I/O ports (ioperm, iopl), /dev/mem, /dev/port, /dev/kmem (CAP_SYS_RAWIO)") \
	X(POWER, 23, "power", "a /sys/power file written (suspend, freeze, hibernate)")       \
	X(SECURITYFS, 24, "securityfs", "a securityfs file written (lockdown, an LSM's policy)") \
	X(NETWORK, 25, "network", "the machine's network namespace changed: rtnetlink, netfilter, anything needing CAP_NET_ADMIN there") \
	X(HOSTNAME, 26, "hostname", "the machine's host or domain name set (sethostname, setdomainname)") \
	X(SWAP, 27, "swap", "swap turned on or off (swapon, swapoff)")                         \
	X(TERMINAL, 28, "terminal", "a terminal a protected process runs in: input (TIOCSTI), settings, foreground group, hangup") \
	X(PORT, 29, "port", "a TCP or UDP port a protected service listens on, bound by a member") \
	X(TASKS, 30, "tasks", "a process or thread beyond the session's task limit ([sessions] max_tasks)") \
	X(OOM, 31, "oom", "the OOM killer's order: an oom_score_adj written by a member, or a member it took") \
	X(USER_COUNTS, 32, "user_counts", "the last eighth of the user's inotify instances or watches, fanotify groups or marks") \
	X(MULTIPLEXER, 33, "multiplexer", "a terminal multiplexer's server outside the session (tmux, screen), which runs what it is sent") \
	X(FS_SPACE, 34, "fs_space", "a write to a filesystem a protected service keeps its files on, below its reserve ([sessions] fs_reserve)") \
	X(SERVICE_BUS, 35, "service_bus", "a D-Bus call that changes systemd's or logind's state (systemd-run, starting, stopping or killing a unit, power), or a bus write that cannot be read") \
	X(MAPPED, 36, "mapped", "a write or truncation of a file a protected process has mapped (its executable, a shared library, a mapped database)") \
	X(ENGINE_API, 37, "engine_api", "a Docker or Podman API request (its socket) that stops, kills, restarts, pauses, removes, updates, renames or runs a command in a protected container")

enum lg_hook {
#define LG_HOOK_ENUM(name, value, text, what) LG_HOOK_##name = value,
	LG_HOOKS(LG_HOOK_ENUM)
#undef LG_HOOK_ENUM
	LG_HOOK_COUNT,
};

/* What a LG_HOOK_LIMITS refusal tried to change (lg_event.detail). */
enum lg_limit_kind {
	LG_LIMIT_RLIMIT = 1,    /* a resource limit (prlimit, setrlimit) */
	LG_LIMIT_NICE = 2,      /* the nice value */
	LG_LIMIT_SCHEDULER = 3, /* the scheduling policy */
	LG_LIMIT_IOPRIO = 4,    /* the I/O priority */
};

/* What a guarded inode is (lg_guarded_inodes values). */
enum lg_inode_kind {
	LG_INODE_SYSTEMCTL = 1,      /* the systemctl binary */
	LG_INODE_S6_SVC = 2,         /* the s6-svc binary */
	LG_INODE_S6_SVSCANCTL = 3,   /* the s6-svscanctl binary */
	LG_INODE_SUPERVISE_CONTROL = 4, /* <service>/supervise/control */
	LG_INODE_SVSCAN_CONTROL = 5, /* <scandir>/.s6-svscan/control */
	LG_INODE_SERVICE_SOCKET = 6, /* systemd's private socket, the bus */
	LG_INODE_PIN_DIR = 7,        /* liveguard's own bpffs directory */
	LG_INODE_PROTECTED_TREE = 8, /* a [[protect]] path directory: it and all below */
	LG_INODE_PROTECTED_FILE = 9, /* a protected file itself, under any of its names */
	LG_INODE_MULTIPLEXER = 10,   /* a terminal multiplexer's binary (tmux, screen) */
	LG_INODE_BUS_SOCKET = 11,    /* a D-Bus bus: open, but its calls to systemd and logind are read */
	LG_INODE_HELD_OPEN = 12,     /* a file a protected process holds open: no member locks it */
	LG_INODE_ENGINE_SOCKET = 13, /* a container engine's API socket: open, but requests that change a protected container are refused */
};

/* A container as a member's request to its engine's API names it: its
 * name, its full id, or a prefix of the id (the engines take any prefix
 * that is unique), NUL-padded; a longer name is cut to its first
 * LG_ENGINE_REF_LEN bytes (two such names are one container here). Two
 * keys no name can be: "#", there while any container is guarded (a
 * request that cannot be read is refused then), and "*", every
 * container, when the map cannot hold all refs of the guarded ones. */
#define LG_ENGINE_REF_LEN 64
struct lg_engine_ref {
	char ref[LG_ENGINE_REF_LEN];
};

/* What a LG_HOOK_ENGINE_API refusal asked of the container
 * (lg_event.detail). */
enum lg_engine_action {
	LG_ENGINE_REMOVE = 1,  /* DELETE /containers/<ref> */
	LG_ENGINE_KILL = 2,
	LG_ENGINE_STOP = 3,
	LG_ENGINE_RESTART = 4,
	LG_ENGINE_PAUSE = 5,
	LG_ENGINE_UPDATE = 6,
	LG_ENGINE_EXEC = 7,    /* a command run in it, outside every session */
	LG_ENGINE_ATTACH = 8,  /* its standard input, its terminal */
	LG_ENGINE_ARCHIVE = 9, /* PUT .../archive: files copied into it */
	LG_ENGINE_RENAME = 10, /* the name its protection may follow */
	LG_ENGINE_OTHER = 11,  /* any other POST (checkpoint, mount, ...) */
};

/* Levels a protected-tree check walks up from the object (its own dentry
 * first) towards the filesystem's root. A member's change deeper than
 * this below the root is refused while any tree is protected: the walk
 * cannot tell whether a protected directory is above it. */
#define LG_TREE_DEPTH 64
/* Names in a [[protect]] path's `except` list are compared by hash, read
 * into a buffer of this size: up to LG_EXCEPT_NAME_LEN - 2 bytes each. */
#define LG_EXCEPT_NAME_LEN 32
#define LG_MAX_PATH_EXCEPTS 1024
/* [[protect]] tables whose `except` lists the kernel can tell apart: one
 * bit each in lg_path_except. */
#define LG_MAX_EXCEPT_SOURCES 64

/* Value of lg_path_excepts, keyed by the FNV-1a hash of a name (exact) or
 * of a suffix from its last '.' on ("*.pyc" is ".pyc"): bit s-1 set when
 * [[protect]] number s lists it. */
struct lg_path_except {
	__u64 exact_sources;
	__u64 suffix_sources;
};

/* What a LG_HOOK_PATH refusal tried (lg_event.detail). */
enum lg_path_op {
	LG_PATH_WRITE = 1,   /* opened for writing, or written through an fd */
	LG_PATH_CREATE = 2,  /* a file created (or a device node) */
	LG_PATH_UNLINK = 3,
	LG_PATH_RENAME = 4,  /* renamed in, out, or within */
	LG_PATH_LINK = 5,    /* a hard link made to it or in it */
	LG_PATH_SYMLINK = 6,
	LG_PATH_MKDIR = 7,
	LG_PATH_RMDIR = 8,
	LG_PATH_SETATTR = 9, /* mode, owner, times or size */
	LG_PATH_XATTR = 10,  /* an extended attribute set or removed */
	LG_PATH_LOCK = 11,   /* a lock or lease taken (flock, fcntl, OFD, F_SETLEASE) */
};
/* lg_event.detail bit: the walk reached LG_TREE_DEPTH before the root. */
#define LG_PATH_TOO_DEEP 0x1000
/* lg_event.detail bit of a LG_HOOK_MAPPED refusal (with an lg_path_op):
 * the file has more mappings than the kernel side reads, so a protected
 * process may be among them. */
#define LG_MAPPED_DETAIL_WIDELY 0x2000
/* ... or: a lock on a file a protected process holds open (the watcher
 * reads /proc/<pid>/fd), not one it maps. */
#define LG_MAPPED_DETAIL_HELD_OPEN 0x8000

/* Bits of lg_exec_words values: what an argument of a service-control
 * command means to the exec guard. */
enum lg_word_flags {
	LG_WORD_MUTATING_VERB = 1u << 0, /* systemctl restart, stop, kill, ... */
	LG_WORD_PROTECTED_UNIT = 1u << 1, /* a protected unit's name */
	LG_WORD_S6_SERVICE = 1u << 2,    /* a protected s6 service directory */
	LG_WORD_S6_SCANDIR = 1u << 3,    /* the scan directory holding one */
	/* systemctl verbs that stop or restart every unit (isolate, poweroff,
	 * exit, ...): refused whatever units they name. */
	LG_WORD_GLOBAL_VERB = 1u << 4,
};

/* FNV-1a, 64-bit: the exec guard compares arguments by this hash, which
 * the kernel computes as it copies them and the loader for policy words. */
#define LG_FNV_OFFSET 0xcbf29ce484222325ULL
#define LG_FNV_PRIME 0x100000001b3ULL

/* lg_protected.flags */
enum lg_protect_flags {
	/* Every process this one forks is protected from its first
	 * instruction: a supervisor's restarts leave no gap. */
	LG_PROTECT_INHERIT = 1u << 0,
	/* Set on a mark the kernel created at fork from an inheriting parent. */
	LG_PROTECT_INHERITED = 1u << 1,
	/* The parent of a protected process that asked to be signalled when
	 * its parent dies (PR_SET_PDEATHSIG): killing the parent kills it. */
	LG_PROTECT_KEEPER = 1u << 2,
};

/* What a LG_HOOK_MOUNT refusal tried (lg_event.detail). */
enum lg_mount_kind {
	LG_MOUNT_MOUNT = 1,      /* mount(2), including bind mounts and remounts */
	LG_MOUNT_UMOUNT = 2,     /* umount(2), lazy or not */
	LG_MOUNT_MOVE = 3,       /* move_mount(2) */
	LG_MOUNT_PIVOT_ROOT = 4, /* pivot_root(2) */
	LG_MOUNT_CGROUP_V1 = 5,  /* a cgroup v1 hierarchy, in any namespace */
};

/* lg_event.detail of a refused write to a guarded file, when the file was
 * opened earlier (before the session, or by someone else) and the write
 * itself was refused. */
#define LG_DETAIL_OPEN_FD 0x100
/* ... and with it: the write was a shared mapping for writing of that
 * file (mmap, mprotect), through which later writes pass no hook. */
#define LG_DETAIL_SHARED_MAP 0x4000
/* lg_event.detail of a LG_HOOK_REALTIME refusal of sched_setattr(), whose
 * policy the hook cannot read (otherwise the policy asked for). */
#define LG_DETAIL_SCHED_SETATTR 0xfffffffeu
/* lg_event.detail of a control FIFO renamed, linked or removed. */
#define LG_DETAIL_RENAME 0x400
/* lg_event.detail of a LG_HOOK_NETWORK refusal: the rtnetlink message type
 * (RTM_NEWLINK, ...), this for any netfilter request, or LG_NETWORK_ADMIN
 * for any other act needing CAP_NET_ADMIN there (an interface ioctl,
 * iptables' setsockopt, a /sys/class/net file, a generic netlink family). */
#define LG_NETLINK_NETFILTER 0x10000
#define LG_NETWORK_ADMIN 0x20000
/* ... or a sock_diag SOCK_DESTROY request (`ss -K`). */
#define LG_NETLINK_SOCK_DESTROY 0x30000
/* Messages of one rtnetlink send the network door reads; a send with more
 * is refused unread. */
#define LG_NETLINK_MAX_MSGS 16
/* lg_event.detail of a LG_HOOK_SIGIO refusal: F_SETOWN found its map full. */
#define LG_DETAIL_MAP_FULL 0x200

enum lg_verdict {
	LG_VERDICT_DENIED = 0,
	LG_VERDICT_AUDITED = 1,
	/* Not a refusal: the OOM killer took a member (or, which its order
	 * exists to prevent, a protected process); LG_HOOK_OOM only. */
	LG_VERDICT_KILLED = 2,
};

/* Indexes into the counters array map. */
enum lg_counter {
	LG_COUNTER_EVENTS_LOST = 0,
	/* A supervisor's child the kernel could not mark (allocation failed). */
	LG_COUNTER_INHERIT_FAILED = 1,
	/* A session member's child the kernel could not mark. */
	LG_COUNTER_MEMBER_MARK_FAILED = 2,
	/* A member ran a service-control binary whose arguments the kernel
	 * had not copied; the exec was refused (fail closed). */
	LG_COUNTER_ARGV_MISSING = 3,
	/* An exec that starts a session found the sessions map full (or its
	 * key taken) and joined the shared overflow session instead. */
	LG_COUNTER_SESSION_OVERFLOW = 4,
	/* An exec that starts a session could not be marked a member; it was
	 * killed before its first instruction rather than run unguarded. */
	LG_COUNTER_SESSION_MARK_FAILED = 5,
	/* A member's F_SETOWN found the file-owner map full; it was refused. */
	LG_COUNTER_FOWNERS_FULL = 6,
	/* A protected process's number could not be recorded (map full):
	 * members' writes to any /proc/<pid>/oom_* file are refused. */
	LG_COUNTER_PROTECTED_PIDS_FULL = 7,
	/* Refusals, one counter per door: LG_COUNTER_DENIED + enum lg_hook. */
	LG_COUNTER_DENIED = 8,
	LG_COUNTER_COUNT = LG_COUNTER_DENIED + LG_HOOK_COUNT,
};

/* Value of the task-local-storage map that marks a protected process. The
 * mark lives on the task itself, so it dies with the process: a later
 * process that reuses the PID carries no mark. */
/* lg_protected.source of liveguard's own policy watcher. */
#define LG_SOURCE_LIVEGUARD 0xffffffffu
#define LG_SOURCE_UNKNOWN 0xfffffffeu

struct lg_protected {
	__u64 since_boot_ns; /* when protection was added, CLOCK_BOOTTIME */
	__u32 source;        /* which policy [[protect]] asked (1-based); 0 = command line */
	__u32 flags;         /* enum lg_protect_flags */
};

/* Value of the protected-cgroups hash map, keyed by cgroup v2 id: every
 * process in that cgroup or below it is protected, including processes
 * that join or are started there later. */
struct lg_cgroup_protection {
	__u64 since_boot_ns;
	__u32 source;
	__u32 _pad;
};

/* A one-hash Bloom filter over the protected cgroups' ids, the single
 * value of an array map: a kill on the whole machine walks the target's
 * cgroup ancestors, and testing a bit per level is a load where asking the
 * hash map is a hashed lookup. A set bit only sends the walk to the map, so
 * a collision costs a lookup and never protects anything; every protected
 * cgroup's bit is set before it counts as protected. */
#define LG_CGROUP_FILTER_BITS 16384
struct lg_cgroup_filter {
	__u64 words[LG_CGROUP_FILTER_BITS / 64];
};

static inline __u32 lg_cgroup_filter_word(__u64 cgroup_id)
{
	return (__u32)((cgroup_id / 64) % (LG_CGROUP_FILTER_BITS / 64));
}

static inline __u64 lg_cgroup_filter_bit(__u64 cgroup_id)
{
	return 1ull << (cgroup_id % 64);
}

/* Indexes into the settings array map. Each entry counts the entries of
 * one map, so the hot path can skip walks that cannot match; each has a
 * single writer-side recount, so concurrent updaters never lose one. (The
 * load mode is not here: it is read-only data the loader sets before the
 * verifier sees the programs.) */
enum lg_setting {
	LG_SETTING_PROTECTED_CGROUPS = 0,
	LG_SETTING_SESSIONS = 1,
	/* Names in lg_auto_names: whether any exec can start a session. */
	LG_SETTING_AUTO_NAMES = 2,
	/* Protected trees and files in lg_guarded_inodes: whether a member's
	 * file change needs the walk at all. */
	LG_SETTING_PROTECTED_PATHS = 3,
	LG_SETTING_COUNT = 4,
};

struct lg_settings {
	__u32 count;
	__u32 _pad;
};

/* Task-local mark of a session member's descendants: membership follows
 * the process tree, so leaving the session cgroup (or being moved out of
 * it) does not end it. Valid only while its session is still tagged. */
struct lg_member {
	__u64 session_cgroup_id;
	__u64 since_boot_ns;
};

/* Key of the guarded-inodes map: an inode as the kernel names it, the
 * superblock's dev_t (MAJOR << 20 | MINOR) and the inode number. */
struct lg_inode_key {
	__u64 dev;
	__u64 ino;
};

/* Key of the protected-ports map: a port in one network namespace (its
 * inode number), for one protocol (IPPROTO_TCP 6, IPPROTO_UDP 17). */
struct lg_port_key {
	__u32 net_ns;
	__u16 port;
	__u16 proto;
};

struct lg_guarded_inode {
	__u32 kind;   /* enum lg_inode_kind */
	__u32 source; /* policy [[protect]] that asked (1-based); 0 = liveguard itself */
};

/* The arguments of a member's last execve, as hashes, copied at syscall
 * entry (the new argv is out of BPF's reach once the exec is checked). */
struct lg_exec_args {
	/* arguments copied, argv[0] included; LG_EXEC_MAX_ARGS + 1 when there
	 * were more than were copied */
	__u32 argc;
	__u32 glob_mask; /* bit i: argument i holds a glob character */
	__u64 hash[LG_EXEC_MAX_ARGS];
};

/* Keys of the sessions map with this bit set name a session of a process
 * and its descendants rather than a tagged cgroup (cgroup ids never reach
 * bit 63). The kernel starts one at the exec of a test runner; the watcher
 * starts one for an unprivileged `run`. */
#define LG_SESSION_PROCESS_BIT (1ULL << 63)
/* The shared session an exec joins when its own cannot be recorded; the
 * loader inserts it whenever the policy starts sessions automatically, so
 * it never needs a free slot. */
#define LG_SESSION_OVERFLOW LG_SESSION_PROCESS_BIT

enum lg_session_flags {
	LG_SESSION_AUTO = 1u << 0,     /* started by the kernel at a test runner's exec */
	LG_SESSION_RUN = 1u << 1,      /* started by the watcher for an unprivileged `run` */
	LG_SESSION_OVERFLOW_F = 1u << 2, /* the shared overflow session */
};

/* A session's live tasks (lg_session_tasks, keyed like lg_sessions):
 * those forked inside it less those that exited (never below 0), so its
 * root and a process that joined by cgroup are not counted. Entries of
 * ended sessions are swept by the watcher. */
struct lg_session_tasks {
	__s64 live;
};

/* The limits every session has (lg_session_limits, one entry); 0 = none. */
struct lg_session_limits {
	__u32 max_tasks; /* [sessions] max_tasks */
	__u32 _pad;
};

/* A filesystem a protected service keeps its files on (lg_fs_space, keyed
 * by device as the kernel side computes it: a btrfs subvolume's own), as
 * the watcher last measured it. */
struct lg_fs_space {
	/* Bytes an unprivileged writer may still use: statvfs f_bavail at the
	 * watcher's measurement, less the members' writes since (the BPF side
	 * takes each off as it is made). */
	__u64 avail;
	__u64 reserve; /* [sessions] fs_reserve, in bytes */
	__u32 low;     /* avail at or below reserve: members' writes there fail (ENOSPC) */
	__u32 _pad;
};

/* What a LG_HOOK_TASKS refusal hit (lg_event.detail). */
enum lg_tasks_detail {
	LG_TASKS_LIMIT = 1,    /* the session's max_tasks */
	LG_TASKS_MAP_FULL = 2, /* lg_session_tasks had no room for the session */
};

/* lg_event.detail of a LG_HOOK_OOM event. A refused write carries the
 * file doors' LG_DETAIL_OPEN_FD bit when made through an open fd. */
enum lg_oom_detail {
	LG_OOM_SCORE_WRITE = 1 << 9,      /* a member wrote an oom_score_adj or oom_adj */
	LG_OOM_MEMBER_KILLED = 2 << 9,    /* the OOM killer took a session member */
	LG_OOM_PROTECTED_KILLED = 3 << 9, /* the OOM killer took a protected process */
};
#define LG_OOM_KIND_MASK (3u << 9)

/* lg_event.detail of a LG_HOOK_USER_COUNTS refusal: which of the user's
 * counts it would have taken into the reserve. object_id is the limit. */
enum lg_user_count_detail {
	LG_USER_COUNT_INOTIFY_INSTANCES = 1, /* fs.inotify.max_user_instances */
	LG_USER_COUNT_INOTIFY_WATCHES = 2,   /* fs.inotify.max_user_watches */
	LG_USER_COUNT_FANOTIFY_GROUPS = 3,   /* fs.fanotify.max_user_groups */
	LG_USER_COUNT_FANOTIFY_MARKS = 4,    /* fs.fanotify.max_user_marks */
};

/* Value of the sessions hash map, keyed by cgroup v2 id, or by a process
 * session's key (LG_SESSION_PROCESS_BIT). */
struct lg_session {
	/* CLOCK_REALTIME for tagged cgroups and watcher-started sessions;
	 * CLOCK_BOOTTIME for sessions the kernel started (LG_SESSION_AUTO). */
	__u64 since_ns;
	__u32 flags;    /* enum lg_session_flags */
	__u32 root_pid; /* a process session's first process (thread-group id) */
};

/* What lg_auto_names says of a name (an exec's file name with any
 * version suffix taken off: python3.11 and pytest-3 are python, pytest). */
enum lg_auto_flags {
	LG_AUTO_PROGRAM = 1u << 0,     /* the program itself starts a session */
	LG_AUTO_INTERPRETER = 1u << 1, /* an interpreter some "-m MODULE" entry names */
	LG_AUTO_MODULE = 1u << 2,      /* key = hash(name, NUL, module) */
};
/* Arguments of an interpreter looked at for "-m MODULE". */
#define LG_AUTO_MAX_ARGS 8
#define LG_AUTO_NAME_LEN 64
#define LG_MAX_AUTO_NAMES 256

struct lg_ancestor {
	__u32 pid;
	__u32 _pad;
	char comm[LG_COMM_LEN];
};

/* One ring-buffer record per refusal (or, in audit-only mode, per act that
 * enforcement would have refused). */
struct lg_event {
	__u64 boot_ns;           /* bpf_ktime_get_boot_ns() at the refusal */
	__u64 session_cgroup_id; /* the tagged cgroup that made the sender a member */
	__u32 verdict;           /* enum lg_verdict */
	__u32 hook;              /* enum lg_hook */
	__u32 pid;               /* sender's thread-group id */
	__u32 tid;
	__u32 target_pid;
	__u32 target_tid;
	__s32 signal;            /* the signal, or 0 for doors that send none */
	__u32 detail;            /* per door: inode kind, ptrace mode, bpf command */
	char comm[LG_COMM_LEN];
	/* The target's name; for file and exec doors, the file's name. */
	char target_comm[LG_COMM_LEN];
	__u64 object_id;         /* inode number or cgroup id the door guards, or 0 */
	/* What protects the target: the policy's [[protect]] number (1-based),
	 * 0 for the command line, LG_SOURCE_LIVEGUARD; LG_SOURCE_UNKNOWN for
	 * doors whose target is not one process. */
	__u32 target_source;
	__u32 chain_len;         /* entries of chain[] filled */
	__u32 args_len;          /* bytes of args[] filled */
	/* The culprit's thread-group id in its own PID namespace (a test run
	 * inside a container), or 0 in the machine's. */
	__u32 ns_pid;
	struct lg_ancestor chain[LG_CHAIN_LEN];
	char args[LG_ARGS_LEN];
	char test[LG_TEST_LEN];  /* NUL-terminated; empty when not known */
};

/* An executable file as the kernel knows it (the inode a process's
 * mm->exe_file has): what lg_environ_at is keyed by. */
struct lg_exe_key {
	__u64 ino;
	__u64 size;
};

/* Where a process running that executable keeps libc's `environ`
 * pointer: this many bytes from its mm->start_code, the lowest address of
 * its executable segments (a copy relocation in the executable, which
 * every dynamically linked program that names `environ` has). */
struct lg_environ_at {
	__s64 from_start_code;
};

struct lg_test_text {
	char text[LG_TEST_LEN];
};

LG_STATIC_ASSERT(sizeof(struct lg_protected) == 16, "lg_protected layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_protected, source) == 8, "lg_protected layout");
LG_STATIC_ASSERT(sizeof(struct lg_session) == 16, "lg_session layout");
LG_STATIC_ASSERT(sizeof(struct lg_session_tasks) == 8, "lg_session_tasks layout");
LG_STATIC_ASSERT(sizeof(struct lg_session_limits) == 8, "lg_session_limits layout");
LG_STATIC_ASSERT(sizeof(struct lg_fs_space) == 24, "lg_fs_space layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_fs_space, low) == 16, "lg_fs_space layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_session, root_pid) == 12, "lg_session layout");
LG_STATIC_ASSERT(sizeof(struct lg_cgroup_protection) == 16, "lg_cgroup_protection layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_cgroup_protection, source) == 8, "lg_cgroup_protection layout");
LG_STATIC_ASSERT(sizeof(struct lg_settings) == 8, "lg_settings layout");
LG_STATIC_ASSERT(sizeof(struct lg_cgroup_filter) == LG_CGROUP_FILTER_BITS / 8, "lg_cgroup_filter layout");
LG_STATIC_ASSERT((LG_CGROUP_FILTER_BITS / 64 & (LG_CGROUP_FILTER_BITS / 64 - 1)) == 0,
		 "the BPF side indexes filter words modulo a power of two");
LG_STATIC_ASSERT(sizeof(struct lg_member) == 16, "lg_member layout");
LG_STATIC_ASSERT(sizeof(struct lg_inode_key) == 16, "lg_inode_key layout");
LG_STATIC_ASSERT(sizeof(struct lg_guarded_inode) == 8, "lg_guarded_inode layout");
LG_STATIC_ASSERT(sizeof(struct lg_port_key) == 8, "lg_port_key layout");
LG_STATIC_ASSERT(sizeof(struct lg_engine_ref) == LG_ENGINE_REF_LEN, "lg_engine_ref layout");
LG_STATIC_ASSERT((LG_ENGINE_REF_LEN & (LG_ENGINE_REF_LEN - 1)) == 0, "the BPF side masks indexes with LG_ENGINE_REF_LEN - 1");
LG_STATIC_ASSERT(sizeof(struct lg_path_except) == 16, "lg_path_except layout");
LG_STATIC_ASSERT(sizeof(struct lg_exec_args) == 8 + 8 * LG_EXEC_MAX_ARGS, "lg_exec_args layout");
LG_STATIC_ASSERT(LG_EXEC_MAX_ARGS <= 32, "glob_mask has one bit per argument");
LG_STATIC_ASSERT((LG_EXEC_MAX_ARGS & (LG_EXEC_MAX_ARGS - 1)) == 0, "the BPF side masks indexes with LG_EXEC_MAX_ARGS - 1");
LG_STATIC_ASSERT(sizeof(struct lg_ancestor) == 24, "lg_ancestor layout");
LG_STATIC_ASSERT(sizeof(struct lg_event) == 104 + 24 * LG_CHAIN_LEN + LG_ARGS_LEN + LG_TEST_LEN, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, test) == 104 + 24 * LG_CHAIN_LEN + LG_ARGS_LEN, "lg_event layout");
LG_STATIC_ASSERT(sizeof(struct lg_exe_key) == 16, "lg_exe_key layout");
LG_STATIC_ASSERT(sizeof(struct lg_environ_at) == 8, "lg_environ_at layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, target_source) == 88, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, chain) == 104, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, ns_pid) == 100, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, detail) == 44, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, object_id) == 80, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, session_cgroup_id) == 8, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, verdict) == 16, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, target_pid) == 32, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, signal) == 40, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, comm) == 48, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, target_comm) == 64, "lg_event layout");

#endif
