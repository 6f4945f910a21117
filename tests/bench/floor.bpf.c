// SPDX-License-Identifier: GPL-2.0
/* The benchmark's floor: an empty program on every hook the guard attaches
 * to in enforcement mode. What it costs is the price of the BPF LSM and
 * trampoline machinery itself, which no program logic can go under; the
 * guard's cost over this floor is what liveguard's own checks add. The
 * benchmark refuses to run when this list and the guard's enforcing
 * programs attach to different places. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/task_kill")
int BPF_PROG(floor_task_kill)
{
	return 0;
}

SEC("lsm/task_alloc")
int BPF_PROG(floor_task_alloc)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_sched_process_fork)
{
	return 0;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(floor_cgroup_attach_task)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(floor_sched_process_exec)
{
	return 0;
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(floor_ptrace_access_check)
{
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(floor_file_open)
{
	return 0;
}

SEC("lsm/file_set_fowner")
int BPF_PROG(floor_file_set_fowner)
{
	return 0;
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(floor_file_send_sigiotask)
{
	return 0;
}

SEC("lsm/socket_listen")
int BPF_PROG(floor_socket_listen)
{
	return 0;
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(floor_socket_sendmsg)
{
	return 0;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(floor_unix_stream_connect)
{
	return 0;
}

SEC("fentry/__x64_sys_execve")
int BPF_PROG(floor_execve)
{
	return 0;
}

SEC("fentry/__x64_sys_execveat")
int BPF_PROG(floor_execveat)
{
	return 0;
}

SEC("fentry/mark_oom_victim")
int BPF_PROG(floor_oom_victim)
{
	return 0;
}

SEC("fmod_ret/security_file_alloc")
int BPF_PROG(floor_file_alloc)
{
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(floor_bprm_check_security)
{
	return 0;
}

SEC("lsm/bpf_map")
int BPF_PROG(floor_bpf_map)
{
	return 0;
}

SEC("lsm/bpf_prog")
int BPF_PROG(floor_bpf_prog)
{
	return 0;
}

SEC("lsm/bpf")
int BPF_PROG(floor_bpf)
{
	return 0;
}

SEC("lsm/inode_unlink")
int BPF_PROG(floor_inode_unlink)
{
	return 0;
}

SEC("lsm/inode_rmdir")
int BPF_PROG(floor_inode_rmdir)
{
	return 0;
}

SEC("lsm/inode_create")
int BPF_PROG(floor_inode_create)
{
	return 0;
}

SEC("lsm/inode_rename")
int BPF_PROG(floor_inode_rename)
{
	return 0;
}

SEC("lsm/sb_umount")
int BPF_PROG(floor_sb_umount)
{
	return 0;
}

SEC("lsm/sb_mount")
int BPF_PROG(floor_sb_mount)
{
	return 0;
}

SEC("lsm/move_mount")
int BPF_PROG(floor_move_mount)
{
	return 0;
}

SEC("lsm/task_setrlimit")
int BPF_PROG(floor_task_setrlimit)
{
	return 0;
}

SEC("lsm/task_setnice")
int BPF_PROG(floor_task_setnice)
{
	return 0;
}

SEC("lsm/task_setscheduler")
int BPF_PROG(floor_task_setscheduler)
{
	return 0;
}

SEC("lsm/task_setioprio")
int BPF_PROG(floor_task_setioprio)
{
	return 0;
}

SEC("lsm/file_permission")
int BPF_PROG(floor_file_permission)
{
	return 0;
}

SEC("lsm/file_fcntl")
int BPF_PROG(floor_file_fcntl)
{
	return 0;
}

SEC("lsm/file_ioctl")
int BPF_PROG(floor_file_ioctl)
{
	return 0;
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(floor_file_ioctl_compat)
{
	return 0;
}

SEC("lsm/file_free_security")
int BPF_PROG(floor_file_free_security)
{
	return 0;
}

SEC("lsm/sk_free_security")
int BPF_PROG(floor_sk_free_security)
{
	return 0;
}

SEC("lsm/mmap_file")
int BPF_PROG(floor_mmap_file)
{
	return 0;
}

SEC("lsm/file_mprotect")
int BPF_PROG(floor_file_mprotect)
{
	return 0;
}

SEC("lsm/task_prctl")
int BPF_PROG(floor_task_prctl)
{
	return 0;
}

SEC("lsm/inode_link")
int BPF_PROG(floor_inode_link)
{
	return 0;
}

SEC("lsm/inode_symlink")
int BPF_PROG(floor_inode_symlink)
{
	return 0;
}

SEC("lsm/inode_mkdir")
int BPF_PROG(floor_inode_mkdir)
{
	return 0;
}

SEC("lsm/inode_mknod")
int BPF_PROG(floor_inode_mknod)
{
	return 0;
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(floor_sb_pivotroot)
{
	return 0;
}

SEC("lsm/perf_event_alloc")
int BPF_PROG(floor_perf_event_alloc)
{
	return 0;
}

SEC("lsm/path_notify")
int BPF_PROG(floor_path_notify)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(floor_sched_process_exit)
{
	return 0;
}

SEC("lsm/file_receive")
int BPF_PROG(floor_file_receive)
{
	return 0;
}

SEC("lsm/fs_context_parse_param")
int BPF_PROG(floor_fs_context_parse_param)
{
	return 0;
}

SEC("lsm/inode_setattr")
int BPF_PROG(floor_inode_setattr)
{
	return 0;
}

SEC("lsm/inode_setxattr")
int BPF_PROG(floor_inode_setxattr)
{
	return 0;
}

SEC("lsm/inode_removexattr")
int BPF_PROG(floor_inode_removexattr)
{
	return 0;
}

SEC("lsm/inode_set_acl")
int BPF_PROG(floor_inode_set_acl)
{
	return 0;
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(floor_inode_remove_acl)
{
	return 0;
}

SEC("lsm/capable")
int BPF_PROG(floor_capable)
{
	return 0;
}

SEC("lsm/file_lock")
int BPF_PROG(floor_file_lock)
{
	return 0;
}

SEC("lsm/netlink_send")
int BPF_PROG(floor_netlink_send)
{
	return 0;
}

SEC("lsm/socket_bind")
int BPF_PROG(floor_socket_bind)
{
	return 0;
}
