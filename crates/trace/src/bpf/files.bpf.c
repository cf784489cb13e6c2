// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// How long one process's writes and syncs of one file take, from the kernel's syscall
// tracepoints: pwrite64 and fdatasync/fsync on file descriptor `file_fd` of process
// `file_tgid` (both set by the loader), each call timed from its syscall's entry to its exit
// on the calling thread. What MariaDB's redo log costs its commits (performance_schema has no
// instrument on the redo log in 10.8 and later), as pg_stat_wal's write and sync times are
// PostgreSQL's. Counters are per CPU (the loader sums them); a thread's call in flight is
// one entry of `inflight`, keyed by the thread, deleted when the call returns.

typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_ANY 0

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;

// Set by the loader before loading.
volatile const __u32 file_tgid = 0;
volatile const __u32 file_fd = 0;

// A syscall tracepoint's record: the common header (8 bytes), the syscall number (padded to
// 8), then the arguments (entry) or the return value (exit).
struct enter_ctx {
	__u64 common;
	long nr;
	__u64 args[6];
};

struct exit_ctx {
	__u64 common;
	long nr;
	long ret;
};

#define WRITE 0
#define SYNC 1

struct totals {
	__u64 calls;
	__u64 ns;
	__u64 failed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct totals);
} file_totals SEC(".maps");

struct inflight {
	__u64 at;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight SEC(".maps");

static int enter(struct enter_ctx *ctx, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != file_tgid || ctx->args[0] != file_fd)
		return 0;
	__u32 tid = (__u32)id;
	struct inflight f = {.at = bpf_ktime_get_ns(), .kind = kind};
	bpf_map_update_elem(&inflight, &tid, &f, BPF_ANY);
	return 0;
}

static int leave(struct exit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != file_tgid)
		return 0;
	__u32 tid = (__u32)id;
	struct inflight *f = bpf_map_lookup_elem(&inflight, &tid);
	if (!f)
		return 0;
	__u64 ns = bpf_ktime_get_ns() - f->at;
	__u32 kind = f->kind;
	bpf_map_delete_elem(&inflight, &tid);
	struct totals *t = bpf_map_lookup_elem(&file_totals, &kind);
	if (!t)
		return 0;
	t->calls += 1;
	t->ns += ns;
	if (ctx->ret < 0)
		t->failed += 1;
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_pwrite64")
int enter_pwrite(struct enter_ctx *ctx) { return enter(ctx, WRITE); }

SEC("tracepoint/syscalls/sys_exit_pwrite64")
int exit_pwrite(struct exit_ctx *ctx) { return leave(ctx); }

SEC("tracepoint/syscalls/sys_enter_fdatasync")
int enter_fdatasync(struct enter_ctx *ctx) { return enter(ctx, SYNC); }

SEC("tracepoint/syscalls/sys_exit_fdatasync")
int exit_fdatasync(struct exit_ctx *ctx) { return leave(ctx); }

SEC("tracepoint/syscalls/sys_enter_fsync")
int enter_fsync(struct enter_ctx *ctx) { return enter(ctx, SYNC); }

SEC("tracepoint/syscalls/sys_exit_fsync")
int exit_fsync(struct exit_ctx *ctx) { return leave(ctx); }

char LICENSE[] SEC("license") = "Dual MIT/GPL";
